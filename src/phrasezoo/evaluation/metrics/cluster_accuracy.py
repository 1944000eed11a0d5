"""Clustering accuracy (ACC): the share of items whose cluster maps to their gold label under the best
one-to-one mapping of clusters to labels (Hungarian algorithm), as in UCTopic.

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("cluster_accuracy")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment

from .metric_base import CLUSTER_COLUMNS, SuiteMetric, cluster_inputs


class ClusterAccuracy(SuiteMetric):
    INPUTS = cluster_inputs("accuracy: in [0, 1].")
    COLUMNS = CLUSTER_COLUMNS

    def _compute(self, predictions, references) -> dict[str, float]:
        label_ids = {label: i for i, label in enumerate(dict.fromkeys(references))}
        cluster_ids = {cluster: i for i, cluster in enumerate(dict.fromkeys(predictions))}
        counts = np.zeros((len(cluster_ids), len(label_ids)), dtype=np.int64)
        for label, cluster in zip(references, predictions):
            counts[cluster_ids[cluster], label_ids[label]] += 1
        rows, cols = linear_sum_assignment(counts, maximize=True)
        return {"accuracy": float(counts[rows, cols].sum() / max(1, len(references)))}
