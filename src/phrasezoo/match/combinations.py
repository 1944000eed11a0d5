"""The combinations the hybrid matcher ships: the learned default and the ten-line blend it is compared with.

``DEFAULT`` is written by ``benchmarks/matching_dev.py fit`` (a logistic regression over pair features on AutoFJ's
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


# --- generated by benchmarks/matching_dev.py fit: start
LEARNED = {}
# --- generated: end


def default_combination(encoder_name: str | None = None) -> Combination:
    """The combination the hybrid matcher uses with ``encoder_name``: the one learned for that encoder on AutoFJ's
    dev datasets, else the one learned for the default encoder (its features are cosines and lexical clues, so it
    carries over to other encoders; measured in docs/experiments/matching.md)."""
    from .scorers import DEFAULT_ENCODER

    learned = LEARNED.get(encoder_name) or LEARNED.get(DEFAULT_ENCODER)
    return Combination.from_dict(learned) if learned else BLEND
