"""Accuracy: the share of predictions equal to their reference (labels or strings, e.g. the predicted KB name
of a mention against its gold name).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("accuracy")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class Accuracy(SuiteMetric):
    INPUTS = """
Args:
    predictions: predicted labels (strings or integers).
    references: gold labels, of the same type.
    dtype: "float64" (default), or "float32": the share in single precision, as a torch float32 mean gives it (the
        PPDB probe's accuracy, kept bit-for-bit).
Returns:
    accuracy: the share of exact matches, in [0, 1].
"""
    COLUMNS = (columns(predictions="string", references="string"), columns(predictions="int64", references="int64"))

    def _compute(self, predictions, references, dtype: str = "float64") -> dict[str, float]:
        matches = np.asarray(predictions, dtype=object) == np.asarray(references, dtype=object)
        if dtype == "float32":
            return {"accuracy": float(np.float32(np.count_nonzero(matches)) / np.float32(len(matches)))}
        return {"accuracy": float(np.mean(matches))}
