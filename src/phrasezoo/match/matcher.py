"""The matching engine behind :func:`phrasezoo.match.join` and :func:`phrasezoo.match.link`.

A :class:`Matcher` embeds (or, for rapidfuzz, keeps) a reference table once and answers top-k queries against it:
exact or approximate faiss search over normalised vectors, optionally restricted to blocks of rows that share a
key with the query (see :mod:`phrasezoo.match.blocking`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .blocking import FALLBACKS, BlockIndex, KeyFunction
from .index import build_index, search
from .scorers import DEFAULT_MODEL, make_scorer

MAX_CDIST_CELLS = 20_000_000  # rapidfuzz score matrix chunk (queries x reference), float32: 80 MB


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    try:
        from phrasezoo.progress import progress_enabled
    except ImportError:  # pragma: no cover

        def progress_enabled(requested: bool = True) -> bool:  # noqa: E306
            return requested

    return tqdm(total=total, desc=desc, unit="row", disable=not progress_enabled(enabled) or total < 2000, leave=False)


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Best ``k`` columns per row of a score matrix, highest first (ties: lower column first); pads with -1."""
    n, m = scores.shape
    ids = np.full((n, k), -1, dtype=np.int64)
    best = np.full((n, k), -np.inf, dtype=np.float32)
    if m == 0:
        return best, ids
    take = min(k, m)
    part = np.argpartition(-scores, take - 1, axis=1)[:, :take] if take < m else np.tile(np.arange(m), (n, 1))
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -part_scores), axis=1)
    ids[:, :take] = np.take_along_axis(part, order, axis=1)
    best[:, :take] = np.take_along_axis(part_scores, order, axis=1)
    return best, ids


class Matcher:
    """Top-k matching of query strings against a fitted reference table.

    Args:
        model: what scores pairs (see :mod:`phrasezoo.match.scorers`): ``"baseline:minilm-l6"`` (default), an
            exported zoo folder, a recipe name, a loaded model with ``encode``, or ``"rapidfuzz:<scorer>"``.
        index: ``"auto"``, ``"flat"`` (exact), ``"ivf"`` or ``"hnsw"`` (approximate, for large tables).
        blocking: ``None`` (compare with every row), ``"first_token"``, ``"tokens"``, ``"char3"`` or a key function.
        blocking_fallback: ``"all"``: queries with no candidate in their blocks search the whole table; ``"none"``:
            they stay unmatched.
        batch_size: encoder batch size. progress: show progress bars on long work.
        nprobe, hnsw_m, ef_search: approximate-index settings (see :func:`phrasezoo.match.index.build_index`).
    """

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        index: str = "auto",
        blocking: str | KeyFunction | None = None,
        blocking_fallback: str = "all",
        batch_size: int | None = None,
        progress: bool = True,
        nprobe: int = 16,
        hnsw_m: int = 32,
        ef_search: int = 128,
    ) -> None:
        if blocking_fallback not in FALLBACKS:
            raise ValueError(f"blocking_fallback must be one of {FALLBACKS}, got {blocking_fallback!r}.")
        self.scorer = make_scorer(model, batch_size=batch_size, progress=progress)
        self.index_kind = index
        self.blocking = blocking
        self.blocking_fallback = blocking_fallback
        self.progress = progress
        self.index_options = {"nprobe": nprobe, "hnsw_m": hnsw_m, "ef_search": ef_search}
        self.reference: list[str] | None = None
        self._vectors: np.ndarray | None = None
        self._index = None
        self._blocks: BlockIndex | None = None
        if blocking is not None:
            BlockIndex([], blocking)  # validate the scheme name now, not after encoding

    @property
    def name(self) -> str:
        return self.scorer.name

    def fit(self, reference: list[str]) -> Matcher:
        """Embed and index the reference strings (the left table, or the names of a knowledge base)."""
        if not reference:
            raise ValueError("The reference table is empty: nothing to match against.")
        self.reference = list(reference)
        self._index = None
        if self.scorer.has_vectors:
            self._vectors = self.scorer.encode(self.reference)
            if self.blocking is None:
                self._index = build_index(self._vectors, self.index_kind, **self.index_options)
        if self.blocking is not None:
            self._blocks = BlockIndex(self.reference, self.blocking)
        return self

    def search(self, queries: list[str], top_k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, ids)`` of shape ``(len(queries), top_k)``, best first; id -1 where there is no candidate."""
        if self.reference is None:
            raise RuntimeError("Call fit(reference) before search(queries).")
        if not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
        if not queries:
            return np.zeros((0, top_k), dtype=np.float32), np.zeros((0, top_k), dtype=np.int64)
        query_vectors = self.scorer.encode(list(queries)) if self.scorer.has_vectors else None
        if self._blocks is not None:
            return self._search_blocked(list(queries), query_vectors, top_k)
        if query_vectors is not None:
            with _progress(len(queries), f"search {self.name}", self.progress) as bar:
                return search(self._index, query_vectors, top_k, progress=bar)
        return self._search_strings(list(queries), np.arange(len(self.reference)), top_k)

    # ----------------------------------------------------------------------------------------------- internals
    def _search_strings(self, queries: list[str], candidates: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rapidfuzz scores of queries against the reference rows ``candidates``, in chunks of queries."""
        keys = [self.reference[i] for i in candidates]
        chunk = max(1, MAX_CDIST_CELLS // max(1, len(keys)))
        scores = np.empty((len(queries), top_k), dtype=np.float32)
        ids = np.empty((len(queries), top_k), dtype=np.int64)
        with _progress(len(queries), f"search {self.name}", self.progress) as bar:
            for start in range(0, len(queries), chunk):
                matrix = self.scorer.scores(queries[start : start + chunk], keys)
                s, i = top_k_rows(matrix, top_k)
                scores[start : start + chunk] = s
                ids[start : start + chunk] = np.where(i >= 0, candidates[np.maximum(i, 0)], -1)
                bar.update(len(s))
        return scores, ids

    def _search_blocked(
        self, queries: list[str], query_vectors: np.ndarray | None, top_k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        scores = np.full((len(queries), top_k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), top_k), -1, dtype=np.int64)
        fallback: list[int] = []
        with _progress(len(queries), f"search {self.name} (blocked)", self.progress) as bar:
            for row, text in enumerate(queries):
                candidates = self._blocks.candidates(text)
                bar.update(1)
                if candidates.size == 0:
                    fallback.append(row)
                    continue
                if query_vectors is not None:
                    row_scores = (self._vectors[candidates] @ query_vectors[row])[None, :]
                else:
                    row_scores = self.scorer.scores([text], [self.reference[i] for i in candidates])
                s, i = top_k_rows(row_scores, top_k)
                scores[row], ids[row] = s[0], np.where(i[0] >= 0, candidates[np.maximum(i[0], 0)], -1)
        if fallback and self.blocking_fallback == "all":
            everything = np.arange(len(self.reference))
            if query_vectors is not None:
                if self._index is None:
                    self._index = build_index(self._vectors, self.index_kind, **self.index_options)
                s, i = search(self._index, query_vectors[fallback], top_k)
            else:
                s, i = self._search_strings([queries[r] for r in fallback], everything, top_k)
            scores[fallback], ids[fallback] = s, i
        return scores, ids
