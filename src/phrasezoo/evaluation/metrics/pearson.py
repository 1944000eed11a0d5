"""Pearson correlation of predicted similarities with gold scores (scipy.stats.pearsonr, float64).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("pearson")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

from scipy.stats import pearsonr

from .metric_base import Correlation, score_inputs


class Pearson(Correlation):
    KEY = "pearson"
    INPUTS = score_inputs(KEY)

    @staticmethod
    def statistic(predicted, gold) -> float:
        return pearsonr(predicted, gold).statistic
