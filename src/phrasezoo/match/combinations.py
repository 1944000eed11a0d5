"""The combinations the hybrid matcher ships: the learned default and the ten-line blend it is compared with.

``DEFAULT`` is written by ``experiments/matching/matching_dev.py fit`` (a logistic regression over pair features on AutoFJ's
dev-10 candidate pairs, with the calibration table of ``threshold="auto"``); do not edit its numbers by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: every feature a combination may use; a combination names the ones it uses, in its own order
FEATURES = (
    "emb",  # embedding cosine
    "char",  # character 2-4 gram TF-IDF cosine
    "word",  # word TF-IDF cosine
    "emb_margin",  # emb minus the best emb of the query's other candidates (> 0: this candidate is the emb top-1)
    "char_margin",
    "word_margin",
    "num_agree",  # 1 when both names have numbers and they agree (years in 2- or 4-digit form)
    "num_conflict",  # share of numbers not found in the other name, when both have numbers
    "num_one_side",  # 1 when exactly one of the two names has a number
    "acronym",  # 1 (0.5) when one name is the (prefix of the) initials of the other
    "acronym_tokens",  # share of acronym tokens spelling the initials of consecutive words of the other name
    "same_core",  # 1 when both names are equal once their trailing qualifiers are dropped ("X (song)" / "X")
    "same_normal",  # 1 when both names are equal in normal form (case, punctuation and spaces ignored)
    "emb_hub",  # the candidate's best embedding cosine to another reference row (a crowded neighbourhood)
    "char_hub",  # the same for the character TF-IDF cosine
    "static",  # static-embedding cosine (potion-base-8M, the third channel)
    "static_margin",
    "cover_query",  # share of the query's content words found in the candidate (match/name_features.py)
    "cover_candidate",  # share of the candidate's content words found in the query (a qualifier lowers it)
    "short_form",  # 1 when one name is a short form of the other ("C. Dickens" / "Charles Dickens")
    "head_match",  # 1 when both names end in the same content word
    "acronym_soft",  # 1 when an acronym's letters spell the other name's words ("XML" / "eXtensible Markup ...")
)
LINKS = ("logistic", "identity", "ranked")


def margins(scores: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Per row of a ``(queries, candidates)`` score matrix: each score minus the best score of the row's other
    valid candidates (0 when it has no other candidate)."""
    valid = np.ones(scores.shape, dtype=bool) if valid is None else valid
    masked = np.where(valid, scores, -np.inf)
    if masked.shape[1] < 2:
        return np.zeros_like(scores)
    order = np.argsort(-masked, axis=1, kind="stable")
    top1 = np.take_along_axis(masked, order[:, :1], axis=1)
    top2 = np.take_along_axis(masked, order[:, 1:2], axis=1)
    other = np.where(np.arange(masked.shape[1])[None, :] == order[:, :1], top2, top1)
    out = np.where(np.isfinite(other), scores - other, 0.0)
    return np.where(valid, out, 0.0).astype(np.float32)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))).astype(np.float32)


@dataclass
class Combination:
    """A score from pair features ``f``: ``z = bias + weights . f``, then by ``link``:

    * ``"identity"``: ``z`` (a fixed blend; weights and bias must keep it in [-1, 1]);
    * ``"logistic"``: ``sigmoid(z)`` (a pointwise logistic regression: the probability that the pair matches);
    * ``"ranked"``: ``z`` ranks a query's candidates (a listwise model) and ``sigmoid(a z + b m + c)``, with ``m``
      the margin of ``z`` over the query's best other candidate and ``probability = [a, b, c]``, turns it into a
      match probability (with ``a, b >= 0`` the order of ``z`` is kept).

    ``calibration`` lists ``[target_precision, threshold]`` rows measured on dev data (see ``threshold_for``);
    ``meta`` records where the numbers come from (script, data, dev metrics).
    """

    features: list[str]
    weights: list[float]
    bias: float = 0.0
    link: str = "logistic"
    probability: list[float] = field(default_factory=list)
    calibration: list[list[float]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"Unknown feature(s) {unknown}; known: {', '.join(FEATURES)}.")
        if len(self.weights) != len(self.features):
            raise ValueError(f"{len(self.features)} features but {len(self.weights)} weights.")
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {', '.join(LINKS)}, got {self.link!r}.")
        if self.link == "ranked" and (len(self.probability) != 3 or min(self.probability[:2]) < 0):
            raise ValueError("A ranked combination needs probability=[a, b, c] with a, b >= 0.")
        if self.link == "identity" and sum(abs(w) for w in self.weights) + abs(self.bias) > 1 + 1e-6:
            raise ValueError("An identity combination needs sum(|weights|) + |bias| <= 1, so that scores stay in "
                             "[-1, 1]; scale the weights (the ranking does not change).")  # fmt: skip

    def rank_score(self, features: np.ndarray) -> np.ndarray:
        """``z = bias + weights . f`` for ``features`` (``(..., len(self.features))``, in this combination's order)."""
        return (features @ np.asarray(self.weights, dtype=np.float32) + np.float32(self.bias)).astype(np.float32)

    def score(self, features: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
        """Scores of candidate pairs: ``features`` is ``(queries, candidates, len(self.features))`` (``valid`` marks
        real candidates; the margins of a ranked combination are taken over them)."""
        z = self.rank_score(features)
        if self.link == "identity":
            return z
        if self.link == "logistic":
            return _sigmoid(z)
        a, b, c = self.probability
        return _sigmoid(a * z + b * margins(z, valid) + c)

    def threshold_for(self, target_precision: float) -> float:
        """The score threshold whose matches reached ``target_precision`` on the calibration data (mean over its
        datasets); raises when this combination was not calibrated or the target is outside the table."""
        if not self.calibration:
            raise ValueError("threshold='auto' needs a calibrated combination (the default matcher has one).")
        table = sorted(self.calibration)
        low, high = table[0][0], table[-1][0]
        if not low <= target_precision <= high:
            raise ValueError(
                f"target_precision must be in [{low}, {high}] (the calibrated range), got {target_precision}."
            )
        targets = np.array([row[0] for row in table])
        thresholds = np.array([row[1] for row in table])
        return float(np.interp(target_precision, targets, thresholds))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": [float(w) for w in self.weights], "bias": float(self.bias),
                "link": self.link, "probability": [float(v) for v in self.probability],
                "calibration": self.calibration, "meta": self.meta}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combination:
        keys = ("features", "weights", "bias", "link", "probability", "calibration", "meta")
        return cls(**{k: data[k] for k in keys if k in data})


#: MiniLM cosine + 0.5 x character TF-IDF cosine: the reference blend of issue 36 (weight chosen on dev-10 from 0 to 3)
BLEND = Combination(
    features=["emb", "char"],
    weights=[1 / 1.5, 0.5 / 1.5],  # = (emb + 0.5 char) / 1.5: the same ranking, scores in [-1, 1]
    bias=0.0,
    link="identity",
    meta={"description": "embedding cosine + 0.5 x char TF-IDF cosine (issue 36's reference blend)"},
)


# --- generated by experiments/matching/matching_dev.py fit: start
LEARNED = {
    "baseline:minilm-l6": {
        "features": [
            "emb",
            "char",
            "emb_margin",
            "char_margin",
            "num_agree",
            "num_conflict",
            "num_one_side",
            "acronym",
            "acronym_tokens",
            "same_core",
            "same_normal",
            "emb_hub",
            "char_hub",
        ],
        "weights": [
            1.5498648804731618,
            3.16640593936302,
            2.838763583480914,
            4.024549776034732,
            1.6010115202655009,
            -2.9468982744367858,
            -0.14666042355163086,
            0.044613262057937406,
            1.9831053386296678,
            2.3193706175893896,
            0.14178319720903806,
            -1.2593108140633626,
            -1.5831315302053883,
        ],
        "bias": 0.0,
        "link": "ranked",
        "probability": [0.5696950057439253, 0.5318052358160511, -1.6866844088179909],
        "calibration": [
            [0.5, 0.033597, 0.784],
            [0.51, 0.033597, 0.784],
            [0.52, 0.033597, 0.784],
            [0.53, 0.033597, 0.784],
            [0.54, 0.033597, 0.784],
            [0.55, 0.033597, 0.784],
            [0.56, 0.033597, 0.784],
            [0.57, 0.033597, 0.784],
            [0.58, 0.033597, 0.784],
            [0.59, 0.033597, 0.784],
            [0.6, 0.033597, 0.784],
            [0.61, 0.033597, 0.784],
            [0.62, 0.033597, 0.784],
            [0.63, 0.033597, 0.784],
            [0.64, 0.033597, 0.784],
            [0.65, 0.033597, 0.784],
            [0.66, 0.033597, 0.784],
            [0.67, 0.033597, 0.784],
            [0.68, 0.033597, 0.784],
            [0.69, 0.033597, 0.784],
            [0.7, 0.033597, 0.784],
            [0.71, 0.033597, 0.784],
            [0.72, 0.033597, 0.784],
            [0.73, 0.033597, 0.784],
            [0.74, 0.033597, 0.784],
            [0.75, 0.033597, 0.784],
            [0.76, 0.033597, 0.784],
            [0.77, 0.033597, 0.784],
            [0.78, 0.033597, 0.784],
            [0.79, 0.119613, 0.7821],
            [0.8, 0.151992, 0.7818],
            [0.81, 0.201218, 0.7816],
            [0.82, 0.251855, 0.7785],
            [0.83, 0.291542, 0.7673],
            [0.84, 0.342828, 0.7566],
            [0.85, 0.371685, 0.7502],
            [0.86, 0.394622, 0.738],
            [0.87, 0.434146, 0.728],
            [0.88, 0.476263, 0.7169],
            [0.89, 0.515995, 0.7121],
            [0.9, 0.537267, 0.7089],
            [0.91, 0.589278, 0.6912],
            [0.92, 0.617184, 0.6817],
            [0.93, 0.650304, 0.6683],
            [0.94, 0.684818, 0.654],
            [0.95, 0.767584, 0.6296],
            [0.96, 0.81108, 0.6148],
            [0.97, 0.867681, 0.5775],
            [0.98, 0.964761, 0.4297],
            [0.99, 0.983852, 0.3457],
        ],
        "meta": {
            "encoder": "baseline:minilm-l6",
            "trained_on": "autofj_dev (Amphibian, Case, Drug, FootballMatch, Hospital, "
            "MotorsportSeason, Noble, RugbyLeague, Song, TennisTournament)",
            "candidates": 10,
            "feature_set": "+hub",
            "command": "experiments/matching/matching_dev.py fit --model baseline:minilm-l6 --features '+hub' --candidates 10",
            "dev_cross_fitted": {
                "accuracy": 0.784,
                "recall_at_p90": 0.7079,
                "best_f1": 0.818,
                "candidate_recall": 0.8822,
            },
            "created": "2026-11-27T10:03:10+00:00",
            "dev_auto_threshold": {
                "0.8": {"precision": 0.8002, "recall": 0.7818},
                "0.9": {"precision": 0.9008, "recall": 0.7089},
                "0.95": {"precision": 0.9501, "recall": 0.6296},
            },
        },
    }
}
# --- generated: end


def default_combination(encoder_name: str | None = None) -> Combination:
    """The combination the hybrid matcher uses with ``encoder_name``: the one learned for that encoder on AutoFJ's
    dev datasets, else the one learned for the default encoder (its features are cosines and lexical clues, so it
    carries over to other encoders; measured in docs/experiments/matching.md)."""
    from .scorers import DEFAULT_ENCODER

    learned = LEARNED.get(encoder_name) or LEARNED.get(DEFAULT_ENCODER)
    return Combination.from_dict(learned) if learned else BLEND
