"""Top-1 accuracy against a gold set: the share of queries whose best-scoring candidate is one of their gold
candidates (a query may have several, e.g. the dev suite's paraphrase partners).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("top1_accuracy")``), never
from the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class Top1Accuracy(SuiteMetric):
    INPUTS = """
Args:
    predictions: per query, the index of its best-scoring candidate.
    references: per query, the indices of its gold candidates (one or more).
Returns:
    accuracy: the share of queries whose best candidate is gold, in [0, 1].
"""
    COLUMNS = (columns(predictions="int64", references="int64[]"),)

    def _compute(self, predictions, references) -> dict[str, float]:
        hits = np.array(
            [int(best) in set(gold) for best, gold in zip(predictions, references, strict=True)], dtype=bool
        )
        return {"accuracy": float(np.mean(hits))}
