"""Normalized mutual information between clusters and gold labels (scikit-learn, arithmetic mean).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("nmi")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

from sklearn.metrics import normalized_mutual_info_score

from .metric_base import SuiteMetric, columns


class NMI(SuiteMetric):
    INPUTS = """
Args:
    predictions: the cluster id of each item (e.g. from KMeans).
    references: the gold label of each item (e.g. its entity type).
Returns:
    nmi: in [0, 1].
"""
    COLUMNS = (columns(predictions="int64", references="string"),)

    def _compute(self, predictions, references) -> dict[str, float]:
        return {"nmi": float(normalized_mutual_info_score(references, predictions))}
