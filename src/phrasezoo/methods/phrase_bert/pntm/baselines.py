"""LDA on the same corpus and vocabulary as PNTM (scikit-learn's variational Bayes), the paper's baseline.

With a vocabulary of words and phrases, documents are counted the way the paper's phrase-LDA (Mimno, 2015) does:
each document's tokens are segmented greedily, longest vocabulary phrase first ("critically acclaimed" becomes one
token), and the remaining tokens count as words when they are vocabulary words. So LDA sees exactly the terms PNTM
may describe topics with. Term vectors for the nearest-neighbour metrics are the columns of the topic-term matrix
(each term's distribution over topics), the natural embedding of a term under LDA.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix

from .corpus import Vocabulary, tokenize


def segment(
    tokens: Sequence[str], phrases: dict[tuple[str, ...], int], words: dict[str, int], max_len: int
) -> list[int]:
    """Vocabulary ids of a token sequence: longest phrase match first, else the word (if in the vocabulary)."""
    ids, i = [], 0
    while i < len(tokens):
        for n in range(min(max_len, len(tokens) - i), 1, -1):
            key = tuple(tokens[i : i + n])
            if key in phrases:
                ids.append(phrases[key])
                i += n
                break
        else:
            if tokens[i] in words:
                ids.append(words[tokens[i]])
            i += 1
    return ids


def document_term_matrix(documents: Sequence[str], vocabulary: Vocabulary) -> csr_matrix:
    """Counts ``(n_documents, len(vocabulary))`` of the vocabulary's words and phrases (sentences are ignored)."""
    words: dict[str, int] = {}
    phrases: dict[tuple[str, ...], int] = {}
    for i, (term, kind) in enumerate(zip(vocabulary.terms, vocabulary.kinds)):
        if kind == "sentence":
            continue
        tokens = tuple(tokenize(term))
        if len(tokens) == 1:
            words.setdefault(tokens[0], i)
        elif tokens:
            phrases.setdefault(tokens, i)
    max_len = max((len(k) for k in phrases), default=1)
    rows, cols = [], []
    for d, document in enumerate(documents):
        ids = segment(tokenize(document), phrases, words, max_len)
        rows.extend([d] * len(ids))
        cols.extend(ids)
    data = np.ones(len(rows), dtype=np.float32)
    matrix = csr_matrix((data, (rows, cols)), shape=(len(documents), len(vocabulary)), dtype=np.float32)
    matrix.sum_duplicates()
    return matrix


class LDABaseline:
    """LDA with ``n_topics`` topics over a :class:`~.corpus.Vocabulary` (words + phrases as tokens).

    ``max_iter`` passes of batch variational Bayes (deterministic for a ``seed``); the priors are scikit-learn's
    defaults (``1 / K``). ``get_topics`` lists each topic's most probable terms.
    """

    def __init__(self, n_topics: int = 20, vocabulary: Vocabulary | None = None, max_iter: int = 50, seed: int = 0):
        self.n_topics = n_topics
        self.vocabulary = vocabulary
        self.max_iter = max_iter
        self.seed = seed
        self.lda = None
        self.counts: csr_matrix | None = None

    def fit(self, documents: Sequence[str], vocabulary: Vocabulary | None = None) -> LDABaseline:
        from sklearn.decomposition import LatentDirichletAllocation  # lazy: keeps scikit-learn off 'phrasezoo --help'

        self.vocabulary = vocabulary or self.vocabulary
        if self.vocabulary is None:
            raise ValueError("LDABaseline needs a vocabulary (the one PNTM uses, for a fair comparison).")
        self.counts = document_term_matrix(documents, self.vocabulary)
        if self.counts.nnz == 0:
            raise ValueError("No vocabulary term occurs in the documents.")
        self.lda = LatentDirichletAllocation(
            n_components=self.n_topics, learning_method="batch", max_iter=self.max_iter, random_state=self.seed
        ).fit(self.counts)
        return self

    def _require_fit(self):
        if self.lda is None:
            raise ValueError("Fit the LDA baseline first.")
        return self.lda

    def topic_term_distributions(self) -> np.ndarray:
        """``(K, n_terms)`` topic-term probabilities (rows sum to 1)."""
        components = self._require_fit().components_
        return components / components.sum(1, keepdims=True)

    def get_topics(self, top_n: int = 10) -> list[list[tuple[str, float]]]:
        """Per topic, its ``top_n`` most probable vocabulary terms with their probability."""
        distributions = self.topic_term_distributions()
        used = np.asarray(self.counts.sum(0)).ravel() > 0
        topics = []
        for row in distributions:
            row = np.where(used, row, -1.0)
            top = np.argsort(-row, kind="stable")[:top_n]
            topics.append([(self.vocabulary.terms[j], float(row[j])) for j in top])
        return topics

    def transform(self, documents: Sequence[str]) -> np.ndarray:
        """Topic mixtures ``(n, K)`` of new documents."""
        return self._require_fit().transform(document_term_matrix(documents, self.vocabulary))

    def term_vectors(self) -> np.ndarray:
        """Each term's distribution over topics, ``(n_terms, K)``: LDA's term embedding for neighbour metrics."""
        components = self._require_fit().components_.T
        return components / np.maximum(components.sum(1, keepdims=True), 1e-12)
