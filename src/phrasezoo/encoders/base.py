"""The one interface to anything that embeds, with a per-run string cache (used by evaluation, applications, data).

Every model, baseline or zoo export, is wrapped in an :class:`Encoder`. Tasks only talk to that interface:

* ``encode(texts)`` -> L2-normalised float32 rows; each unique string is encoded once per run (the cache is shared
  by all tasks, and only the strings not yet cached are sent to the model, in one call);
* ``encode_tokens(texts)`` (optional) -> contextual token vectors of one forward pass plus character offsets, for
  span pooling;
* ``encode_mentions(items)`` (optional) -> vectors of mentions in context (sentence, character span);
* ``similarity`` / ``paired_similarity`` / ``nearest`` -> scores; by default dot products of encoded rows, so a
  similarity-only baseline (character n-gram Jaccard) overrides them and still runs the tasks that need only scores.

Which optional parts an encoder has is listed in :attr:`Encoder.capabilities`; tasks declare what they need and the
harness skips (with a note) the tasks an encoder cannot run.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .cpu_threads import ThreadTuner

logger = logging.getLogger(__name__)

#: capability names that tasks may require
VECTORS = "vectors"  # encode() returns embedding rows
SIMILARITY = "similarity"  # similarity()/paired_similarity()/nearest() work
TOKENS = "tokens"  # encode_tokens() works
MENTIONS = "mentions"  # encode_mentions() works

DEFAULT_BATCH_SIZE = 128


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as contiguous float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, 1e-12), dtype=np.float32)


def show_progress(progress: bool) -> bool:
    """Progress bars are on unless the caller said no or ``PHRASEZOO_NO_PROGRESS`` is set (tests, CI logs)."""
    return bool(progress) and not os.environ.get("PHRASEZOO_NO_PROGRESS")


class Encoder:
    """Base wrapper: string cache, default (dot-product) similarity, faiss nearest-neighbour search.

    Subclasses implement :meth:`_encode` (and optionally :meth:`_encode_tokens`, :meth:`_encode_mentions`) and set
    :attr:`capabilities`.
    """

    capabilities: frozenset[str] = frozenset({VECTORS, SIMILARITY})

    def __init__(self, name: str, revision: str | None = None, progress: bool = True) -> None:
        self.name = name
        self.revision = revision
        self.progress = progress
        self._cache: dict[str, np.ndarray] = {}
        self._token_cache: dict[str, dict[str, np.ndarray]] = {}
        self._mention_cache: dict[tuple[str, int, int], np.ndarray] = {}
        self.encoded_count = 0  # strings actually sent to the model (the cache makes this <= strings asked for)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, revision={self.revision!r})"

    # ------------------------------------------------------------------------------------------- subclass hooks
    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError(f"{self.name} produces no vectors (similarity only).")

    def _encode_tokens(self, texts: list[str]) -> list[dict[str, np.ndarray]]:
        raise NotImplementedError(f"{self.name} has no encode_tokens().")

    def _encode_mentions(self, items: list[tuple[str, tuple[int, int]]]) -> np.ndarray:
        raise NotImplementedError(f"{self.name} has no encode_mentions().")

    # ------------------------------------------------------------------------------------------------ public API
    def encode(self, texts: Sequence[str], cache: bool = True) -> np.ndarray:
        """L2-normalised float32 rows for ``texts``; strings seen before in this run come from the cache.

        ``cache=False`` embeds the strings not yet cached without keeping them: for a caller that keeps the rows
        itself (a matcher's million-row reference table), where the cache would hold a second copy of every row.
        """
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh: dict[str, np.ndarray] = {}
        if missing:
            vectors = l2_normalize(self._encode(missing))
            if vectors.shape[0] != len(missing):
                raise RuntimeError(f"{self.name} returned {vectors.shape[0]} vectors for {len(missing)} texts.")
            fresh = dict(zip(missing, vectors))
            if cache:
                self._cache.update(fresh)
            self.encoded_count += len(missing)
        if not texts:
            dim = next(iter(self._cache.values())).shape[0] if self._cache else 0
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([fresh[t] if t in fresh else self._cache[t] for t in texts])

    def encode_tokens(self, texts: Sequence[str]) -> list[dict[str, np.ndarray]]:
        """Per text: ``{"embeddings": (n_tokens, d), "offsets": (n_tokens, 2)}`` from one forward pass.

        Special tokens are excluded; offsets are character spans into the text. Cached by string like :meth:`encode`.
        """
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._token_cache]
        if missing:
            outputs = self._encode_tokens(missing)
            for text, out in zip(missing, outputs):
                self._token_cache[text] = {
                    "embeddings": np.asarray(out["embeddings"], dtype=np.float32),
                    "offsets": np.asarray(out["offsets"], dtype=np.int64).reshape(-1, 2),
                }
        return [self._token_cache[t] for t in texts]

    def encode_mentions(self, items: Sequence[tuple[str, tuple[int, int]]]) -> np.ndarray:
        """L2-normalised vectors of mentions in context: ``(sentence, (char_start, char_end))`` per item.

        Cached by ``(sentence, start, end)`` like :meth:`encode`: several tasks on the same mentions encode them once.
        """
        keys = [(sentence, int(span[0]), int(span[1])) for sentence, span in items]
        missing = list(dict.fromkeys(k for k in keys if k not in self._mention_cache))
        if missing:
            vectors = l2_normalize(self._encode_mentions([(s, (a, b)) for s, a, b in missing]))
            if vectors.shape[0] != len(missing):
                raise RuntimeError(f"{self.name} returned {vectors.shape[0]} vectors for {len(missing)} mentions.")
            self._mention_cache.update(zip(missing, vectors))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._mention_cache[k] for k in keys])

    def similarity(self, queries: Sequence[str], keys: Sequence[str]) -> np.ndarray:
        """``(len(queries), len(keys))`` scores; cosine of encoded rows by default."""
        return self.encode(queries) @ self.encode(keys).T

    def paired_similarity(self, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        """Score of each pair ``(left[i], right[i])``, shape ``(n,)``."""
        if len(left) != len(right):
            raise ValueError(f"paired_similarity needs equal lengths, got {len(left)} and {len(right)}.")
        return np.einsum("ij,ij->i", self.encode(left), self.encode(right))

    def nearest(self, queries: Sequence[str], keys: Sequence[str]) -> np.ndarray:
        """Index into ``keys`` of the best-scoring key for each query (exact inner-product search with faiss)."""
        import faiss

        key_vectors = self.encode(keys)
        query_vectors = self.encode(queries)
        index = faiss.IndexFlatIP(key_vectors.shape[1])
        index.add(key_vectors)
        _, ids = index.search(query_vectors, 1)
        return ids[:, 0].astype(np.int64)


# ---------------------------------------------------------------------------------------------- HF mean pooling
class MeanPoolingEncoder(Encoder):
    """Plain ``transformers`` ``AutoModel`` + masked mean pooling over the last layer (the raw-backbone baseline).

    Inputs are sorted by token length and batched, run under ``torch.inference_mode``. The attention mask includes
    the special tokens ([CLS]/[SEP]), as in sentence-transformers' and E5's mean pooling. A mention in context
    (``encode_mentions``) is the mean of the last-layer states of the tokens overlapping its span, from one forward
    pass of the whole sentence (UCTopic's token-pooling span vector without its trained head).
    """

    capabilities = frozenset({VECTORS, SIMILARITY, TOKENS, MENTIONS})

    def __init__(
        self,
        model_name_or_path: str,
        name: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int | None = None,
        device: str | None = None,
        progress: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
        self.model = AutoModel.from_pretrained(model_name_or_path).eval()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device)
        limits = [512, getattr(self.model.config, "max_position_embeddings", 512) or 512]
        if (self.tokenizer.model_max_length or 0) < 100_000:
            limits.append(self.tokenizer.model_max_length)
        self.max_length = max_length or min(limits)
        self.batch_size = batch_size
        self.tuner = ThreadTuner()
        revision = getattr(self.model.config, "_commit_hash", None) or weights_digest(model_name_or_path)
        super().__init__(name or f"baseline:{model_name_or_path}", revision=revision, progress=progress)

    def _length_order(self, texts: list[str]) -> list[int]:
        lengths = [
            len(ids)
            for ids in self.tokenizer(texts, add_special_tokens=False, truncation=True, max_length=self.max_length)[
                "input_ids"
            ]
        ]
        return sorted(range(len(texts)), key=lambda i: -lengths[i])

    def _batches(self, texts: list[str], desc: str):
        """Yield ``(indices, batch_texts)`` in length order, with a progress bar over texts."""
        from tqdm.auto import tqdm

        order = self._length_order(texts)
        bar = tqdm(total=len(texts), desc=desc, unit="text", disable=not show_progress(self.progress), leave=False)
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            yield idx, [texts[i] for i in idx]
            bar.update(len(idx))
        bar.close()

    def _encode(self, texts: list[str]) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for idx, batch in self._batches(texts, f"encode {self.name}"):
                enc = self.tokenizer(
                    batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
                ).to(self.device)
                with self.tuner.batch(enc["input_ids"].numel()):
                    hidden = self.model(**enc).last_hidden_state
                    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[idx] = pooled.float().cpu().numpy()
        return out

    def _encode_tokens(self, texts: list[str]) -> list[dict[str, np.ndarray]]:
        import torch

        results: list[dict[str, np.ndarray] | None] = [None] * len(texts)
        with torch.inference_mode():
            for idx, batch in self._batches(texts, f"tokens {self.name}"):
                enc = self.tokenizer(
                    batch,
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                    return_offsets_mapping=True,
                    return_special_tokens_mask=True,
                )
                inputs = {
                    k: enc[k].to(self.device) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc
                }
                with self.tuner.batch(enc["input_ids"].numel()):
                    hidden = self.model(**inputs).last_hidden_state.float().cpu()
                for row, i in enumerate(idx):
                    keep = (enc["attention_mask"][row] == 1) & (enc["special_tokens_mask"][row] == 0)
                    results[i] = {
                        "embeddings": hidden[row][keep].numpy(),
                        "offsets": enc["offset_mapping"][row][keep].numpy(),
                    }
        return results  # type: ignore[return-value]

    def _encode_mentions(self, items: list[tuple[str, tuple[int, int]]]) -> np.ndarray:
        tokens = self.encode_tokens(list(dict.fromkeys(sentence for sentence, _ in items)))
        by_sentence = dict(zip(dict.fromkeys(sentence for sentence, _ in items), tokens))
        rows = []
        for i, (sentence, (start, end)) in enumerate(items):
            vector = span_mean(by_sentence[sentence]["embeddings"], by_sentence[sentence]["offsets"], start, end)
            if vector is None:
                raise ValueError(
                    f"Mention {i}: no token of {self.name} covers the span ({start}, {end}) of {sentence[:60]!r} "
                    f"(empty span, or beyond the first {self.max_length} tokens)."
                )
            rows.append(vector)
        return np.asarray(rows, dtype=np.float32)


def span_mean(embeddings: np.ndarray, offsets: np.ndarray, start: int, end: int) -> np.ndarray | None:
    """Mean of the token vectors whose character offsets overlap ``[start, end)``; ``None`` if no token does."""
    offsets = np.asarray(offsets).reshape(-1, 2)
    inside = (offsets[:, 0] < end) & (offsets[:, 1] > start) & (offsets[:, 1] > offsets[:, 0])
    if not inside.any():
        return None
    return np.asarray(embeddings)[inside].mean(axis=0)


# ----------------------------------------------------------------------------------------------- zoo models
class ModelEncoder(Encoder):
    """A zoo model (or anything with ``encode(texts, batch_size=..., normalize=..., ...)``), e.g. an exported folder.

    ``encode_tokens`` / ``encode_mentions`` are used when the model has them (detected with ``hasattr``).
    """

    CHUNK_BATCHES = 8  # batches per model.encode call: long enough to batch well, short enough to tune threads

    def __init__(
        self,
        model: Any,
        name: str | None = None,
        revision: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool = True,
    ) -> None:
        if not callable(getattr(model, "encode", None)):
            raise TypeError(f"{type(model).__name__} has no encode() method; it cannot be evaluated as a zoo model.")
        self.model = model
        self.batch_size = batch_size
        self.tuner = ThreadTuner()
        caps = {VECTORS, SIMILARITY}
        if callable(getattr(model, "encode_tokens", None)):
            caps.add(TOKENS)
        if callable(getattr(model, "encode_mentions", None)):
            caps.add(MENTIONS)
        self.capabilities = frozenset(caps)
        super().__init__(name or model_display_name(model), revision=revision or model_digest(model), progress=progress)

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Texts sorted by length go to ``model.encode`` in chunks of a few batches (own progress bar, thread tuning)."""
        from tqdm.auto import tqdm

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        chunk = self.batch_size * self.CHUNK_BATCHES
        out: np.ndarray | None = None
        bar = tqdm(total=len(texts), desc=f"encode {self.name}", unit="text", disable=not show_progress(self.progress))
        for start in range(0, len(texts), chunk):
            idx = order[start : start + chunk]
            batch = [texts[i] for i in idx]
            with self.tuner.batch(sum(len(t) for t in batch)):
                vectors = self._call_encode(batch)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[idx] = vectors
            bar.update(len(idx))
        bar.close()
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)

    def _call_encode(self, texts: list[str]) -> np.ndarray:
        kwargs = {
            "batch_size": self.batch_size,
            "normalize": True,
            "convert_to_numpy": True,
            "show_progress_bar": False,
        }
        return _as_rows(self.model.encode(texts, **supported(self.model.encode, kwargs)))

    def _encode_tokens(self, texts: list[str]) -> list[dict[str, np.ndarray]]:
        kwargs = {"batch_size": max(1, self.batch_size // 4)}
        return self.model.encode_tokens(texts, **supported(self.model.encode_tokens, kwargs))

    def _encode_mentions(self, items: list[tuple[str, tuple[int, int]]]) -> np.ndarray:
        kwargs = {"batch_size": self.batch_size, "show_progress_bar": show_progress(self.progress)}
        return _as_rows(self.model.encode_mentions(items, **supported(self.model.encode_mentions, kwargs)))


def supported(function: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``kwargs`` that ``function`` declares (all of them when it takes ``**kwargs``): zoo models take the whole
    keyword set of the model contract, a plain object with ``encode(texts)`` none of it."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins without a signature: call with the texts only
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in parameters}


def _as_rows(vectors: Any) -> np.ndarray:
    if hasattr(vectors, "detach"):
        vectors = vectors.detach().float().cpu().numpy()
    return np.asarray(vectors, dtype=np.float32)


# ------------------------------------------------------------------------------------------- revision helpers
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")


def weights_digest(folder: str | os.PathLike) -> str | None:
    """First 12 hex digits of the SHA-256 of a local model folder's weights file, or ``None`` (e.g. a Hub id)."""
    path = Path(folder)
    if not path.is_dir():
        return None
    for file_name in WEIGHT_FILES:
        file = path / file_name
        if file.is_file():
            digest = hashlib.sha256()
            with open(file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 22), b""):
                    digest.update(chunk)
            return f"sha256:{digest.hexdigest()[:12]}"
    return None


def model_digest(model: Any) -> str | None:
    """A revision for an in-memory model: the Hub commit if known, else a hash of its weights (torch modules)."""
    config = getattr(model, "config", None)
    commit = getattr(config, "_commit_hash", None)
    if commit:
        return str(commit)
    state_dict = getattr(model, "state_dict", None)
    if not callable(state_dict):
        return None
    try:
        digest = hashlib.sha256()
        for key, tensor in sorted(state_dict().items()):
            digest.update(key.encode())
            digest.update(tensor.detach().float().cpu().numpy().tobytes())
        return f"weights:{digest.hexdigest()[:12]}"
    except Exception:  # noqa: BLE001 - a revision is a nice-to-have, never a reason to fail
        return None


def model_display_name(model: Any) -> str:
    """``name_or_path`` of a transformers model, else its class name."""
    for candidate in (
        getattr(model, "name_or_path", None),
        getattr(getattr(model, "config", None), "_name_or_path", None),
    ):
        if candidate:
            return str(candidate)
    return type(model).__name__
