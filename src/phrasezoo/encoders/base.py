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
import inspect
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from phrasezoo.core.vectors import l2_normalize  # re-exported: encoders' callers import it from here

logger = logging.getLogger(__name__)

#: capability names that tasks may require
VECTORS = "vectors"  # encode() returns embedding rows
SIMILARITY = "similarity"  # similarity()/paired_similarity()/nearest() work
TOKENS = "tokens"  # encode_tokens() works
MENTIONS = "mentions"  # encode_mentions() works

DEFAULT_BATCH_SIZE = 128


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
        import faiss  # lazy: faiss, for nearest() only (similarity-only baselines never load it)

        key_vectors = self.encode(keys)
        query_vectors = self.encode(queries)
        index = faiss.IndexFlatIP(key_vectors.shape[1])
        index.add(key_vectors)
        _, ids = index.search(query_vectors, 1)
        return ids[:, 0].astype(np.int64)


def span_mean(embeddings: np.ndarray, offsets: np.ndarray, start: int, end: int) -> np.ndarray | None:
    """Mean of the token vectors whose character offsets overlap ``[start, end)``; ``None`` if no token does."""
    offsets = np.asarray(offsets).reshape(-1, 2)
    inside = (offsets[:, 0] < end) & (offsets[:, 1] > start) & (offsets[:, 1] > offsets[:, 0])
    if not inside.any():
        return None
    return np.asarray(embeddings)[inside].mean(axis=0)


def supported(function: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The ``kwargs`` that ``function`` declares (all of them when it takes ``**kwargs``): zoo models take the whole
    keyword set of the model contract, a plain object with ``encode(texts)`` none of it."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins without a signature: call with the texts only
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in parameters}


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
