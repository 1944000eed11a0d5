"""``model=`` specs -> scorers (see :mod:`phrasezoo.match.scoring.scorers` for what each kind scores)."""

from __future__ import annotations

from typing import Any

from ..model.learned import DEFAULT_ENCODER
from .hybrid import HybridScorer
from .scorers import DEFAULT_MODEL, RapidfuzzScorer, TfidfScorer, VectorScorer


def make_scorer(model: Any = DEFAULT_MODEL, batch_size: int | None = None, progress: bool = True,
                index: str = "auto", index_options: dict | None = None):  # fmt: skip
    """A scorer for ``model`` (see the module docstring); an existing scorer is returned as is."""
    if isinstance(model, (VectorScorer, RapidfuzzScorer, TfidfScorer, HybridScorer)):
        return model
    if isinstance(model, str):
        head, _, rest = model.partition(":")
        if head == "rapidfuzz":
            return RapidfuzzScorer(rest)
        if head == "tfidf":
            return TfidfScorer(rest)
        if head == "hybrid":
            return HybridScorer(rest or DEFAULT_ENCODER, batch_size=batch_size, progress=progress, index=index,
                                index_options=index_options)  # fmt: skip
    return VectorScorer(model, batch_size=batch_size, progress=progress, index=index, index_options=index_options)
