"""A combination turns a candidate pair's features into one score: :class:`Combination`, and :data:`BLEND`, the fixed
blend the learned ones are compared with.

The learned combinations (a listwise model over pair features fitted on the dev splits of AutoFJ and the name
benchmark, with the calibration table of ``threshold="auto"``) are data: :mod:`phrasezoo.match.model.learned` reads
them from JSON files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..features.pairs import FEATURES, margins
from .decision import NEEDS as DECISION_NEEDS
from .decision import Decision

LINKS = ("logistic", "identity", "ranked")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))).astype(np.float32)


@dataclass
class Combination:
    """A score from pair features ``f``: ``z = bias + weights . f``, then by ``link``:

    * ``"identity"``: ``z`` (a fixed blend; weights and bias must keep it in [-1, 1]);
    * ``"logistic"``: ``sigmoid(z)`` (a pointwise logistic regression: the probability that the pair matches);
    * ``"ranked"``: ``z`` ranks a query's candidates (a listwise model) and ``sigmoid(a z + b m + c + w . g)``,
      with ``m`` the margin of ``z`` over the query's best other candidate, ``g`` the ``context`` features of the
      query's top-ranked candidate (none by default) and ``probability = [a, b, c, *w]``, turns it into a match
      probability (with ``a, b >= 0`` and ``g`` shared by a query's candidates, the order of ``z`` is kept).

    ``calibration`` lists ``[target_precision, threshold]`` rows measured on dev data (see ``threshold_for``);
    ``meta`` records where the numbers come from (script, data, dev metrics). ``decision`` (a
    :class:`~phrasezoo.match.model.decision.Decision` as a dict; optional) turns the ranking into the probability
    that the top answer names the same thing, absent partners included, with its own cuts for ``threshold="auto"``.
    """

    features: list[str]
    weights: list[float]
    bias: float = 0.0
    link: str = "logistic"
    probability: list[float] = field(default_factory=list)
    calibration: list[list[float]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    context: list[str] = field(default_factory=list)
    decision: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"Unknown feature(s) {unknown}; known: {', '.join(FEATURES)}.")
        if len(self.weights) != len(self.features):
            raise ValueError(f"{len(self.features)} features but {len(self.weights)} weights.")
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {', '.join(LINKS)}, got {self.link!r}.")
        missing = [f for f in self.context if f not in self.features]
        if missing or (self.context and self.link != "ranked"):
            raise ValueError(f"context features must be features of a ranked combination; {missing} are not.")
        if self.link == "ranked" and (len(self.probability) != 3 + len(self.context) or min(self.probability[:2]) < 0):
            raise ValueError("A ranked combination needs probability=[a, b, c, *w] (one w per context feature) with "
                             "a, b >= 0.")  # fmt: skip
        missing = [f for f in DECISION_NEEDS if self.decision and f not in self.features]
        if missing:
            raise ValueError(f"The decision reads pair features {missing} that the combination does not compute.")
        if self.decision:
            Decision.from_dict(self.decision)  # checked once, here
        if self.link == "identity" and sum(abs(w) for w in self.weights) + abs(self.bias) > 1 + 1e-6:
            raise ValueError("An identity combination needs sum(|weights|) + |bias| <= 1, so that scores stay in "
                             "[-1, 1]; scale the weights (the ranking does not change).")  # fmt: skip

    @property
    def decision_model(self) -> Decision | None:
        """The decision over this combination's ranking, when it has one."""
        return Decision.from_dict(self.decision) if self.decision else None

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
        a, b, c = self.probability[:3]
        return _sigmoid(a * z + b * margins(z, valid) + c + self.context_term(features, z, valid))

    def context_term(self, features: np.ndarray, z: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
        """``w . g`` per query (broadcast over its candidates): ``g`` = the context features of the candidate with
        the highest ``z`` among the valid ones; 0 without context."""
        if not self.context:
            return np.zeros(z.shape[:-1] + (1,), dtype=np.float32)
        masked = z if valid is None else np.where(valid, z, -np.inf)
        top = np.argmax(masked, axis=-1)[..., None, None]
        idx = [self.features.index(f) for f in self.context]
        g = np.take_along_axis(features[..., idx], top, axis=-2)[..., 0, :]
        return (g @ np.asarray(self.probability[3:], dtype=np.float32))[..., None].astype(np.float32)

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
                "calibration": self.calibration, "meta": self.meta,
                **({"context": list(self.context)} if self.context else {}),
                **({"decision": self.decision} if self.decision else {})}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combination:
        keys = ("features", "weights", "bias", "link", "probability", "calibration", "meta", "context", "decision")
        return cls(**{k: data[k] for k in keys if k in data})


#: MiniLM cosine + 0.5 x character TF-IDF cosine: the reference blend of issue 36 (weight chosen on dev-10 from 0 to 3)
BLEND = Combination(
    features=["emb", "char"],
    weights=[1 / 1.5, 0.5 / 1.5],  # = (emb + 0.5 char) / 1.5: the same ranking, scores in [-1, 1]
    bias=0.0,
    link="identity",
    meta={"description": "embedding cosine + 0.5 x char TF-IDF cosine (issue 36's reference blend)"},
)
