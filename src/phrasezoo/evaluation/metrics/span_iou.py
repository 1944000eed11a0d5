"""Span IoU: the intersection over union of chosen word ranges with gold word ranges (SLICE's span localisation
on STS-B-Context), its mean, the share at IoU >= 0.5 and the share of exact matches.

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("span_iou")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


def word_iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    """Intersection over union of two word ranges ``[start, end)``."""
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


class SpanIou(SuiteMetric):
    INPUTS = """
Args:
    predictions: per passage, the chosen word range [start, end).
    references: per passage, the gold word range [start, end).
Returns:
    iou_mean: the mean IoU, in [0, 1];
    iou_at_least_0.5: the share of passages with IoU >= 0.5;
    exact: the share of passages whose chosen range is the gold range;
    n: the number of passages.
"""
    COLUMNS = (columns(predictions="int64[]", references="int64[]"),)

    def _compute(self, predictions, references) -> dict[str, float]:
        iou = np.asarray([word_iou(tuple(a), tuple(b)) for a, b in zip(predictions, references, strict=True)])
        return {
            "iou_mean": float(iou.mean()),
            "iou_at_least_0.5": float((iou >= 0.5).mean()),
            "exact": float((iou >= 1.0 - 1e-9).mean()),
            "n": len(iou),
        }
