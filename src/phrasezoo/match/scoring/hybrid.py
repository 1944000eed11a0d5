"""The hybrid matcher: candidates from embedding and character TF-IDF neighbours, reranked by a learned combination of
the embedding cosine with lexical clues.

For each query the candidates are the reference rows among its ``candidates`` nearest by embedding cosine (faiss) and
its ``candidates`` nearest by character TF-IDF cosine (sparse dot products). Every candidate pair gets the features
of :data:`~phrasezoo.match.features.pairs.FEATURES` (cosines, the margin of each cosine over the query's best other
candidate, number/year agreement, acronyms), and a :class:`Combination` (a listwise model trained on the dev splits of
AutoFJ and the name benchmark, see ``experiments/matching/matching_dev.py``, its numbers read from
:mod:`~phrasezoo.match.model.learned`'s data files) turns them into one score: the estimated probability that the
pair is a match. When the combination has a :class:`~phrasezoo.match.model.decision.Decision` (the default's has),
the score is the decision's instead: the probability that the answer names the same thing as the query, absent
partners included, kept in the ranking's order; its cuts map a target precision to a threshold
(``threshold="auto"``), as the combination's calibration table does without one.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..features.lexical import TfidfChannel, channel_from_state, channel_state, sparse_top_k
from ..features.name_features import InitialsIndex
from ..features.pairs import NEEDS_EMBEDDING, NEEDS_HUB, NEEDS_STATIC, NEEDS_WORD, PairFeatures
from ..model.combinations import Combination
from ..model.decision import NEEDS as DECISION_NEEDS
from ..model.decision import TABLE_SAMPLE, answer_inputs, keep_ranking_order, sampled_rows, table_level_of
from ..model.learned import DEFAULT_ENCODER, default_combination
from .index import search, top_k_rows
from .scorers import VectorScorer

STATIC_ENCODER = "baseline:potion-base-8m"


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


def char_candidates(channel: TfidfChannel, ref_matrix, queries: list[str], k: int, ref_t=None) -> np.ndarray:
    """Ids of each query's ``k`` nearest reference rows by character TF-IDF cosine (-1 padded); ``ref_t``: the
    reference matrix transposed once (see :func:`~phrasezoo.match.features.lexical.sparse_top_k`)."""
    return sparse_top_k(channel.transform(queries), ref_matrix, k, reference_t=ref_t)[1]


DEFAULT_CANDIDATES = 10


class HybridScorer:
    """Embedding + lexical candidates, reranked by a :class:`Combination` (see the module docstring).

    Args:
        model: the encoder spec (default all-MiniLM-L6-v2) or a loaded model; ``None`` when the combination uses
            no embedding feature.
        combination: a :class:`Combination` or its dict; default: the one learned for the encoder
            (:func:`phrasezoo.match.model.learned.default_combination`).
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
            _warn_on_other_weights(combination, self.vectors)
        self.combination = combination if isinstance(combination, Combination) else Combination.from_dict(combination)
        if self.vectors is None and NEEDS_EMBEDDING & set(self.combination.features):
            raise ValueError("This combination uses the embedding cosine: give the hybrid matcher a model.")
        self.candidates = candidates
        self.static = (
            VectorScorer(STATIC_ENCODER, batch_size=batch_size, progress=progress, index=index)
            if NEEDS_STATIC & set(self.combination.features)
            else None
        )
        self.name = f"hybrid:{encoder_name}" if encoder_name else "hybrid"
        self.char = TfidfChannel("char")
        self.word = TfidfChannel("word") if NEEDS_WORD & set(self.combination.features) else None
        self.reference: list[str] = []
        self.char_matrix = self.char_matrix_t = None
        self.hub: dict[str, np.ndarray] = {}
        self.hub_detail: dict[str, np.ndarray] = {}  # per row: its best other row and second-best cosine (dedupe)
        self.pairs: PairFeatures | None = None
        self.decision = self.combination.decision_model
        #: the decision of a dedupe list's pairs (its own, trained on lists, when the combination has one)
        self.list_decision = self.decision.for_lists() if self.decision is not None else None
        self.table_level: float | None = None  # the decision's self-join level of the fitted reference

    @property
    def uses_embedding(self) -> bool:
        return self.vectors is not None

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.vectors.encode(texts)

    def fit(self, reference: list[str]) -> None:
        self.reference = list(reference)
        if self.vectors is not None:
            self.vectors.fit(self.reference)
        if self.static is not None:
            self.static.fit(self.reference)
        self.char.fit(self.reference)
        if self.word is not None:
            self.word.fit(self.reference)
        # computed on demand, for the rows that turn up as candidates (see fill_neighbourhood): NaN = not yet
        self.hub = self.empty_neighbourhood() if NEEDS_HUB & set(self.combination.features) else {}
        self.hub_detail = {}
        self._prepare()
        self.table_level = self.self_join_level() if self.decision is not None else None

    def self_join_level(self) -> float:
        """How alike the reference's own distinct rows are: the decision's table level (the 90th percentile of the
        ranking scores of :data:`~phrasezoo.match.model.decision.TABLE_SAMPLE` sampled rows against their best other
        row). A fixed seed, so a table always gets the same level; a few hundred searches, whatever its size."""
        n = len(self.reference)
        if n < 2:
            return 0.0
        rows = sampled_rows(n, TABLE_SAMPLE)
        part = [self.reference[i] for i in rows.tolist()]
        qv = self.vectors.vectors[rows] if self.vectors is not None else None
        sv = self.static.vectors[rows] if self.static is not None else None
        cands = self.candidate_ids(part, qv, extra=1, static_vectors=sv)
        cands = np.where(cands == rows[:, None], -1, cands)  # never the row itself
        z = self.combination.rank_score(self.features(part, cands, qv, static_vectors=sv))
        return table_level_of(np.where(cands >= 0, z, -np.inf).max(1))

    def empty_neighbourhood(self) -> dict[str, np.ndarray]:
        return {name: np.full(len(self.reference), np.nan, dtype=np.float32) for name in NEEDS_HUB}

    def _prepare(self) -> None:
        self.char_matrix = self.char.transform(self.reference)
        self.char_matrix_t = self.char_matrix.T.tocsr()  # every candidate search reads it: transposed once
        self.initials = InitialsIndex(self.reference)
        self.pairs = PairFeatures(self.reference, self.char, self.word, self.hub)

    def neighbourhood(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The given reference rows' best embedding and character cosine to another row (over their own candidates):
        how crowded each row's neighbourhood is. A match to a row with a near twin ("... 2012 season" next to "...
        2013 season") needs more evidence than a match to a row that stands alone. Also, per channel, which row is
        that best one (``<name>_hub_row``) and the second best cosine (``<name>_hub_next``): a dedupe, whose query
        is itself a row of the reference, reads a candidate's neighbourhood without the query."""
        ref_vectors = self.vectors.vectors if self.vectors is not None else None
        out = {name: np.zeros(len(rows), dtype=np.float32) for name in NEEDS_HUB}
        out |= {f"{name}_next": np.zeros(len(rows), dtype=np.float32) for name in NEEDS_HUB}
        out |= {f"{name}_row": np.full(len(rows), -1, dtype=np.int64) for name in NEEDS_HUB}
        chunk = 4096
        for start in range(0, len(rows), chunk):
            ids = rows[start : start + chunk]
            part = [self.reference[i] for i in ids.tolist()]
            qv = ref_vectors[ids] if ref_vectors is not None else None
            self.char.remember(part, self.char_matrix[ids])  # reference rows: no n-gram recount
            # the embedding and character channels alone: each one's top k + 1 holds its own best other row, so the
            # maxima below are the same over any wider candidate set (the static and initials channels add nothing)
            cands = self.candidate_ids(part, qv, extra=1, initials=False)
            cands = np.where(cands == ids[:, None], -1, cands)  # not the row itself
            names = ["char"] + (["emb"] if qv is not None else [])
            feats = self.pairs.compute(names, part, cands, qv, ref_vectors)
            done = np.s_[start : start + len(ids)]
            for j, name in enumerate(names):
                values = np.where(cands >= 0, feats[..., j], -np.inf)
                order = np.argsort(-values, axis=1, kind="stable")[:, :2]
                top = np.take_along_axis(values, order, axis=1)
                out[f"{name}_hub"][done] = np.where(np.isfinite(top[:, 0]), top[:, 0], 0.0)
                out[f"{name}_hub_row"][done] = np.where(
                    np.isfinite(top[:, 0]), np.take_along_axis(cands, order[:, :1], 1)[:, 0], -1
                )
                if top.shape[1] > 1:
                    out[f"{name}_hub_next"][done] = np.where(np.isfinite(top[:, 1]), top[:, 1], 0.0)
        return out

    def fill_neighbourhood(self, candidates: np.ndarray, detail: bool = False) -> None:
        """Compute the neighbourhood statistics of the candidate rows that lack them. Only rows that turn up as some
        query's candidate are ever read, so a fit does not pay for the whole table's self-search (an n x n search in
        two channels); each row's value is the same whenever it is computed. ``detail``: also each row's best other
        row and second-best cosine (not saved with the matcher: recomputed for a loaded one when asked)."""
        if not self.hub:
            return
        rows = np.unique(candidates[candidates >= 0])
        lacking = np.isnan(self.hub["char_hub"][rows])
        if detail:
            if not self.hub_detail:
                self.hub_detail = {f"{n}_row": np.full(len(self.reference), -2, np.int64) for n in NEEDS_HUB}
                self.hub_detail |= {f"{n}_next": np.zeros(len(self.reference), np.float32) for n in NEEDS_HUB}
            lacking |= self.hub_detail["char_hub_row"][rows] == -2
        missing = rows[lacking]
        if len(missing):
            for name, values in self.neighbourhood(missing).items():
                if name in self.hub:
                    self.hub[name][missing] = values
                elif self.hub_detail:
                    self.hub_detail[name][missing] = values

    def features_without_self(self, queries: list[str], candidates: np.ndarray, query_vectors: np.ndarray | None,
                              own_rows: np.ndarray, static_vectors: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """:meth:`features` for queries that are rows of the reference themselves (``own_rows``; a dedupe): a
        candidate whose nearest other row is the query gets its second-nearest as its neighbourhood, so the pair
        is scored as a search of the list without the query would score it."""
        features = self.features(queries, candidates, query_vectors, static_vectors=static_vectors)
        wanted = [name for name in self.combination.features if name in NEEDS_HUB]
        if not wanted:
            return features
        self.fill_neighbourhood(candidates, detail=True)
        safe = np.maximum(candidates, 0)
        for name in wanted:
            is_query = (self.hub_detail[f"{name}_row"][safe] == own_rows[:, None]) & (candidates >= 0)
            column = self.combination.features.index(name)
            features[..., column] = np.where(is_query, self.hub_detail[f"{name}_next"][safe], features[..., column])
        return features

    def candidate_ids(self, queries: list[str], query_vectors: np.ndarray | None, extra: int = 0,
                      static_vectors: np.ndarray | None = None, initials: bool = True) -> np.ndarray:  # fmt: skip
        """Each query's candidate rows: the union of its ``candidates + extra`` nearest neighbours in every channel
        (embedding, character TF-IDF, static embedding when present) and, for an acronym, the rows it spells the
        initials of; -1 padded: no channel's top-k is dropped."""
        k = min(self.candidates + extra, len(self.reference))
        found = [char_candidates(self.char, self.char_matrix, queries, k, self.char_matrix_t)]
        if query_vectors is not None:
            found.insert(0, search(self.vectors.index, query_vectors, k)[1])
        if static_vectors is not None:
            found.append(search(self.static.index, static_vectors, k)[1])
        if initials:
            found.append(self.initials.candidates(queries, k))
        return union_candidates(*found)

    def static_vectors(self, queries: list[str]) -> np.ndarray | None:
        """The queries' static-embedding vectors, when the combination uses that channel."""
        return self.static.encode(queries) if self.static is not None else None

    def features(self, queries: list[str], candidates: np.ndarray, query_vectors: np.ndarray | None,
                 names: list[str] | tuple[str, ...] | None = None,
                 static_vectors: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """Pair features (``names``, default the combination's) of each query against its candidate rows."""
        ref_vectors = self.vectors.vectors if self.vectors is not None else None
        names = list(names or self.combination.features)
        if NEEDS_HUB & set(names):
            self.fill_neighbourhood(candidates)
        if static_vectors is None and self.static is not None:
            static_vectors = self.static_vectors(queries)
        static = (static_vectors, self.static.vectors) if static_vectors is not None else None
        return self.pairs.compute(names, queries, candidates, query_vectors, ref_vectors, static)

    def score_candidates(self, features: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """Scores of candidate pairs from their features: the decision's probability, in the ranking's order, when
        the combination has a decision (each query as if searched alone: no claims); else the combination's own
        score."""
        return self.scores_and_ranks(features, valid)[0]

    def scores_and_ranks(self, features: np.ndarray, valid: np.ndarray,
                         lists: bool = False) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """:meth:`score_candidates` and the ranking scores that order the candidates (what :meth:`with_claims`
        reads of the top answers). Without a decision the scores order the candidates themselves and are returned
        twice (nothing reads claims then): the combination's rank score is not computed again. ``lists``: the
        queries are rows of a dedupe list searched against it, scored by :attr:`list_decision`."""
        if self.decision is None:
            scores = self.combination.score(features, valid)
            return scores, scores
        if self.table_level is None:  # a matcher saved before the decision: measure its table once
            self.table_level = self.self_join_level()
        z = self.combination.rank_score(features)
        pair = {name: features[..., self.combination.features.index(name)] for name in DECISION_NEEDS}
        decision = self.list_decision if lists else self.decision
        probability = decision.probability(answer_inputs(z, valid, pair, self.table_level))
        return keep_ranking_order(probability, z, valid), z

    def best_candidates(
        self, scores: np.ndarray, z: np.ndarray, valid: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best candidates per query and their scores: in the ranking's order when a decision scores them
        (its probabilities never rise along that order, but the cap leaves ties, which must not hand rank 1 to the
        ranking's second answer), else by score."""
        if self.decision is None:
            return top_k_rows(scores, k)
        _, order = top_k_rows(np.where(valid, z, -np.inf), k)
        best = np.take_along_axis(scores, np.maximum(order, 0), 1)
        return np.where(order >= 0, best, -np.inf).astype(np.float32), order

    def with_claims(self, scores: np.ndarray, ids: np.ndarray, top_ranks: np.ndarray,
                    queries: list[str] | None = None, lists: bool = False) -> np.ndarray:  # fmt: skip
        """``scores`` of a search, the top answers rescored by the decision's claims over the (distinct) queries
        searched together (:meth:`~phrasezoo.match.model.decision.Decision.with_claims`); unchanged without a
        decision. ``lists``: scores of :meth:`scores_and_ranks` with ``lists=True``."""
        if self.decision is None:
            return scores
        decision = self.list_decision if lists else self.decision
        return decision.with_claims(scores, ids[:, 0], top_ranks, queries)

    def pair_scores(self, queries: list[str], candidates: np.ndarray) -> np.ndarray:
        query_vectors = self.encode(queries) if self.vectors is not None else None
        valid = candidates >= 0
        scores = self.score_candidates(self.features(queries, candidates, query_vectors), valid)
        return np.where(valid, scores, -np.inf).astype(np.float32)

    def search(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray]:
        scores, ids, top_ranks = self.search_unclaimed(queries, top_k, progress)
        return self.with_claims(scores, ids, top_ranks, queries), ids

    def search_unclaimed(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:  # fmt: skip
        """:meth:`search` before the decision reads claims (each query as if alone), with the ranking score of each
        query's top answer: what a backend that holds the queries in parts needs to read the claims over all of them
        (:mod:`phrasezoo.match.spark.join`)."""
        query_vectors = self.encode(queries) if self.vectors is not None else None
        all_static = self.static_vectors(queries)
        scores = np.full((len(queries), top_k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), top_k), -1, dtype=np.int64)
        top_ranks = np.full(len(queries), -np.inf)
        chunk = 4096
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]
            qv = query_vectors[start : start + chunk] if query_vectors is not None else None
            sv = all_static[start : start + chunk] if all_static is not None else None
            cands = self.candidate_ids(part, qv, extra=max(0, top_k - self.candidates), static_vectors=sv)
            s, z = self.scores_and_ranks(self.features(part, cands, qv, static_vectors=sv), cands >= 0)
            s = np.where(cands >= 0, s, -np.inf)
            best, order = self.best_candidates(s, z, cands >= 0, top_k)
            top_ranks[start : start + len(part)] = np.take_along_axis(z, np.maximum(order[:, :1], 0), 1)[:, 0]
            scores[start : start + len(part)] = best
            ids[start : start + len(part)] = np.where(
                order >= 0, np.take_along_axis(cands, np.maximum(order, 0), 1), -1
            )
            if progress is not None:
                progress.update(len(part))
        ids[~np.isfinite(scores)] = -1
        return scores, ids, top_ranks

    def clear_cache(self) -> None:
        for channel in (self.vectors, self.static):
            if channel is not None:
                channel.clear_cache()

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta: dict[str, Any] = {"kind": self.kind, "candidates": self.candidates,
                                "combination": self.combination.to_dict()}  # fmt: skip
        if self.table_level is not None:
            meta["table_level"] = self.table_level
        arrays: dict[str, np.ndarray] = {}
        if self.vectors is not None:
            vector_meta, vector_arrays = self.vectors.state()
            meta["model"], meta["index"] = vector_meta["model"], vector_meta["index"]
            arrays.update(vector_arrays)
        if self.static is not None:
            arrays["static_vectors"] = self.static.vectors
        for prefix, channel in (("char", self.char), ("word", self.word)):
            if channel is not None:
                channel_meta, channel_arrays = channel_state(prefix, channel)
                meta.update(channel_meta)
                arrays.update(channel_arrays)
        arrays.update(self.hub)
        return meta, arrays

    def restore(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], reference: list[str]) -> None:
        self.reference = list(reference)
        if self.vectors is not None:
            self.vectors.restore(arrays)
        if self.static is not None:
            self.static.restore({"vectors": arrays["static_vectors"]})
        self.char = channel_from_state(meta["char"], arrays, "char")
        self.word = channel_from_state(meta["word"], arrays, "word") if "word" in meta else None
        self.hub = {name: np.asarray(arrays[name], dtype=np.float32) for name in NEEDS_HUB if name in arrays}
        self.hub_detail = {}
        self._prepare()
        self.table_level = meta.get("table_level")


def _warn_on_other_weights(combination: Combination, vectors: VectorScorer | None) -> None:
    """A combination learned for a zoo export is keyed by the folder's name; warn when the folder holds other weights
    than it was learned on (another training run of the same name), since its weights and threshold="auto" are
    fitted to one encoder's cosines."""
    learned_on = (combination.meta or {}).get("encoder_revision")
    revision = getattr(getattr(vectors, "encoder", None), "revision", None)
    if learned_on and revision and revision != learned_on:
        warnings.warn(
            f"The combination for {vectors.name} was learned on its weights {learned_on}; this folder holds "
            f"{revision}. Scores still rank, but threshold='auto' may miss its target precision. Learn one for these "
            f"weights: experiments/matching/names_dev.py fit --model <folder>.",
            stacklevel=3,
        )
