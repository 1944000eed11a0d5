"""What scores a pair of strings: a zoo model / baseline encoder (vectors) or a rapidfuzz string scorer.

``model=`` accepts everything the zoo's encoder loader does (``baseline:minilm-l6``, an exported folder such as
``outputs/pearl-mini``, a recipe name, a Hub id via ``baseline:<id>``, or a loaded model with ``encode``) plus
``rapidfuzz:<scorer>`` (``token_sort_ratio``, ``WRatio``, ``ratio``, ``token_set_ratio``, ``partial_ratio``) for a
non-neural string-similarity join. Rapidfuzz scores are divided by 100, so every score lies in [-1, 1] (cosine)
or [0, 1] (rapidfuzz).
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEFAULT_MODEL = "baseline:minilm-l6"
RAPIDFUZZ_SCORERS = ("token_sort_ratio", "WRatio", "ratio", "token_set_ratio", "partial_ratio", "QRatio")


def _load_encoder(spec: Any, batch_size: int | None, progress: bool):
    from phrasezoo.encoders import load_encoder

    return load_encoder(spec, batch_size=batch_size, progress=progress)


class VectorScorer:
    """Cosine similarity of L2-normalised embeddings from a zoo encoder."""

    has_vectors = True

    def __init__(self, model: Any = DEFAULT_MODEL, batch_size: int | None = None, progress: bool = True) -> None:
        self.encoder = _load_encoder(model, batch_size, progress)
        self.name = self.encoder.name

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.ascontiguousarray(self.encoder.encode(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise RuntimeError(f"{self.name} returned vectors of shape {vectors.shape} for {len(texts)} texts.")
        return vectors

    def clear_cache(self) -> None:
        """Forget the per-run string cache (the encoder keeps every string it has embedded)."""
        for attribute in ("_cache", "_token_cache", "_mention_cache"):
            cache = getattr(self.encoder, attribute, None)
            if isinstance(cache, dict):
                cache.clear()


class RapidfuzzScorer:
    """A rapidfuzz string scorer (``rapidfuzz.fuzz.<name>`` with ``utils.default_process``), scores / 100."""

    has_vectors = False

    def __init__(self, scorer: str = "token_sort_ratio", workers: int = -1) -> None:
        from rapidfuzz import fuzz

        if scorer not in RAPIDFUZZ_SCORERS or not hasattr(fuzz, scorer):
            raise ValueError(f"Unknown rapidfuzz scorer {scorer!r}; use one of {', '.join(RAPIDFUZZ_SCORERS)}.")
        self.scorer = getattr(fuzz, scorer)
        self.workers = workers
        self.name = f"rapidfuzz:{scorer}"

    def scores(self, queries: list[str], keys: list[str]) -> np.ndarray:
        """``(len(queries), len(keys))`` similarity in [0, 1]."""
        from rapidfuzz import process, utils

        matrix = process.cdist(
            queries, keys, scorer=self.scorer, processor=utils.default_process, workers=self.workers,
            dtype=np.float32,
        )  # fmt: skip
        return matrix / 100.0

    def clear_cache(self) -> None:
        pass


def make_scorer(model: Any = DEFAULT_MODEL, batch_size: int | None = None, progress: bool = True):
    """A scorer for ``model`` (see the module docstring); an existing scorer is returned as is."""
    if isinstance(model, (VectorScorer, RapidfuzzScorer)):
        return model
    if isinstance(model, str) and model.startswith("rapidfuzz:"):
        return RapidfuzzScorer(model.split(":", 1)[1])
    return VectorScorer(model, batch_size=batch_size, progress=progress)
