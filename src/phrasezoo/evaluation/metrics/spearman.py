"""Spearman rank correlation of predicted similarities with gold scores (scipy.stats.spearmanr, float64).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("spearman")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

from scipy.stats import spearmanr

from .metric_base import Correlation, score_inputs


class Spearman(Correlation):
    KEY = "spearman"
    INPUTS = score_inputs(KEY)

    @staticmethod
    def statistic(predicted, gold) -> float:
        return spearmanr(predicted, gold).statistic
