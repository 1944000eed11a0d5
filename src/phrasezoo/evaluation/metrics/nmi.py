"""Normalized mutual information between clusters and gold labels (scikit-learn, arithmetic mean).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("nmi")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

from sklearn.metrics import normalized_mutual_info_score

from .metric_base import CLUSTER_COLUMNS, SuiteMetric, cluster_inputs


class NMI(SuiteMetric):
    INPUTS = cluster_inputs("nmi: in [0, 1].")
    COLUMNS = CLUSTER_COLUMNS

    def _compute(self, predictions, references) -> dict[str, float]:
        return {"nmi": float(normalized_mutual_info_score(references, predictions))}
