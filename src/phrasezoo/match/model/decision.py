"""The decision: the probability that a query's top answer names the same thing, "none of them" included.

The combination's ranking score orders a query's candidates; the :class:`Decision` says whether to keep the best of
them. It is a logistic model over what the top answer looks like (:data:`INPUTS`): its ranking score and margin over
the next candidate, five of its pair features, how much closer it is to the query than to its own nearest other
reference row (the ``emb_hub`` and ``char_hub`` cosines every candidate has), and how far its score stands above the
scores of the reference's own distinct entities against each other (the 90th percentile of a self-join sample of the
reference: a table whose entities look alike needs more evidence; AutoFJ's and splink's idea).

Two inputs read the other queries searched together (:func:`claim_inputs`, round 11): a row that is the top answer of
a query scoring it higher is likely that query's partner, so a query without a partner in the reference, which falls
on a near-twin sibling, loses confidence when the sibling's own partner is searched with it. A query searched alone
reads :data:`NO_CLAIM`, as most training answers do; the claims adjust each query's top answer, and the lower ranks
are capped by it (:meth:`Decision.with_claims`).

It is trained on joins where every partner is present and on joins where half of them are absent (the open world),
each domain weighing the same, so the probability is that of "the top candidate is the query's entity", not "the
top candidate is the best of them". ``cuts`` maps a target precision to the probability to keep, measured on the
training joins (``threshold="auto"``). Chosen and measured in docs/experiments/matching.md, rounds 9 and 11.

A dedupe list is a reference searched against itself, where most rows have no duplicate and a row's best other row is
mostly a near-twin distinct entity: its pairs are scored by a decision of their own (:attr:`Decision.lists`, the
same inputs, trained on dedupe lists; round 12), with its own cuts.

The numbers are data (``learned.json``, key ``decision`` of a combination), written by
``experiments/matching/open_world.py fit`` (the dedupe decision by ``experiments/matching/dedupe_decision.py fit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: the version of the decision's layout in a learned file; another version is refused
FORMAT_VERSION = 1
#: the top answer's description a decision may read, by name
INPUTS = (
    "score",  # the combination's ranking score of the answer
    "margin",  # its score minus the best score of the query's other candidates (capped at MARGIN_CAP)
    "emb",  # pair features of the answer (phrasezoo.match.features.pairs.FEATURES)
    "char",
    "token_sort",
    "acronym",
    "cover_query",
    "emb_over_neighbour",  # emb minus the answer's best embedding cosine to another reference row (emb_hub)
    "char_over_neighbour",  # char minus its char_hub
    "score_over_table",  # score minus the reference self-join's 90th percentile (TABLE_QUANTILE)
    "claim_gap",  # score minus the best score of another query searched with it whose top row is the same (CLAIM_CAP)
    "log_claimants",  # log of how many of those queries have that top row
)
#: the inputs read over the queries searched together (:func:`claim_inputs`); a query alone reads NO_CLAIM
CLAIM_INPUTS = ("claim_gap", "log_claimants")
CLAIM_CAP = 10.0
NO_CLAIM = {"claim_gap": CLAIM_CAP, "log_claimants": 0.0}
#: the pair features the inputs read
NEEDS = ("emb", "char", "token_sort", "acronym", "cover_query", "emb_hub", "char_hub")
MARGIN_CAP = 10.0
#: the share of a self-join's best scores below the table level
TABLE_QUANTILE = 0.9
#: reference rows sampled for the table level (a fixed seed, so a table always gets the same level)
TABLE_SAMPLE = 500


def sampled_rows(n: int, size: int | None, seed: int = 0) -> np.ndarray:
    """Row positions of a seeded sample of ``size`` of ``n`` rows, in order; every row when ``size`` is None, 0 or
    at least ``n``. What the decision reads of a large table: the table level's self-join (:data:`TABLE_SAMPLE`) and
    a labelling session's pool."""
    if not size or n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def answer_inputs(z: np.ndarray, valid: np.ndarray, pair: dict[str, np.ndarray], table_level: float) -> dict:
    """The :data:`INPUTS` of every candidate as if it were its query's answer: ``z`` the ranking scores
    ``(queries, candidates)``, ``valid`` the real candidates, ``pair`` the :data:`NEEDS` feature columns."""
    masked = np.where(valid, z, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")
    best = np.take_along_axis(masked, order[:, :1], axis=1)
    second = np.take_along_axis(masked, order[:, 1:2], axis=1) if z.shape[1] > 1 else np.full_like(best, -np.inf)
    other = np.where(np.arange(z.shape[1])[None, :] == order[:, :1], second, best)
    margin = np.where(np.isfinite(other), z - other, MARGIN_CAP)
    columns = {
        "score": z,
        "margin": np.minimum(margin, MARGIN_CAP),
        **{name: pair[name] for name in ("emb", "char", "token_sort", "acronym", "cover_query")},
        "emb_over_neighbour": pair["emb"] - pair["emb_hub"],
        "char_over_neighbour": pair["char"] - pair["char_hub"],
        "score_over_table": z - np.float32(table_level),
    }
    columns.update({name: np.full(z.shape, value) for name, value in NO_CLAIM.items()})
    return {k: np.where(valid, v, 0.0).astype(np.float64) for k, v in columns.items()}


def claim_inputs(top_rows: np.ndarray, top_scores: np.ndarray, keys: list | None = None) -> dict[str, np.ndarray]:
    """The :data:`CLAIM_INPUTS` of each query's top answer, read over every query given: its ranking score minus the
    best score of another query with the same top row (:data:`CLAIM_CAP` when there is none), and the log of the
    number of queries with that top row. ``top_rows`` -1 or a non-finite score: no answer (reads :data:`NO_CLAIM`).
    ``keys`` (the query texts): repeats of one text are one query (a vendor on three invoices claims its answer
    once), read once and given to each repeat."""
    if keys is not None:
        first: dict = {}
        index = np.array([first.setdefault(key, i) for i, key in enumerate(keys)], dtype=np.int64)
        unique = np.array(sorted(first.values()), dtype=np.int64)
        if len(unique) < len(index):
            claims = claim_inputs(np.asarray(top_rows)[unique], np.asarray(top_scores)[unique])
            where = np.searchsorted(unique, index)
            return {name: values[where] for name, values in claims.items()}
    top_rows = np.asarray(top_rows, dtype=np.int64)
    score = np.asarray(top_scores, dtype=np.float64)
    gap = np.full(len(top_rows), CLAIM_CAP)
    count = np.ones(len(top_rows))
    idx = np.flatnonzero((top_rows >= 0) & np.isfinite(score))
    order = idx[np.lexsort((-score[idx], top_rows[idx]))]  # by row, the best score first
    rows = top_rows[order]
    starts = np.r_[0, np.flatnonzero(rows[1:] != rows[:-1]) + 1] if len(order) else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, len(order)])
    shared = sizes > 1
    for start, size in zip(starts[shared].tolist(), sizes[shared].tolist()):
        members = order[start : start + size]
        best, second = score[members[0]], score[members[1]]
        gap[members] = np.minimum(score[members] - best, CLAIM_CAP)
        gap[members[0]] = min(best - second, CLAIM_CAP)
        count[members] = size
    return {"claim_gap": gap, "log_claimants": np.log(count)}


def table_level_of(best_other_scores: np.ndarray) -> float:
    """The table level from the self-join sample's best scores against another row (NaN-free; 0 when empty)."""
    values = best_other_scores[np.isfinite(best_other_scores)]
    return float(np.quantile(values, TABLE_QUANTILE)) if values.size else 0.0


@dataclass
class Decision:
    """A logistic model over standardised :data:`INPUTS`, with the probability cut per target precision."""

    inputs: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    cuts: list[list[float]] = field(default_factory=list)  # [target precision, probability cut], rising
    dedupe_cuts: list[list[float]] = field(default_factory=list)  # the same for a dedupe's pairs (merges)
    meta: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION
    #: a decision of its own for a dedupe list's pairs (a Decision as a dict, trained on lists; round 12), if any
    lists: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.format_version != FORMAT_VERSION:
            raise ValueError(f"decision format_version {self.format_version!r}; this phrasezoo reads "
                             f"{FORMAT_VERSION} (upgrade phrasezoo, or re-fit the decision).")  # fmt: skip
        unknown = [name for name in self.inputs if name not in INPUTS]
        if unknown:
            raise ValueError(f"Unknown decision input(s) {unknown}; known: {', '.join(INPUTS)}.")
        sizes = {len(self.inputs), len(self.mean), len(self.scale), len(self.coef)}
        if len(sizes) != 1:
            raise ValueError("A decision needs one mean, scale and coefficient per input.")
        for rows in (self.cuts, self.dedupe_cuts):
            if any(len(row) != 2 for row in rows) or [r[0] for r in rows] != sorted(r[0] for r in rows):
                raise ValueError("A decision's cuts are [target precision, probability] rows, by rising target.")
        if self.lists:
            if self.lists.get("lists") or self.lists.get("dedupe_cuts"):
                raise ValueError("A dedupe decision ('lists') is one model with its own cuts; it nests nothing.")
            Decision.from_dict(self.lists)  # checked once, here

    def for_lists(self) -> Decision:
        """The decision that scores a dedupe list's pairs: the one trained on lists (:attr:`lists`) when there is
        one, else this one (with :attr:`dedupe_cuts` as its cuts when it has them). A list is a reference searched
        against itself, where most rows have no duplicate and near-twin distinct rows abound: a join's decision,
        trained on queries against a reference, takes them for duplicates (round 12)."""
        if self.lists:
            return Decision.from_dict(self.lists)
        if self.dedupe_cuts:
            return Decision(**{**self.__dict__, "cuts": self.dedupe_cuts, "dedupe_cuts": []})
        return self

    def probability(self, columns: dict[str, np.ndarray]) -> np.ndarray:
        """The probability that each answer is right, from its input ``columns`` (any shape, one array each)."""
        z = np.full(np.shape(columns[self.inputs[0]]), self.intercept, dtype=np.float64)
        for name, mean, scale, coef in zip(self.inputs, self.mean, self.scale, self.coef):
            z += coef * (columns[name] - mean) / scale
        return (1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))).astype(np.float32)

    @property
    def reads_claims(self) -> bool:
        return any(name in self.inputs for name in CLAIM_INPUTS)

    def with_claims(self, probability: np.ndarray, top_rows: np.ndarray, top_scores: np.ndarray,
                    keys: list | None = None) -> np.ndarray:  # fmt: skip
        """``probability`` ``(queries, ranks)`` of answers scored with :data:`NO_CLAIM`, the top answers' rescored
        with the claims read over these queries (:func:`claim_inputs`; ``top_rows`` and ``top_scores``, their rows and
        ranking scores; ``keys``, their texts) and the lower ranks capped by them. The model is linear in its inputs,
        so the change is a shift of each top answer's log-odds. A decision without claim inputs returns
        ``probability`` as it is."""
        if not self.reads_claims or len(probability) == 0:
            return probability
        answered = np.asarray(top_rows) >= 0
        return self.shifted(probability, self.claim_shift(claim_inputs(top_rows, top_scores, keys)), answered)

    def claim_shift(self, claims: dict[str, np.ndarray]) -> np.ndarray:
        """The change of each top answer's log-odds from :data:`NO_CLAIM` to ``claims`` (:func:`claim_inputs`'
        columns; NaN reads as no claim)."""
        shift = 0.0
        for name, scale, coef in zip(self.inputs, self.scale, self.coef):
            if name in CLAIM_INPUTS:
                values = np.asarray(claims[name], dtype=np.float64)
                shift = shift + coef * (np.where(np.isnan(values), NO_CLAIM[name], values) - NO_CLAIM[name]) / scale
        return np.broadcast_to(np.asarray(shift, dtype=np.float64), np.shape(claims[CLAIM_INPUTS[0]]))

    @staticmethod
    def shifted(probability: np.ndarray, shift: np.ndarray, answered: np.ndarray) -> np.ndarray:
        """``probability`` ``(queries, ranks)`` with the top answers' log-odds moved by ``shift`` where
        ``answered``, the lower ranks capped by them."""
        p = np.clip(probability[:, 0].astype(np.float64), 1e-12, 1 - 1e-12)
        top = 1.0 / (1.0 + np.exp(-np.clip(np.log(p) - np.log1p(-p) + shift, -60, 60)))
        answered = np.isfinite(probability[:, 0]) & np.asarray(answered, dtype=bool)
        out = probability.copy()
        out[:, 0] = np.where(answered, top, probability[:, 0])
        if out.shape[1] > 1:
            out[:, 1:] = np.where(answered[:, None], np.minimum(out[:, 1:], out[:, :1]), out[:, 1:])
        return out.astype(probability.dtype)

    def cut_for(self, target_precision: float, dedupe: bool = False) -> float:
        """The probability that kept ``target_precision`` on the training joins (interpolated between targets);
        ``dedupe``: the cut of :meth:`for_lists` (set on dedupe lists, where most rows are unique), for the
        probabilities that decision gives a list's pairs."""
        if dedupe:
            return self.for_lists().cut_for(target_precision)
        rows = self.cuts
        if not rows:
            raise ValueError("This decision has no cuts: threshold='auto' is not available; pass a number.")
        targets = [row[0] for row in rows]
        if not targets[0] <= target_precision <= targets[-1]:
            raise ValueError(
                f"target_precision must be in [{targets[0]}, {targets[-1]}] (the calibrated range), got "
                f"{target_precision}: ask for a target in that range, or pass a number as threshold."
            )
        return float(np.interp(target_precision, targets, [row[1] for row in rows]))

    def calibration_rows(self) -> list[list[float]]:
        """``[target precision, probability cut, training recall]`` rows (the layout of a combination's calibration
        table, which the splink comparison reads): the recall is the one ``fit`` measured on the training joins at
        each cut (``meta["recall"]``)."""
        recall = dict((float(t), float(r)) for t, r in self.meta.get("recall", []))
        if not self.cuts or not recall:
            raise ValueError("This decision has no cuts with their training recall (meta['recall']): re-fit it.")
        return [[t, c, recall[t]] for t, c in self.cuts if t in recall]

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": self.format_version, "inputs": list(self.inputs),
                "mean": [float(v) for v in self.mean], "scale": [float(v) for v in self.scale],
                "coef": [float(v) for v in self.coef], "intercept": float(self.intercept),
                "cuts": [[float(a), float(b)] for a, b in self.cuts], "meta": self.meta,
                **({"dedupe_cuts": [[float(a), float(b)] for a, b in self.dedupe_cuts]} if self.dedupe_cuts else {}),
                **({"lists": Decision.from_dict(self.lists).to_dict()} if self.lists else {})}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        keys = ("inputs", "mean", "scale", "coef", "intercept", "cuts", "dedupe_cuts", "meta", "format_version",
                "lists")  # fmt: skip
        return cls(**{k: data[k] for k in keys if k in data})


def keep_ranking_order(probability: np.ndarray, z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``probability`` made non-increasing along each query's ranking order, so that the answer ranked first also
    scores highest: the decision describes a candidate as if it were the answer, and a lower-ranked one must not
    outscore the one the ranking chose."""
    masked = np.where(valid, z, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")
    ranked = np.take_along_axis(np.where(valid, probability, 0.0), order, axis=1)
    ranked = np.minimum.accumulate(ranked, axis=1)
    out = np.empty_like(ranked)
    np.put_along_axis(out, order, ranked, axis=1)
    return np.where(valid, out, 0.0).astype(np.float32)
