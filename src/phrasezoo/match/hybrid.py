"""The hybrid matcher: candidates from embedding and character TF-IDF neighbours, reranked by a learned combination of
the embedding cosine with lexical clues.

For each query the candidates are the reference rows among its ``candidates`` nearest by embedding cosine (faiss) and
its ``candidates`` nearest by character TF-IDF cosine (sparse dot products). Every candidate pair gets the features
of :data:`FEATURES` (cosines, the margin of each cosine over the query's best other candidate, number/year agreement,
acronyms), and a :class:`Combination` (a logistic regression trained on AutoFJ's dev datasets, see
``benchmarks/matching_dev.py``) turns them into one score: the estimated probability that the pair is a match.
A calibration table maps a target precision to a score threshold (``threshold="auto"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .combinations import Combination, default_combination
from .index import search, top_k_rows
from .lexical import (
    TfidfChannel,
    acronym_form,
    acronym_match,
    channel_from_state,
    channel_state,
    number_agreement,
    numbers_of,
    sparse_top_k,
)
from .scorers import DEFAULT_ENCODER, VectorScorer

NEEDS_EMBEDDING = frozenset({"emb", "emb_margin"})
NEEDS_WORD = frozenset({"word", "word_margin"})


def margins(scores: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row of a ``(queries, candidates)`` score matrix: each score minus the best score of the row's other
    valid candidates (0 when it has no other candidate)."""
    masked = np.where(valid, scores, -np.inf)
    if masked.shape[1] < 2:
        return np.zeros_like(scores)
    order = np.argsort(-masked, axis=1, kind="stable")
    top1 = np.take_along_axis(masked, order[:, :1], axis=1)
    top2 = np.take_along_axis(masked, order[:, 1:2], axis=1)
    other = np.where(np.arange(masked.shape[1])[None, :] == order[:, :1], top2, top1)
    out = np.where(np.isfinite(other), scores - other, 0.0)
    return np.where(valid, out, 0.0).astype(np.float32)


class PairFeatures:
    """Feature computation for candidate pairs between queries and a fitted reference table (see :data:`FEATURES`)."""

    def __init__(self, reference: list[str], char: TfidfChannel | None, word: TfidfChannel | None) -> None:
        self.reference = reference
        self.char, self.word = char, word
        self.ref_char = char.transform(reference) if char is not None else None
        self.ref_word = word.transform(reference) if word is not None else None
        self.ref_numbers = [numbers_of(t) for t in reference]
        self.ref_acronym = [acronym_form(t) is not None for t in reference]

    def compute(
        self,
        names: list[str],
        queries: list[str],
        candidates: np.ndarray,
        query_vectors: np.ndarray | None,
        ref_vectors: np.ndarray | None,
    ) -> np.ndarray:
        """``(n_queries, n_candidates, len(names))`` features; padded candidates (id -1) get zeros."""
        n, p = candidates.shape
        valid = candidates >= 0
        q_rows = np.repeat(np.arange(n), p)[valid.ravel()]
        c_rows = candidates[valid]
        columns: dict[str, np.ndarray] = {}

        def full(values: np.ndarray) -> np.ndarray:
            out = np.zeros((n, p), dtype=np.float32)
            out[valid] = values
            return out

        wanted = set(names)
        if wanted & {"emb", "emb_margin"}:
            if query_vectors is None or ref_vectors is None:
                raise ValueError("This combination uses the embedding cosine: the matcher needs an encoder.")
            columns["emb"] = full(np.einsum("ij,ij->i", query_vectors[q_rows], ref_vectors[c_rows]))
        for kind, channel, ref in (("char", self.char, self.ref_char), ("word", self.word, self.ref_word)):
            if wanted & {kind, f"{kind}_margin"}:
                q = channel.transform(queries)
                columns[kind] = full(np.asarray(q[q_rows].multiply(ref[c_rows]).sum(axis=1)).ravel())
        for kind in ("emb", "char", "word"):
            if f"{kind}_margin" in wanted:
                columns[f"{kind}_margin"] = margins(columns[kind], valid)
        if wanted & {"num_agree", "num_conflict", "num_one_side"}:
            q_numbers = [numbers_of(t) for t in queries]
            agree = np.zeros(len(q_rows), dtype=np.float32)
            conflict = np.zeros(len(q_rows), dtype=np.float32)
            one_side = np.zeros(len(q_rows), dtype=np.float32)
            for i, (qi, ci) in enumerate(zip(q_rows.tolist(), c_rows.tolist())):
                a, b = q_numbers[qi], self.ref_numbers[ci]
                if a and b:
                    agree[i], conflict[i] = number_agreement(a, b)
                elif a or b:
                    one_side[i] = 1.0
            columns.update(num_agree=full(agree), num_conflict=full(conflict), num_one_side=full(one_side))
        if "acronym" in wanted:
            q_acronym = [acronym_form(t) is not None for t in queries]
            values = np.zeros(len(q_rows), dtype=np.float32)
            for i, (qi, ci) in enumerate(zip(q_rows.tolist(), c_rows.tolist())):
                if q_acronym[qi] != self.ref_acronym[ci]:  # only an acronym against a longer name can match
                    values[i] = acronym_match(queries[qi], self.reference[ci])
            columns["acronym"] = full(values)
        return np.stack([columns[name] for name in names], axis=-1)


def union_candidates(*id_sets: np.ndarray) -> np.ndarray:
    """Row-wise union of candidate id arrays (each ``(n, k)``, -1 = none), padded with -1; first-seen order."""
    n = id_sets[0].shape[0]
    merged = np.concatenate(id_sets, axis=1)
    width = merged.shape[1]
    out = np.full((n, width), -1, dtype=np.int64)
    longest = 0
    for row in range(n):
        seen = dict.fromkeys(int(i) for i in merged[row] if i >= 0)
        ids = list(seen)
        out[row, : len(ids)] = ids
        longest = max(longest, len(ids))
    return out[:, : max(1, longest)]


def char_candidates(channel: TfidfChannel, ref_matrix, queries: list[str], k: int) -> np.ndarray:
    """Ids of each query's ``k`` nearest reference rows by character TF-IDF cosine (-1 padded)."""
    return sparse_top_k(channel.transform(queries), ref_matrix, k)[1]


DEFAULT_CANDIDATES = 20


class HybridScorer:
    """Embedding + lexical candidates, reranked by a :class:`Combination` (see the module docstring).

    Args:
        model: the encoder spec (default all-MiniLM-L6-v2) or a loaded model; ``None`` when the combination uses
            no embedding feature.
        combination: a :class:`Combination` or its dict; default: the one learned for the encoder
            (:func:`phrasezoo.match.combinations.default_combination`).
        candidates: neighbours taken from each of the embedding and character TF-IDF channels per query.
    """

    kind = "hybrid"
    has_vectors = False

    def __init__(
        self,
        model: Any = DEFAULT_ENCODER,
        combination: Combination | dict | None = None,
        candidates: int = DEFAULT_CANDIDATES,
        batch_size: int | None = None,
        progress: bool = True,
        index: str = "auto",
        index_options: dict | None = None,
    ) -> None:
        if not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"candidates must be a positive integer, got {candidates!r}.")
        self.vectors = (
            VectorScorer(model, batch_size=batch_size, progress=progress, index=index, index_options=index_options)
            if model is not None
            else None
        )
        encoder_name = self.vectors.name if self.vectors is not None else None
        if combination is None:
            combination = default_combination(encoder_name)
        self.combination = combination if isinstance(combination, Combination) else Combination.from_dict(combination)
        if self.vectors is None and NEEDS_EMBEDDING & set(self.combination.features):
            raise ValueError("This combination uses the embedding cosine: give the hybrid matcher a model.")
        self.candidates = candidates
        self.name = f"hybrid:{encoder_name}" if encoder_name else "hybrid"
        self.char = TfidfChannel("char")
        self.word = TfidfChannel("word") if NEEDS_WORD & set(self.combination.features) else None
        self.reference: list[str] = []
        self.char_matrix = None
        self.pairs: PairFeatures | None = None

    @property
    def uses_embedding(self) -> bool:
        return self.vectors is not None

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.vectors.encode(texts)

    def fit(self, reference: list[str]) -> None:
        self.reference = list(reference)
        if self.vectors is not None:
            self.vectors.fit(self.reference)
        self.char.fit(self.reference)
        if self.word is not None:
            self.word.fit(self.reference)
        self._prepare()

    def _prepare(self) -> None:
        self.char_matrix = self.char.transform(self.reference)
        self.pairs = PairFeatures(self.reference, self.char, self.word)

    def candidate_ids(self, queries: list[str], query_vectors: np.ndarray | None) -> np.ndarray:
        """Each query's candidate rows: its embedding and character TF-IDF nearest neighbours (union, -1 padded)."""
        k = min(self.candidates, len(self.reference))
        found = [char_candidates(self.char, self.char_matrix, queries, k)]
        if query_vectors is not None:
            found.insert(0, search(self.vectors.index, query_vectors, k)[1])
        return union_candidates(*found)

    def features(self, queries: list[str], candidates: np.ndarray, query_vectors: np.ndarray | None,
                 names: list[str] | tuple[str, ...] | None = None) -> np.ndarray:  # fmt: skip
        """Pair features (``names``, default the combination's) of each query against its candidate rows."""
        ref_vectors = self.vectors.vectors if self.vectors is not None else None
        return self.pairs.compute(list(names or self.combination.features), queries, candidates, query_vectors,
                                  ref_vectors)  # fmt: skip

    def pair_scores(self, queries: list[str], candidates: np.ndarray) -> np.ndarray:
        query_vectors = self.encode(queries) if self.vectors is not None else None
        scores = self.combination.score(self.features(queries, candidates, query_vectors))
        return np.where(candidates >= 0, scores, -np.inf).astype(np.float32)

    def search(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray]:
        query_vectors = self.encode(queries) if self.vectors is not None else None
        scores = np.full((len(queries), top_k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), top_k), -1, dtype=np.int64)
        chunk = 4096
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]
            qv = query_vectors[start : start + chunk] if query_vectors is not None else None
            cands = self.candidate_ids(part, qv)
            if top_k > cands.shape[1]:  # more answers wanted than candidates found: widen with the next rows
                cands = np.concatenate([cands, np.full((len(part), top_k - cands.shape[1]), -1)], axis=1)
            s = self.combination.score(self.features(part, cands, qv))
            s = np.where(cands >= 0, s, -np.inf)
            best, order = top_k_rows(s, top_k)
            scores[start : start + len(part)] = best
            ids[start : start + len(part)] = np.where(
                order >= 0, np.take_along_axis(cands, np.maximum(order, 0), 1), -1
            )
            if progress is not None:
                progress.update(len(part))
        ids[~np.isfinite(scores)] = -1
        return scores, ids

    def clear_cache(self) -> None:
        if self.vectors is not None:
            self.vectors.clear_cache()

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta: dict[str, Any] = {"kind": self.kind, "candidates": self.candidates,
                                "combination": self.combination.to_dict()}  # fmt: skip
        arrays: dict[str, np.ndarray] = {}
        if self.vectors is not None:
            vector_meta, vector_arrays = self.vectors.state()
            meta["model"], meta["index"] = vector_meta["model"], vector_meta["index"]
            arrays.update(vector_arrays)
        for prefix, channel in (("char", self.char), ("word", self.word)):
            if channel is not None:
                channel_meta, channel_arrays = channel_state(prefix, channel)
                meta.update(channel_meta)
                arrays.update(channel_arrays)
        return meta, arrays

    def restore(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], reference: list[str]) -> None:
        self.reference = list(reference)
        if self.vectors is not None:
            self.vectors.restore(arrays)
        self.char = channel_from_state(meta["char"], arrays, "char")
        self.word = channel_from_state(meta["word"], arrays, "word") if "word" in meta else None
        self._prepare()
