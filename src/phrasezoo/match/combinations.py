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
LEARNED = {'baseline:minilm-l6': {'features': ['emb',
                                     'char',
                                     'emb_margin',
                                     'char_margin',
                                     'num_agree',
                                     'num_conflict',
                                     'num_one_side',
                                     'acronym',
                                     'acronym_tokens',
                                     'same_core',
                                     'same_normal',
                                     'emb_hub',
                                     'char_hub',
                                     'static',
                                     'static_margin',
                                     'cover_query',
                                     'cover_candidate',
                                     'short_form',
                                     'head_match',
                                     'acronym_soft',
                                     'fuzzy_cover_query',
                                     'fuzzy_cover_candidate'],
                        'weights': [1.4150552399815395,
                                    2.015542138260607,
                                    2.096469623205529,
                                    3.1354800455172076,
                                    1.801743147542005,
                                    -1.7872206118431953,
                                    -0.11854148995081089,
                                    2.3311302883901504,
                                    2.6739409553384106,
                                    1.4523119504932536,
                                    0.07965450393085345,
                                    -0.2985632727633061,
                                    -0.3338131173688856,
                                    0.633611261991354,
                                    0.9886220617842022,
                                    0.07255429309364218,
                                    -0.44390136598150676,
                                    0.9289322891635876,
                                    0.5506809561923951,
                                    4.12771923547155,
                                    1.2576977056690528,
                                    1.1066897125844048],
                        'bias': 0.0,
                        'link': 'ranked',
                        'probability': [0.6485957171846706, 0.5940633415275529, -3.126938449147305],
                        'calibration': [[0.5, 0.018708, 0.8173],
                                        [0.51, 0.018708, 0.8173],
                                        [0.52, 0.018708, 0.8173],
                                        [0.53, 0.018708, 0.8173],
                                        [0.54, 0.018708, 0.8173],
                                        [0.55, 0.018708, 0.8173],
                                        [0.56, 0.018708, 0.8173],
                                        [0.57, 0.018708, 0.8173],
                                        [0.58, 0.018708, 0.8173],
                                        [0.59, 0.018708, 0.8173],
                                        [0.6, 0.046118, 0.8172],
                                        [0.61, 0.054971, 0.8172],
                                        [0.62, 0.058407, 0.8172],
                                        [0.63, 0.062989, 0.8172],
                                        [0.64, 0.070864, 0.8172],
                                        [0.65, 0.074354, 0.8172],
                                        [0.66, 0.078756, 0.8169],
                                        [0.67, 0.083635, 0.8162],
                                        [0.68, 0.089539, 0.8162],
                                        [0.69, 0.096806, 0.8152],
                                        [0.7, 0.10367, 0.8148],
                                        [0.71, 0.111042, 0.8148],
                                        [0.72, 0.128487, 0.8145],
                                        [0.73, 0.134839, 0.8142],
                                        [0.74, 0.156136, 0.8134],
                                        [0.75, 0.173834, 0.8127],
                                        [0.76, 0.255319, 0.8084],
                                        [0.77, 0.331345, 0.804],
                                        [0.78, 0.365354, 0.801],
                                        [0.79, 0.432739, 0.7959],
                                        [0.8, 0.473564, 0.7924],
                                        [0.81, 0.488232, 0.7912],
                                        [0.82, 0.526092, 0.7854],
                                        [0.83, 0.56828, 0.7789],
                                        [0.84, 0.59176, 0.7748],
                                        [0.85, 0.60676, 0.7722],
                                        [0.86, 0.621518, 0.7705],
                                        [0.87, 0.649156, 0.7656],
                                        [0.88, 0.658452, 0.7631],
                                        [0.89, 0.682304, 0.7607],
                                        [0.9, 0.708795, 0.7542],
                                        [0.91, 0.758576, 0.7382],
                                        [0.92, 0.792178, 0.7262],
                                        [0.93, 0.819349, 0.7169],
                                        [0.94, 0.909705, 0.6579],
                                        [0.95, 0.932182, 0.6261],
                                        [0.96, 0.96534, 0.5628],
                                        [0.97, 0.990442, 0.44],
                                        [0.98, 0.996937, 0.3107],
                                        [0.99, 0.999767, 0.0939]],
                        'meta': {'encoder': 'baseline:minilm-l6',
                                 'trained_on': "autofj_dev (10 tables, one domain) + the name benchmark's dev "
                                               'splits (acronyms, aliases, short-names, noisy), each domain '
                                               'weighted equally',
                                 'candidates': 10,
                                 'feature_set': '+hub +static +name words +fuzzy',
                                 'command': "experiments/matching/names_dev.py fit --features '+hub +static +name "
                                            "words +fuzzy' --candidates 10",
                                 'dev_cross_fitted': {'accuracy': 0.8173,
                                                      'mrr10': 0.8375,
                                                      'candidate_recall': 0.8834,
                                                      'recall_at_p90': 0.7869},
                                 'dev_cross_fitted_per_domain': {'autofj': {'accuracy': 0.7744,
                                                                            'mrr10': 0.8074,
                                                                            'candidate_recall': 0.8868,
                                                                            'recall_at_p90': 0.6954},
                                                                 'acronyms': {'accuracy': 0.745,
                                                                              'mrr10': 0.7568,
                                                                              'candidate_recall': 0.78,
                                                                              'recall_at_p90': 0.7383},
                                                                 'aliases': {'accuracy': 0.5976,
                                                                             'mrr10': 0.6406,
                                                                             'candidate_recall': 0.7521,
                                                                             'recall_at_p90': 0.5314},
                                                                 'short-names': {'accuracy': 0.9929,
                                                                                 'mrr10': 0.9965,
                                                                                 'candidate_recall': 1.0,
                                                                                 'recall_at_p90': 0.9929},
                                                                 'noisy': {'accuracy': 0.9767,
                                                                           'mrr10': 0.9861,
                                                                           'candidate_recall': 0.9983,
                                                                           'recall_at_p90': 0.9767}},
                                 'created': '2026-11-28T03:55:14+00:00',
                                 'dev_auto_threshold': {'0.8': {'precision': 0.9297, 'recall': 0.7924},
                                                        '0.9': {'precision': 0.9618, 'recall': 0.7542},
                                                        '0.95': {'precision': 0.9787, 'recall': 0.6261}},
                                 'dev_auto_threshold_per_domain': {'autofj': {'0.8': {'precision': 0.8347,
                                                                                      'recall': 0.7536},
                                                                              '0.9': {'precision': 0.9196,
                                                                                      'recall': 0.7118},
                                                                              '0.95': {'precision': 0.9617,
                                                                                       'recall': 0.5426}},
                                                                   'acronyms': {'0.8': {'precision': 0.944,
                                                                                        'recall': 0.7317},
                                                                                '0.9': {'precision': 0.9612,
                                                                                        'recall': 0.7067},
                                                                                '0.95': {'precision': 0.9816,
                                                                                         'recall': 0.625}},
                                                                   'aliases': {'0.8': {'precision': 0.8792,
                                                                                       'recall': 0.5416},
                                                                               '0.9': {'precision': 0.9321,
                                                                                       'recall': 0.5093},
                                                                               '0.95': {'precision': 0.9531,
                                                                                        'recall': 0.4023}},
                                                                   'short-names': {'0.8': {'precision': 0.9976,
                                                                                           'recall': 0.9835},
                                                                                   '0.9': {'precision': 1.0,
                                                                                           'recall': 0.9717},
                                                                                   '0.95': {'precision': 1.0,
                                                                                            'recall': 0.9104}},
                                                                   'noisy': {'0.8': {'precision': 0.9931,
                                                                                     'recall': 0.9517},
                                                                             '0.9': {'precision': 0.9962,
                                                                                     'recall': 0.8717},
                                                                             '0.95': {'precision': 0.9972,
                                                                                      'recall': 0.65}}},
                                 'calibration': {'rules': 'docs/experiments/matching.md, rules 10-13',
                                                 'rule_11': 'dev',
                                                 'rule_12': 'bound',
                                                 'command': 'OMP_NUM_THREADS=1 .venv/bin/python '
                                                            'experiments/matching/names_calibration.py --write'}}}}
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
    from phrasezoo.registry import method_parts

    return {key: value for module in method_parts("matcher") for key, value in module.LEARNED.items()}
