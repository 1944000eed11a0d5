"""Spearman rank correlation of predicted similarities with gold scores (scipy.stats.spearmanr, float64).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("spearman")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import datasets
import evaluate
import numpy as np
from scipy.stats import spearmanr

_INPUTS = """
Args:
    predictions: predicted scores (e.g. cosine similarities).
    references: gold scores (e.g. human relatedness).
Returns:
    spearman: the correlation coefficient, in [-1, 1].
"""


class Spearman(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=__doc__,
            citation="",
            inputs_description=_INPUTS,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
        )

    def _compute(self, predictions, references) -> dict[str, float]:
        pred = np.asarray(predictions, dtype=np.float64)
        gold = np.asarray(references, dtype=np.float64)
        return {"spearman": float(spearmanr(pred, gold).statistic)}
