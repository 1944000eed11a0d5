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
    "token_sort",  # edit similarity of the two names with their words sorted (rapidfuzz token_sort_ratio / 100)
    "token_sort_margin",
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
    * ``"ranked"``: ``z`` ranks a query's candidates (a listwise model) and ``sigmoid(a z + b m + c + w . g)``,
      with ``m`` the margin of ``z`` over the query's best other candidate, ``g`` the ``context`` features of the
      query's top-ranked candidate (none by default) and ``probability = [a, b, c, *w]``, turns it into a match
      probability (with ``a, b >= 0`` and ``g`` shared by a query's candidates, the order of ``z`` is kept).

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
    context: list[str] = field(default_factory=list)

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
                **({"context": list(self.context)} if self.context else {})}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combination:
        keys = ("features", "weights", "bias", "link", "probability", "calibration", "meta", "context")
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
            "fuzzy_cover_query",
            "fuzzy_cover_candidate",
            "token_sort",
            "token_sort_margin",
        ],
        "weights": [
            1.3590645310244618,
            1.6341581701392447,
            2.0007619882509013,
            2.497378437069715,
            1.8359757943282589,
            -1.8187817358296927,
            -0.13633014544446612,
            2.3570139659725733,
            2.689663372163024,
            1.5041877886866644,
            0.053603246875960214,
            -0.31073254886247126,
            -0.24425433235561614,
            0.6262534526387915,
            0.9695074851002217,
            0.16128264103276294,
            -0.30063252985299244,
            0.9973947680615644,
            0.4601396327209957,
            4.117463199464308,
            1.0563212135235938,
            0.720095695565777,
            0.7810735112441487,
            1.7609528438220727,
        ],
        "bias": 0.0,
        "link": "ranked",
        "probability": [
            0.7418441786091508,
            0.5694541424770071,
            -3.1053212114014563,
            -1.1967303435964747,
            -0.700421265631568,
            1.2316543579244665,
            2.08197130839268,
            -0.18961728044328585,
        ],
        "calibration": [
            [0.5, 0.010071, 0.8205],
            [0.51, 0.010071, 0.8205],
            [0.52, 0.010071, 0.8205],
            [0.53, 0.052254, 0.8197],
            [0.54, 0.064632, 0.8194],
            [0.55, 0.077491, 0.8184],
            [0.56, 0.087116, 0.817],
            [0.57, 0.094332, 0.8163],
            [0.58, 0.102073, 0.8163],
            [0.59, 0.112157, 0.816],
            [0.6, 0.123718, 0.8156],
            [0.61, 0.132909, 0.815],
            [0.62, 0.143643, 0.8146],
            [0.63, 0.153994, 0.8142],
            [0.64, 0.171425, 0.8132],
            [0.65, 0.188603, 0.8125],
            [0.66, 0.200326, 0.8114],
            [0.67, 0.20644, 0.811],
            [0.68, 0.223296, 0.8097],
            [0.69, 0.23646, 0.8095],
            [0.7, 0.253148, 0.8083],
            [0.71, 0.270668, 0.807],
            [0.72, 0.279994, 0.8066],
            [0.73, 0.305047, 0.8047],
            [0.74, 0.330381, 0.8035],
            [0.75, 0.343917, 0.8022],
            [0.76, 0.370538, 0.7992],
            [0.77, 0.389161, 0.7982],
            [0.78, 0.423888, 0.7967],
            [0.79, 0.47663, 0.7919],
            [0.8, 0.527672, 0.7858],
            [0.81, 0.551803, 0.7839],
            [0.82, 0.569673, 0.7811],
            [0.83, 0.603781, 0.7749],
            [0.84, 0.661453, 0.7668],
            [0.85, 0.73129, 0.7533],
            [0.86, 0.756936, 0.7457],
            [0.87, 0.820717, 0.7265],
            [0.88, 0.874086, 0.7011],
            [0.89, 0.905577, 0.672],
            [0.9, 0.94008, 0.6242],
            [0.91, 0.975972, 0.5544],
            [0.92, 0.982897, 0.528],
            [0.93, 0.989744, 0.4839],
            [0.94, 0.998143, 0.3284],
            [0.95, 0.999747, 0.1956],
            [0.96, 0.999759, 0.1925],
            [0.97, 0.999759, 0.1925],
            [0.98, 0.999926, 0.1229],
            [0.99, 0.999926, 0.1229],
        ],
        "meta": {
            "encoder": "baseline:minilm-l6",
            "encoder_revision": "sha256:53aa51172d14",
            "trained_on": "autofj_dev (10 tables, one domain) + the name benchmark's dev "
            "splits (acronyms, aliases, short-names, noisy), each domain "
            "weighted equally",
            "candidates": 10,
            "feature_set": "+hub +static +name words +fuzzy +token sort",
            "command": "experiments/matching/names_dev.py fit --model baseline:minilm-l6 "
            "--features '+hub +static +name words +fuzzy +token sort' --candidates "
            "10",
            "dev_cross_fitted": {
                "accuracy": 0.8205,
                "mrr10": 0.8387,
                "candidate_recall": 0.8834,
                "recall_at_p90": 0.7857,
            },
            "dev_cross_fitted_per_domain": {
                "autofj": {"accuracy": 0.7758, "mrr10": 0.8072, "candidate_recall": 0.8868, "recall_at_p90": 0.6896},
                "acronyms": {"accuracy": 0.745, "mrr10": 0.7569, "candidate_recall": 0.78, "recall_at_p90": 0.7317},
                "aliases": {"accuracy": 0.6095, "mrr10": 0.6458, "candidate_recall": 0.7521, "recall_at_p90": 0.5348},
                "short-names": {"accuracy": 0.9906, "mrr10": 0.9949, "candidate_recall": 1.0, "recall_at_p90": 0.9906},
                "noisy": {"accuracy": 0.9817, "mrr10": 0.9889, "candidate_recall": 0.9983, "recall_at_p90": 0.9817},
            },
            "created": "2026-11-29T08:55:11+00:00",
            "dev_auto_threshold": {
                "0.8": {"precision": 0.9435, "recall": 0.7858},
                "0.9": {"precision": 0.9814, "recall": 0.6242},
                "0.95": {"precision": 1.0, "recall": 0.1956},
            },
            "dev_auto_threshold_per_domain": {
                "autofj": {
                    "0.8": {"precision": 0.8741, "recall": 0.7374},
                    "0.9": {"precision": 0.9652, "recall": 0.4754},
                    "0.95": {"precision": 1.0, "recall": 0.0902},
                },
                "acronyms": {
                    "0.8": {"precision": 0.945, "recall": 0.72},
                    "0.9": {"precision": 0.985, "recall": 0.66},
                    "0.95": {"precision": 1.0, "recall": 0.49},
                },
                "aliases": {
                    "0.8": {"precision": 0.9102, "recall": 0.5314},
                    "0.9": {"precision": 0.9594, "recall": 0.3836},
                    "0.95": {"precision": 1.0, "recall": 0.0695},
                },
                "short-names": {
                    "0.8": {"precision": 0.9952, "recall": 0.9788},
                    "0.9": {"precision": 1.0, "recall": 0.8868},
                    "0.95": {"precision": 1.0, "recall": 0.2335},
                },
                "noisy": {
                    "0.8": {"precision": 0.9932, "recall": 0.9617},
                    "0.9": {"precision": 0.9974, "recall": 0.715},
                    "0.95": {"precision": 1.0, "recall": 0.095},
                },
            },
            "calibration": {
                "rules": "docs/experiments/matching.md, rules 10-13",
                "rule_11": "calib",
                "rule_12": "bound",
                "command": "OMP_NUM_THREADS=1 .venv/bin/python "
                "experiments/matching/names_calibration.py --model "
                "baseline:minilm-l6 --write",
            },
        },
        "context": ["emb", "char", "token_sort", "acronym", "cover_query"],
    },
    "baseline:nomic-v1.5": {
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
            "fuzzy_cover_query",
            "fuzzy_cover_candidate",
            "token_sort",
            "token_sort_margin",
        ],
        "weights": [
            2.205729480326605,
            1.5524439548573814,
            2.9920709539462598,
            2.489704772184845,
            1.5800773629895897,
            -1.649425781131331,
            -0.1824496182182086,
            2.209303351842362,
            2.6536505601053175,
            1.4959298385414677,
            0.048990845875906824,
            -0.32426048668969826,
            -0.16645249994712458,
            0.5341245839807545,
            0.90230472923265,
            0.17972439256148795,
            -0.35123850405676305,
            0.8849003276112799,
            0.28976857062004036,
            3.935670371819894,
            0.9007400607372682,
            0.662367601592439,
            0.6504120537273014,
            1.6721942029498567,
        ],
        "bias": 0.0,
        "link": "ranked",
        "probability": [0.6688076452141393, 0.6265188257139457, -3.5058204032990283],
        "calibration": [
            [0.5, 0.028234, 0.8241],
            [0.51, 0.028234, 0.8241],
            [0.52, 0.028234, 0.8241],
            [0.53, 0.037018, 0.8241],
            [0.54, 0.057021, 0.8238],
            [0.55, 0.066119, 0.8234],
            [0.56, 0.076432, 0.8228],
            [0.57, 0.082576, 0.8224],
            [0.58, 0.09136, 0.8221],
            [0.59, 0.100047, 0.822],
            [0.6, 0.10885, 0.8213],
            [0.61, 0.12265, 0.8199],
            [0.62, 0.132609, 0.8192],
            [0.63, 0.145688, 0.8189],
            [0.64, 0.160252, 0.8184],
            [0.65, 0.173418, 0.8181],
            [0.66, 0.181274, 0.8176],
            [0.67, 0.191775, 0.8173],
            [0.68, 0.207393, 0.8171],
            [0.69, 0.216961, 0.8166],
            [0.7, 0.234518, 0.8158],
            [0.71, 0.250614, 0.8151],
            [0.72, 0.268905, 0.815],
            [0.73, 0.282303, 0.8136],
            [0.74, 0.302746, 0.8116],
            [0.75, 0.327737, 0.8089],
            [0.76, 0.34315, 0.8077],
            [0.77, 0.375365, 0.8054],
            [0.78, 0.406692, 0.8041],
            [0.79, 0.447671, 0.8007],
            [0.8, 0.48628, 0.7986],
            [0.81, 0.51908, 0.7945],
            [0.82, 0.557823, 0.789],
            [0.83, 0.618376, 0.7796],
            [0.84, 0.667968, 0.7718],
            [0.85, 0.709163, 0.7611],
            [0.86, 0.756491, 0.7507],
            [0.87, 0.82246, 0.7263],
            [0.88, 0.850414, 0.7156],
            [0.89, 0.881243, 0.6951],
            [0.9, 0.93625, 0.6408],
            [0.91, 0.978315, 0.5458],
            [0.92, 0.984164, 0.5151],
            [0.93, 0.988348, 0.4897],
            [0.94, 0.994467, 0.4056],
            [0.95, 0.999895, 0.0736],
            [0.96, 0.999945, 0.0527],
            [0.97, 0.999945, 0.0527],
            [0.98, 0.999945, 0.0527],
            [0.99, 0.999945, 0.0527],
        ],
        "meta": {
            "encoder": "baseline:nomic-v1.5",
            "encoder_revision": "sha256:7e5b11da2cdc",
            "trained_on": "autofj_dev (10 tables, one domain) + the name benchmark's dev "
            "splits (acronyms, aliases, short-names, noisy), each domain "
            "weighted equally",
            "candidates": 10,
            "feature_set": "+hub +static +name words +fuzzy +token sort",
            "command": "experiments/matching/names_dev.py fit --model baseline:nomic-v1.5 "
            "--features '+hub +static +name words +fuzzy +token sort' "
            "--candidates 10",
            "dev_cross_fitted": {
                "accuracy": 0.8241,
                "mrr10": 0.8438,
                "candidate_recall": 0.892,
                "recall_at_p90": 0.7944,
            },
            "dev_cross_fitted_per_domain": {
                "autofj": {"accuracy": 0.7791, "mrr10": 0.8132, "candidate_recall": 0.8979, "recall_at_p90": 0.7101},
                "acronyms": {"accuracy": 0.7583, "mrr10": 0.7693, "candidate_recall": 0.8033, "recall_at_p90": 0.7467},
                "aliases": {"accuracy": 0.6078, "mrr10": 0.6506, "candidate_recall": 0.7606, "recall_at_p90": 0.5399},
                "short-names": {"accuracy": 0.9953, "mrr10": 0.9976, "candidate_recall": 1.0, "recall_at_p90": 0.9953},
                "noisy": {"accuracy": 0.98, "mrr10": 0.9881, "candidate_recall": 0.9983, "recall_at_p90": 0.98},
            },
            "created": "2026-11-28T23:31:33+00:00",
            "dev_auto_threshold": {
                "0.8": {"precision": 0.936, "recall": 0.7986},
                "0.9": {"precision": 0.9811, "recall": 0.6408},
                "0.95": {"precision": 1.0, "recall": 0.0736},
            },
            "dev_auto_threshold_per_domain": {
                "autofj": {
                    "0.8": {"precision": 0.8514, "recall": 0.7545},
                    "0.9": {"precision": 0.9637, "recall": 0.5478},
                    "0.95": {"precision": 1.0, "recall": 0.0563},
                },
                "acronyms": {
                    "0.8": {"precision": 0.942, "recall": 0.7317},
                    "0.9": {"precision": 0.9868, "recall": 0.6233},
                    "0.95": {"precision": 1.0, "recall": 0.0133},
                },
                "aliases": {
                    "0.8": {"precision": 0.8982, "recall": 0.5535},
                    "0.9": {"precision": 0.9577, "recall": 0.4159},
                    "0.95": {"precision": 1.0, "recall": 0.0509},
                },
                "short-names": {
                    "0.8": {"precision": 0.9952, "recall": 0.9882},
                    "0.9": {"precision": 1.0, "recall": 0.9151},
                    "0.95": {"precision": 1.0, "recall": 0.1958},
                },
                "noisy": {
                    "0.8": {"precision": 0.9932, "recall": 0.965},
                    "0.9": {"precision": 0.9974, "recall": 0.7017},
                    "0.95": {"precision": 1.0, "recall": 0.0517},
                },
            },
            "calibration": {
                "rules": "docs/experiments/matching.md, rules 10-13",
                "rule_11": "calib",
                "rule_12": "bound",
                "command": "OMP_NUM_THREADS=1 .venv/bin/python "
                "experiments/matching/names_calibration.py --model "
                "baseline:nomic-v1.5 --write",
            },
        },
    },
    "baseline:minilm-l6@onnx-int8": {
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
            "fuzzy_cover_query",
            "fuzzy_cover_candidate",
            "token_sort",
            "token_sort_margin",
        ],
        "weights": [
            1.3775816019408826,
            1.6288309458495724,
            2.0136010591695137,
            2.5065535584433354,
            1.8369364149183574,
            -1.8219803905528495,
            -0.13714303928374033,
            2.3312823047608506,
            2.7717307100550195,
            1.5022346424760908,
            0.05323258162429683,
            -0.318829357026124,
            -0.2111805501621136,
            0.628911085575687,
            0.9793909820548284,
            0.14749018288338342,
            -0.30991729037543964,
            1.0029000405412285,
            0.4506964248776704,
            4.096992747786882,
            1.0465568135346004,
            0.7152503890033519,
            0.7752899560336145,
            1.7670167526571599,
        ],
        "bias": 0.0,
        "link": "ranked",
        "probability": [
            0.7568163882294102,
            0.5554178344828431,
            -3.0831288510090205,
            -1.3424068357116978,
            -0.6864261001654475,
            1.250784795176796,
            2.039909088294392,
            -0.12425094336027072,
        ],
        "calibration": [
            [0.5, 0.013399, 0.821],
            [0.51, 0.013399, 0.821],
            [0.52, 0.013399, 0.821],
            [0.53, 0.050273, 0.8203],
            [0.54, 0.063673, 0.82],
            [0.55, 0.075895, 0.819],
            [0.56, 0.084737, 0.8183],
            [0.57, 0.092638, 0.8173],
            [0.58, 0.09952, 0.817],
            [0.59, 0.108524, 0.8166],
            [0.6, 0.120216, 0.8166],
            [0.61, 0.131465, 0.8162],
            [0.62, 0.142119, 0.8156],
            [0.63, 0.150652, 0.8148],
            [0.64, 0.166921, 0.8148],
            [0.65, 0.1847, 0.814],
            [0.66, 0.200585, 0.8124],
            [0.67, 0.209621, 0.8115],
            [0.68, 0.22038, 0.81],
            [0.69, 0.233435, 0.8099],
            [0.7, 0.253826, 0.8091],
            [0.71, 0.270927, 0.8078],
            [0.72, 0.284671, 0.8067],
            [0.73, 0.309453, 0.805],
            [0.74, 0.327815, 0.804],
            [0.75, 0.349309, 0.803],
            [0.76, 0.372709, 0.7994],
            [0.77, 0.388856, 0.7988],
            [0.78, 0.423326, 0.7963],
            [0.79, 0.469074, 0.7932],
            [0.8, 0.524312, 0.7862],
            [0.81, 0.548546, 0.7838],
            [0.82, 0.577628, 0.7794],
            [0.83, 0.615652, 0.7744],
            [0.84, 0.674452, 0.765],
            [0.85, 0.73465, 0.7515],
            [0.86, 0.764391, 0.7445],
            [0.87, 0.830746, 0.7224],
            [0.88, 0.871107, 0.7028],
            [0.89, 0.906455, 0.6689],
            [0.9, 0.948822, 0.6119],
            [0.91, 0.977137, 0.552],
            [0.92, 0.983432, 0.5257],
            [0.93, 0.990038, 0.4801],
            [0.94, 0.998048, 0.3349],
            [0.95, 0.99974, 0.1968],
            [0.96, 0.999748, 0.1958],
            [0.97, 0.999748, 0.1958],
            [0.98, 0.999925, 0.1216],
            [0.99, 0.999925, 0.1216],
        ],
        "meta": {
            "encoder": "baseline:minilm-l6@onnx-int8",
            "encoder_revision": "sha256:53aa51172d14+onnx-int8-ort1.32.0-r2-e3",
            "trained_on": "autofj_dev (10 tables, one domain) + the name "
            "benchmark's dev splits (acronyms, aliases, short-names, "
            "noisy), each domain weighted equally",
            "candidates": 10,
            "feature_set": "+hub +static +name words +fuzzy +token sort",
            "command": "experiments/matching/names_dev.py fit --features '+hub "
            "+static +name words +fuzzy +token sort' --candidates 10",
            "dev_cross_fitted": {
                "accuracy": 0.821,
                "mrr10": 0.8392,
                "candidate_recall": 0.8834,
                "recall_at_p90": 0.7868,
            },
            "dev_cross_fitted_per_domain": {
                "autofj": {"accuracy": 0.7767, "mrr10": 0.808, "candidate_recall": 0.8868, "recall_at_p90": 0.6919},
                "acronyms": {"accuracy": 0.745, "mrr10": 0.7571, "candidate_recall": 0.78, "recall_at_p90": 0.7317},
                "aliases": {"accuracy": 0.6095, "mrr10": 0.6461, "candidate_recall": 0.7521, "recall_at_p90": 0.5365},
                "short-names": {"accuracy": 0.9906, "mrr10": 0.9949, "candidate_recall": 1.0, "recall_at_p90": 0.9906},
                "noisy": {"accuracy": 0.9833, "mrr10": 0.9901, "candidate_recall": 0.9983, "recall_at_p90": 0.9833},
            },
            "created": "2026-11-29T08:56:29+00:00",
            "dev_auto_threshold": {
                "0.8": {"precision": 0.9429, "recall": 0.7862},
                "0.9": {"precision": 0.9816, "recall": 0.6119},
                "0.95": {"precision": 0.9999, "recall": 0.1968},
            },
            "dev_auto_threshold_per_domain": {
                "autofj": {
                    "0.8": {"precision": 0.8729, "recall": 0.7376},
                    "0.9": {"precision": 0.9671, "recall": 0.4565},
                    "0.95": {"precision": 0.9995, "recall": 0.0912},
                },
                "acronyms": {
                    "0.8": {"precision": 0.9428, "recall": 0.7183},
                    "0.9": {"precision": 0.985, "recall": 0.6583},
                    "0.95": {"precision": 1.0, "recall": 0.49},
                },
                "aliases": {
                    "0.8": {"precision": 0.9107, "recall": 0.5348},
                    "0.9": {"precision": 0.9585, "recall": 0.3751},
                    "0.95": {"precision": 1.0, "recall": 0.0712},
                },
                "short-names": {
                    "0.8": {"precision": 0.9952, "recall": 0.9788},
                    "0.9": {"precision": 1.0, "recall": 0.8797},
                    "0.95": {"precision": 1.0, "recall": 0.2382},
                },
                "noisy": {
                    "0.8": {"precision": 0.9932, "recall": 0.9617},
                    "0.9": {"precision": 0.9973, "recall": 0.69},
                    "0.95": {"precision": 1.0, "recall": 0.0933},
                },
            },
            "calibration": {
                "rules": "docs/experiments/matching.md, rules 10-13",
                "rule_11": "calib",
                "rule_12": "bound",
                "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_calibration.py --write",
            },
        },
        "context": ["emb", "char", "token_sort", "acronym", "cover_query"],
    },
}
# --- generated: end


def default_combination(encoder_name: str | None = None) -> Combination:
    """The combination the hybrid matcher uses with ``encoder_name``: the one learned for that encoder on the dev
    splits (here, or in a method's ``matcher`` plug-in for the zoo's exports), else the one learned for the default
    encoder (its features are cosines and lexical clues, so it carries over to other encoders; measured in
    docs/experiments/matching.md)."""
    from .scorers import DEFAULT_ENCODER

    learned = LEARNED.get(encoder_name) or zoo_learned().get(encoder_name) or LEARNED.get(DEFAULT_ENCODER)
    return Combination.from_dict(learned) if learned else BLEND


def zoo_learned() -> dict[str, dict]:
    """Combinations learned for the zoo's exports, by encoder name: each method's ``methods/<name>/matcher.py``
    ``LEARNED`` (found through the registry, so the matcher names no method)."""
    from phrasezoo.zoo.registry import method_parts

    return {key: value for module in method_parts("matcher") for key, value in module.LEARNED.items()}
