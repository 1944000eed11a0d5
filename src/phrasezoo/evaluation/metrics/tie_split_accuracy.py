"""Multiple-choice accuracy with exact ties split: a reference tied with k-1 other candidates at the top
scores 1/k (the expected accuracy of a random tie-break), so a similarity that scores many candidates alike
(e.g. character Jaccard at 0) gains nothing from the order of the candidates. Turney's metric.

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("tie_split_accuracy")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class TieSplitAccuracy(SuiteMetric):
    INPUTS = """
Args:
    predictions: per query, the score of every candidate (all queries have the same number of candidates).
    references: per query, the index of the right candidate.
    tolerance: scores within this of the best count as tied at the top (default 0: exact ties).
    dtype: "float64" (default), or "float32": the scores and the tolerance compared in single precision, as a
        float32 model's scores were compared (the codebook's Turney task, kept bit-for-bit).
Returns:
    accuracy: the mean over queries of [right candidate at the top] / (candidates at the top), in [0, 1].
"""
    COLUMNS = (columns(predictions="float64[]", references="int64"),)

    def _compute(self, predictions, references, tolerance: float = 0.0, dtype: str = "float64") -> dict[str, float]:
        if len({len(row) for row in predictions}) != 1:
            raise ValueError("All queries need the same number of candidates.")
        scores = np.asarray(predictions, dtype=np.float32 if dtype == "float32" else np.float64)
        top = scores >= scores.max(axis=1, keepdims=True) - scores.dtype.type(tolerance)
        right = top[np.arange(len(scores)), np.asarray(references, dtype=np.int64)]
        return {"accuracy": float(np.mean(right / top.sum(axis=1)))}
