"""Shared pieces of the FACETS evaluations: words and their vectors, p(w), the paper's weightings, bootstrap CIs.

The ``facets_*`` tasks evaluate models of output kind FACETS (K vectors per text in a frozen word-vector space, e.g.
the multi-facet embeddings of Chang et al., AAAI 2021). Every scorer (GloVe baselines, the model's "Our a" weights,
the centroid control) reads the
same words of a text (:func:`text_words`: the model tokenizer's lowercased pre-tokenization, words with a vector,
punctuation dropped), the same unit word vectors (the frozen target space, GloVe 6B 50-d by default) and the same
word probabilities, so that rows of a table differ only in what they claim to differ in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.metrics import compute
from phrasezoo.evaluation.tasks.base import Task
from phrasezoo.methods.codebook.data import word_tokens
from phrasezoo.resources import load_spacy_tagger, load_word_vectors
from phrasezoo.resources.corpora import word_frequency

#: Capability of encoders wrapping a FACETS model (``facets()``); the facets tasks require it.
FACETS = "facets"
#: SIF's smoothing constant (the paper: 1e-4)
ALPHA = 1e-4


def facets_model(encoder: Encoder) -> Any | None:
    """The FACETS model behind ``encoder`` (anything with ``facets()``), or ``None``."""
    for candidate in (getattr(encoder, "model", None), encoder):
        if candidate is not None and callable(getattr(candidate, "facets", None)):
            return candidate
    return None


class FacetsTask(Task):
    """A task that reads a codebook model's facets: for any other encoder its ``facets`` input is missing."""

    requires = frozenset({FACETS})

    def missing(self, encoder: Encoder) -> set[str]:
        return set() if facets_model(encoder) is not None else {FACETS}


@dataclass
class WordSpace:
    """Unit word vectors of the target space with a word -> row index, and word probabilities p(w)."""

    name: str
    index: dict[str, int]
    vectors: np.ndarray  # (n_words, dim) unit rows
    p_source: str

    def has(self, word: str) -> bool:
        return word in self.index

    def rows(self, words: list[str]) -> np.ndarray:
        if not words:
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32)
        return self.vectors[[self.index[w] for w in words]]

    def prob(self, words: list[str]) -> np.ndarray:
        """p(w) of each word (``wordfreq`` large English list; 0 for words it does not know)."""
        return np.asarray([_word_probability(w) for w in words], dtype=np.float64)

    def sif_weights(self, words: list[str], alpha: float = ALPHA) -> np.ndarray:
        """``alpha / (alpha + p(w))`` (SIF, Arora et al. 2017)."""
        return alpha / (alpha + self.prob(words))


@lru_cache(maxsize=2)
def word_space(name: str = "glove-6b-50d") -> WordSpace:
    """The frozen target space (GloVe 6B 50-d by default), unit-normalised once and cached."""
    table = load_word_vectors(name)
    vectors = np.asarray(table.vectors, dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return WordSpace(name=name, index=table.index, vectors=vectors, p_source="wordfreq (en, large list)")


@lru_cache(maxsize=200_000)
def _word_probability(word: str) -> float:
    return float(word_frequency(word, "en", wordlist="large"))


def text_words(text: str, space: WordSpace) -> list[str]:
    """Words of ``text`` that have a vector: lowercased pre-tokenization, tokens without letters or digits dropped."""
    return [w for w in word_tokens(text) if any(c.isalnum() for c in w) and space.has(w)]


def unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=-1, keepdims=True), 1e-12)


def facet_importance(word_vectors: np.ndarray, facets: np.ndarray) -> np.ndarray:
    """Eq. 6 of the paper: ``a_q = sum_k max(0, cos(w_q, f_k))`` for unit word rows and (K, d) facets."""
    if len(word_vectors) == 0:
        return np.zeros(0, dtype=np.float32)
    return np.maximum(0.0, word_vectors @ unit(facets).T).sum(axis=1)


def weighted_mean(word_vectors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_q weight_q w_q / sum_q weight_q`` (zeros when there are no words or all weights are 0)."""
    if len(word_vectors) == 0 or float(np.sum(weights)) <= 0:
        return np.zeros(word_vectors.shape[1] if word_vectors.ndim == 2 else 0, dtype=np.float32)
    return (weights[:, None] * word_vectors).sum(axis=0) / float(np.sum(weights))


def remove_first_pc(embeddings: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """SIF post-processing: subtract the projection on the first principal component of ``reference`` rows."""
    u = first_pc(reference)
    return embeddings - (embeddings @ u)[:, None] * u[None, :]


def first_pc(rows: np.ndarray) -> np.ndarray:
    """First right singular vector of ``rows`` (uncentred, as in SIF's TruncatedSVD)."""
    _, _, vt = np.linalg.svd(np.asarray(rows, dtype=np.float64), full_matrices=False)
    return vt[0].astype(np.float32)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r by numpy.corrcoef (NaN when either side is constant): the ``pearson`` metric module's "corrcoef"."""
    x, y = np.asarray(x, dtype=np.float64).tolist(), np.asarray(y, dtype=np.float64).tolist()
    return compute("pearson", predictions=x, references=y, formula="corrcoef")["pearson"]


def bootstrap_indices(n: int, rounds: int = 1000, seed: int = 0) -> np.ndarray:
    """``(rounds, n)`` resampling indices (seeded), shared by every row of a table so differences are paired."""
    return np.random.default_rng(seed).integers(0, n, size=(rounds, n))


def bootstrap_pearson(x: np.ndarray, y: np.ndarray, resamples: np.ndarray) -> np.ndarray:
    """Pearson r on each bootstrap resample (vectorised)."""
    xs = np.asarray(x, dtype=np.float64)[resamples]
    ys = np.asarray(y, dtype=np.float64)[resamples]
    xs = xs - xs.mean(axis=1, keepdims=True)
    ys = ys - ys.mean(axis=1, keepdims=True)
    denom = np.sqrt((xs**2).sum(axis=1) * (ys**2).sum(axis=1))
    return (xs * ys).sum(axis=1) / np.maximum(denom, 1e-300)


def interval(samples: np.ndarray, level: float = 0.95) -> list[float]:
    """Percentile interval of bootstrap samples, rounded for the results file."""
    low, high = np.nanpercentile(samples, [50 * (1 - level), 50 * (1 + level)])
    return [round(float(low), 4), round(float(high), 4)]


# ------------------------------------------------------------------------------------------- model adapters
def to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().float().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def model_facets(model: Any, texts: list[str], batch_size: int = 256) -> np.ndarray:
    """``(n, K, d)`` facets of ``texts`` in the target space, unit-normalised (the paper's F-hat_u)."""
    return unit(to_numpy(model.facets(texts, normalize=True, batch_size=batch_size)))


def model_raw_facets(model: Any, texts: list[str], batch_size: int = 256) -> np.ndarray:
    """``(n, K, d)`` facets as the model outputs them (the magnitudes the NNSC loss was trained with)."""
    return to_numpy(model.facets(texts, normalize=False, batch_size=batch_size))


def model_sc(model: Any, left: list[str], right: list[str], batch_size: int = 256) -> np.ndarray:
    """SC similarity of each pair (left[i], right[i]): the model's negated symmetric NNSC reconstruction error."""
    return to_numpy(model.similarity(left, right, method="sc", pairwise=True, batch_size=batch_size)).reshape(-1)


def model_emb(model: Any, texts: list[str], batch_size: int = 256) -> np.ndarray:
    """Ours Emb: the model's ``encode`` (mean of contextual encoder states), unit rows."""
    return unit(to_numpy(model.encode(texts, batch_size=batch_size, normalize=True)))


def solve_nnsc(
    model: Any, facets: np.ndarray, targets: np.ndarray, mask: np.ndarray, lam: float, chunk: int = 256
) -> np.ndarray:
    """Per-example reconstruction error ``mean_j ||F m_j - w_j||^2`` over real targets, M from the model's solver.

    ``facets`` (n, K, d), ``targets`` (n, m, d), ``mask`` (n, m). Runs in chunks to bound memory.
    """
    errors = []
    for start in range(0, len(facets), chunk):
        _, er = model.nnsc(
            torch.as_tensor(facets[start : start + chunk]),
            torch.as_tensor(targets[start : start + chunk]),
            torch.as_tensor(mask[start : start + chunk]),
            lam=lam,
        )
        errors.append(to_numpy(er))
    return np.concatenate(errors)


def sentence_splitter(spacy_model: str = "en_core_web_sm"):
    """spaCy with the tagger and the statistical sentence splitter only (see ``load_spacy_tagger``)."""
    return load_spacy_tagger(spacy_model)
