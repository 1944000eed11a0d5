"""Ranking metrics of a retrieval task from the rank of each query's gold item: top-1 accuracy (the share ranked
first) and MRR@``depth`` (the mean of 1/rank, 0 past ``depth``), as the name tasks report them.

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("ranking")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class Ranking(SuiteMetric):
    INPUTS = """
Args:
    predictions: per query, the 1-based rank of its gold item among all candidates (ties counted against the gold).
    depth: ranks past this depth add 0 to the reciprocal rank (default 10).
Returns:
    accuracy: the share of queries whose gold item ranks first, in [0, 1];
    mrr: the mean reciprocal rank cut at ``depth``, in [0, 1].
"""
    COLUMNS = (columns(predictions="int64"),)

    def _compute(self, predictions, references=None, depth: int = 10) -> dict[str, float]:
        ranks = np.asarray(predictions, dtype=np.int64)
        return {
            "accuracy": float(np.mean(ranks == 1)),
            "mrr": float(np.mean(np.where(ranks <= depth, 1.0 / ranks, 0.0))),
        }
