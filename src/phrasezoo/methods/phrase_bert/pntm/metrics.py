"""Topic quality, measured: NPMI coherence, topic diversity, and the paper's lexical diversity of nearest neighbours.

* **NPMI coherence** (Bouma, 2009; Lau et al., 2014) of a topic's top terms, with *document* co-occurrence on the
  reference corpus: ``NPMI(a, b) = log(P(a, b) / (P(a) P(b))) / -log P(a, b)``, ``-1`` when ``a`` and ``b`` never
  co-occur, ``1`` when they always do. A term occurs in a document when its token sequence appears there
  contiguously (so phrases are matched as phrases). A topic's coherence is the mean over its term pairs; terms
  absent from the corpus are left out (and counted).
* **Topic diversity** (Dieng et al., 2020): unique terms among the top ``top_n`` terms of all topics, divided by
  ``K * top_n``; **token diversity** does the same on word tokens, which also catches "the album" / "an album".
* **Lexical diversity of nearest neighbours** (Phrase-BERT, section 5.3), for a query phrase and its ``k`` nearest
  vocabulary terms: *new tokens*, unique unigrams of the neighbours that are not in the query, divided by the
  query's length in tokens; *LCS precision*, the longest common (character) substring of query and neighbour over
  the neighbour's length, in percent; *Levenshtein*, the character edit distance. Averaged over neighbours, then
  queries. Lower LCS precision and higher new tokens / edit distance mean a more lexically diverse space.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import combinations

import numpy as np
from rapidfuzz.distance import Levenshtein

from .corpus import tokenize


class DocumentIndex:
    """Which documents contain a term (contiguous token match), from an inverted index of words."""

    def __init__(self, documents: Sequence[str]):
        self.documents = [tokenize(d) for d in documents]
        self.n_documents = len(self.documents)
        self._postings: dict[str, set[int]] = {}
        for i, tokens in enumerate(self.documents):
            for token in set(tokens):
                self._postings.setdefault(token, set()).add(i)
        self._cache: dict[tuple[str, ...], frozenset[int]] = {}

    def containing(self, term: str) -> frozenset[int]:
        """Ids of the documents where ``term`` occurs."""
        tokens = tuple(tokenize(term))
        if tokens not in self._cache:
            self._cache[tokens] = frozenset(self._find(tokens))
        return self._cache[tokens]

    def _find(self, tokens: tuple[str, ...]) -> set[int]:
        if not tokens:
            return set()
        candidates = set.intersection(*(self._postings.get(t, set()) for t in tokens))
        if len(tokens) == 1:
            return candidates
        n = len(tokens)
        return {i for i in candidates if _contains(self.documents[i], tokens, n)}


def _contains(sequence: list[str], tokens: tuple[str, ...], n: int) -> bool:
    first = tokens[0]
    for start, token in enumerate(sequence[: len(sequence) - n + 1]):
        if token == first and tuple(sequence[start : start + n]) == tokens:
            return True
    return False


def npmi(index: DocumentIndex, a: str, b: str) -> float | None:
    """Document-level NPMI of two terms; ``None`` when one of them never occurs."""
    docs_a, docs_b = index.containing(a), index.containing(b)
    if not docs_a or not docs_b:
        return None
    n = index.n_documents
    joint = len(docs_a & docs_b) / n
    if joint == 0:
        return -1.0
    if joint == 1:
        return 1.0
    p_a, p_b = len(docs_a) / n, len(docs_b) / n
    return math.log(joint / (p_a * p_b)) / -math.log(joint)


def topic_coherence(topics: Sequence[Sequence[str]], index: DocumentIndex, top_n: int = 10) -> dict:
    """Mean NPMI of each topic's top ``top_n`` term pairs, and their mean (``npmi``) over topics."""
    per_topic, missing = [], 0
    for terms in topics:
        terms = list(terms)[:top_n]
        missing += sum(not index.containing(t) for t in terms)
        scores = [s for a, b in combinations(terms, 2) if (s := npmi(index, a, b)) is not None]
        per_topic.append(float(np.mean(scores)) if scores else float("nan"))
    valid = [s for s in per_topic if not math.isnan(s)]
    return {
        "npmi": float(np.mean(valid)) if valid else float("nan"),
        "per_topic": per_topic,
        "terms_not_in_corpus": missing,
    }


def topic_diversity(topics: Sequence[Sequence[str]], top_n: int = 25) -> float:
    """Unique terms among the top ``top_n`` of every topic over ``K * top_n`` (1 = no term shared by two topics)."""
    terms = [t for topic in topics for t in list(topic)[:top_n]]
    return len(set(terms)) / len(terms) if terms else 0.0


def token_diversity(topics: Sequence[Sequence[str]], top_n: int = 25) -> float:
    """Unique word tokens among the top ``top_n`` terms of every topic over all their tokens."""
    tokens = [tok for topic in topics for t in list(topic)[:top_n] for tok in tokenize(t)]
    return len(set(tokens)) / len(tokens) if tokens else 0.0


# --------------------------------------------------------------------------------------------- lexical diversity
def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest common (contiguous) character substring of ``a`` and ``b``."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    best = 0
    for ca in a:
        current = [0] * (len(b) + 1)
        for j, cb in enumerate(b, start=1):
            if ca == cb:
                current[j] = previous[j - 1] + 1
                if current[j] > best:
                    best = current[j]
        previous = current
    return best


def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions of cost 1)."""
    return int(Levenshtein.distance(a, b))


def lexical_diversity(query: str, neighbours: Sequence[str]) -> dict[str, float]:
    """The paper's three metrics for one query and its neighbours (see the module docstring)."""
    query_tokens = tokenize(query)
    if not neighbours or not query_tokens:
        raise ValueError("lexical_diversity needs a query with at least one token and at least one neighbour.")
    new = {t for n in neighbours for t in tokenize(n)} - set(query_tokens)
    q = query.lower()
    return {
        "new_tokens": len(new) / len(query_tokens),
        "lcs_precision": 100.0
        * float(np.mean([longest_common_substring(q, n.lower()) / max(1, len(n)) for n in neighbours])),
        "levenshtein": float(np.mean([levenshtein(q, n.lower()) for n in neighbours])),
    }


def nearest_neighbours(vectors: np.ndarray, query_ids: Sequence[int], k: int = 10) -> list[list[int]]:
    """For each query row, the ``k`` rows of ``vectors`` with the highest cosine, itself excluded."""
    matrix = np.asarray(vectors, dtype=np.float32)
    matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    out = []
    for start in range(0, len(query_ids), 256):
        ids = list(query_ids[start : start + 256])
        scores = matrix[ids] @ matrix.T
        scores[np.arange(len(ids)), ids] = -np.inf
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        for row, candidates in zip(scores, top):
            out.append([int(c) for c in candidates[np.argsort(-row[candidates], kind="stable")]])
    return out


def neighbour_lexical_diversity(
    terms: Sequence[str], vectors: np.ndarray, query_ids: Sequence[int], k: int = 10
) -> dict[str, float]:
    """Mean of :func:`lexical_diversity` over the queries ``terms[q]`` and their ``k`` nearest terms."""
    if len(terms) <= k:
        raise ValueError(f"Need more than k={k} terms to take {k} neighbours, got {len(terms)}.")
    rows = [
        lexical_diversity(terms[q], [terms[j] for j in neighbours])
        for q, neighbours in zip(query_ids, nearest_neighbours(vectors, query_ids, k))
    ]
    return {key: float(np.mean([r[key] for r in rows])) for key in ("new_tokens", "lcs_precision", "levenshtein")}


def sample_query_phrases(terms: Sequence[str], kinds: Sequence[str], n: int = 300, seed: int = 0) -> list[int]:
    """``n`` random multiword phrases of a vocabulary (seeded): the query set of the nearest-neighbour metrics."""
    pool = [i for i, (t, kind) in enumerate(zip(terms, kinds)) if kind == "phrase" and len(tokenize(t)) > 1]
    return sorted(random.Random(seed).sample(pool, min(n, len(pool))))
