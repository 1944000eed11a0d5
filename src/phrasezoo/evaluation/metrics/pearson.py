"""Pearson correlation of predicted similarities with gold scores (scipy.stats.pearsonr, float64).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("pearson")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np
from scipy.stats import pearsonr

from .metric_base import SuiteMetric, columns


class Pearson(SuiteMetric):
    INPUTS = """
Args:
    predictions: predicted scores (e.g. cosine similarities).
    references: gold scores (e.g. human relatedness).
Returns:
    pearson: the correlation coefficient, in [-1, 1].
"""
    COLUMNS = (columns(predictions="float64", references="float64"),)

    def _compute(self, predictions, references) -> dict[str, float]:
        pred = np.asarray(predictions, dtype=np.float64)
        gold = np.asarray(references, dtype=np.float64)
        return {"pearson": float(pearsonr(pred, gold).statistic)}
