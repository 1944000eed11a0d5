"""The encoders that run torch models: :class:`MeanPoolingEncoder` (a transformers backbone with masked mean
pooling, the raw-backbone baseline) and :class:`ModelEncoder` (a zoo model, or anything with ``encode``).

They live apart from :mod:`.base` so that ``import phrasezoo.encoders`` stays free of torch: the package imports this
module on first use (a similarity-only or static baseline never does).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm
from transformers import AutoModel, AutoTokenizer

from .base import (
    DEFAULT_BATCH_SIZE,
    MENTIONS,
    SIMILARITY,
    TOKENS,
    VECTORS,
    Encoder,
    model_digest,
    model_display_name,
    show_progress,
    span_mean,
    supported,
    weights_digest,
)
from .cpu_threads import ThreadTuner

logger = logging.getLogger(__name__)


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
        order = self._length_order(texts)
        bar = tqdm(total=len(texts), desc=desc, unit="text", disable=not show_progress(self.progress), leave=False)
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            yield idx, [texts[i] for i in idx]
            bar.update(len(idx))
        bar.close()

    def _encode(self, texts: list[str]) -> np.ndarray:
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


def _as_rows(vectors: Any) -> np.ndarray:
    if hasattr(vectors, "detach"):
        vectors = vectors.detach().float().cpu().numpy()
    return np.asarray(vectors, dtype=np.float32)


def folder_encoder(path: Path, name: str | None, batch_size: int, progress: bool, device: str | None) -> Encoder:
    """An exported zoo folder through ``trust_remote_code``; a plain transformers folder falls back to mean pooling."""
    model = AutoModel.from_pretrained(str(path), trust_remote_code=True)
    if device:
        model.to(device)
    if not callable(getattr(model, "encode", None)):
        logger.warning("%s has no encode(); evaluating it as a mean-pooling baseline (baseline:%s).", path, path)
        return MeanPoolingEncoder(str(path), name=name, batch_size=batch_size, device=device, progress=progress)
    model.eval()
    return ModelEncoder(
        model, name=name or path.name, revision=weights_digest(path), batch_size=batch_size, progress=progress
    )
