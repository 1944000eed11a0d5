"""Build a fresh codebook model for a recipe: vocabulary from the training data, vectors and p(w) for it.

The codebook model has no pretrained encoder: its input embeddings start from, and its outputs live in, a word-vector
table restricted to the training vocabulary (:meth:`CodebookSeq2Embeddings.from_word_vectors`). p(w) (SIF weights,
summaries) comes from ``wordfreq`` (floored at ``MIN_PROB`` for words it does not know).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from phrasezoo.models.codebook.modeling_codebook import CodebookSeq2Embeddings
from phrasezoo.resources.corpora import word_frequencies

from .vectors import lookup_vectors

MIN_PROB = 1e-9


def word_probabilities(words: list[str]) -> np.ndarray:
    """p(w) of each word from ``wordfreq`` (large English list), floored at :data:`MIN_PROB`."""
    return np.maximum(np.asarray(word_frequencies(words), dtype=np.float64), MIN_PROB)


def build_model(vocabulary: list[str], word_vectors: str, kind: str, seed: int | None = None, **config: Any):
    """A fresh :class:`CodebookSeq2Embeddings` over ``vocabulary`` with vectors from ``word_vectors``.

    Phrase models keep the *last* words of an over-long phrase (the official code keeps the last five).
    """
    found = lookup_vectors(word_vectors, vocabulary)
    missing = [w for w in vocabulary if w not in found]
    if missing:
        raise ValueError(f"{len(missing)} vocabulary words have no vector in {word_vectors} (e.g. {missing[:3]}).")
    vectors = np.stack([found[w] for w in vocabulary])
    return CodebookSeq2Embeddings.from_word_vectors(
        vocabulary,
        vectors,
        word_probs=word_probabilities(vocabulary),
        truncation_side="left" if kind == "phrase" else "right",
        seed=seed,
        **config,
    )
