"""The unweighted mean of scores: how the suite aggregates several numbers into one (the dev suite's ``dev_avg``
over its tasks, the PPDB probe's mean test accuracy over its seeds).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("average")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class Average(SuiteMetric):
    INPUTS = """
Args:
    predictions: the scores to average (e.g. one per task, or one per seed).
Returns:
    average: their arithmetic mean (float64).
"""
    COLUMNS = (columns(predictions="float64"),)

    def _compute(self, predictions, references=None) -> dict[str, float]:
        return {"average": float(np.mean(np.asarray(predictions, dtype=np.float64)))}
