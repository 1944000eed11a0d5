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
    "fuzzy_cover_query",  # cover_query where a word with one typo or abbreviated ("Intl") counts as found
    "fuzzy_cover_candidate",  # the same for the candidate's words
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
            "static",
            "static_margin",
            "cover_query",
            "cover_candidate",
            "short_form",
            "head_match",
            "acronym_soft",
        ],
        "weights": [
            1.4798109825101329,
            2.61650224862052,
            2.1080249562712288,
            3.9642075763049043,
            1.7963415397707538,
            -1.7883065647784375,
            -0.1435020391712023,
            2.2575617268307773,
            2.6770885021550748,
            1.4900195292954868,
            0.0683198212606202,
            -0.25379127121433326,
            -0.3279302510773556,
            0.7536099040655839,
            1.0962244135838701,
            0.2769465617409558,
            -0.24320921403539816,
            0.884938943961629,
            0.5981961272835938,
            4.076127149608099,
        ],
        "bias": 0.0,
        "link": "ranked",
        "probability": [0.6486841807421712, 0.5599224089689847, -2.6696726600400638],
        "calibration": [
            [0.5, 0.02336, 0.8147],
            [0.51, 0.02336, 0.8147],
            [0.52, 0.02336, 0.8147],
            [0.53, 0.02336, 0.8147],
            [0.54, 0.02336, 0.8147],
            [0.55, 0.02336, 0.8147],
            [0.56, 0.02336, 0.8147],
            [0.57, 0.02336, 0.8147],
            [0.58, 0.02336, 0.8147],
            [0.59, 0.02336, 0.8147],
            [0.6, 0.02336, 0.8147],
            [0.61, 0.02336, 0.8147],
            [0.62, 0.02336, 0.8147],
            [0.63, 0.02336, 0.8147],
            [0.64, 0.02336, 0.8147],
            [0.65, 0.02336, 0.8147],
            [0.66, 0.02336, 0.8147],
            [0.67, 0.02336, 0.8147],
            [0.68, 0.02336, 0.8147],
            [0.69, 0.02336, 0.8147],
            [0.7, 0.02336, 0.8147],
            [0.71, 0.02336, 0.8147],
            [0.72, 0.02336, 0.8147],
            [0.73, 0.02336, 0.8147],
            [0.74, 0.02336, 0.8147],
            [0.75, 0.02336, 0.8147],
            [0.76, 0.02336, 0.8147],
            [0.77, 0.02336, 0.8147],
            [0.78, 0.02336, 0.8147],
            [0.79, 0.02336, 0.8147],
            [0.8, 0.02336, 0.8147],
            [0.81, 0.02336, 0.8147],
            [0.82, 0.070611, 0.8147],
            [0.83, 0.085276, 0.8147],
            [0.84, 0.10421, 0.8133],
            [0.85, 0.119899, 0.8126],
            [0.86, 0.136563, 0.8119],
            [0.87, 0.169488, 0.8098],
            [0.88, 0.214054, 0.8067],
            [0.89, 0.267734, 0.802],
            [0.9, 0.314621, 0.7983],
            [0.91, 0.355024, 0.7934],
            [0.92, 0.423766, 0.7864],
            [0.93, 0.491227, 0.779],
            [0.94, 0.542871, 0.7712],
            [0.95, 0.635458, 0.7557],
            [0.96, 0.721342, 0.7378],
            [0.97, 0.807494, 0.7069],
            [0.98, 0.93417, 0.6134],
            [0.99, 0.986143, 0.4767],
        ],
        "meta": {
            "encoder": "baseline:minilm-l6",
            "trained_on": "autofj_dev (10 tables, one domain) + the name benchmark's dev "
            "splits (acronyms, aliases, short-names, noisy), each domain "
            "weighted equally",
            "candidates": 10,
            "feature_set": "+hub +static +name words",
            "command": "experiments/matching/names_dev.py fit --features '+hub +static +name words' --candidates 10",
            "dev_cross_fitted": {
                "accuracy": 0.8147,
                "mrr10": 0.8367,
                "candidate_recall": 0.8834,
                "recall_at_p90": 0.7843,
            },
            "dev_cross_fitted_per_domain": {
                "autofj": {"accuracy": 0.7734, "mrr10": 0.8096, "candidate_recall": 0.8868, "recall_at_p90": 0.6926},
                "acronyms": {"accuracy": 0.7467, "mrr10": 0.7584, "candidate_recall": 0.78, "recall_at_p90": 0.74},
                "aliases": {"accuracy": 0.5976, "mrr10": 0.6422, "candidate_recall": 0.7521, "recall_at_p90": 0.5331},
                "short-names": {"accuracy": 0.9906, "mrr10": 0.9939, "candidate_recall": 1.0, "recall_at_p90": 0.9906},
                "noisy": {"accuracy": 0.965, "mrr10": 0.9793, "candidate_recall": 0.9983, "recall_at_p90": 0.965},
            },
            "created": "2026-11-28T00:52:33+00:00",
            "dev_auto_threshold": {
                "0.8": {"precision": 0.8147, "recall": 0.8147},
                "0.9": {"precision": 0.9, "recall": 0.7983},
                "0.95": {"precision": 0.9506, "recall": 0.7557},
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
