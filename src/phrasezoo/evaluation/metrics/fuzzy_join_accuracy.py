"""Fuzzy-join accuracy (AutoFJ): per dataset, the share of right rows joined to their gold left row; the
value is the mean over datasets (macro), each dataset's accuracy rounded to ``decimals`` first as the suite's
results files store them.

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("fuzzy_join_accuracy")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np

from .metric_base import SuiteMetric, columns


class FuzzyJoinAccuracy(SuiteMetric):
    INPUTS = """
Args:
    predictions: per right row with a gold match, the left row it was joined to.
    references: its gold left row.
    datasets: the dataset each row belongs to.
    decimals: each dataset's accuracy is rounded to this many decimals before the mean (None: no rounding).
Returns:
    accuracy: the mean of the per-dataset accuracies, in [0, 1];
    per_dataset: {dataset: accuracy}, in order of first appearance.
"""
    COLUMNS = (columns(predictions="string", references="string", datasets="string"),)

    def _compute(self, predictions, references, datasets, decimals: int | None = 6) -> dict:
        names = np.asarray(datasets, dtype=object)
        correct = np.asarray(predictions, dtype=object) == np.asarray(references, dtype=object)
        per_dataset = {}
        for name in dict.fromkeys(datasets):
            accuracy = float(np.mean(correct[names == name]))
            per_dataset[name] = accuracy if decimals is None else round(accuracy, decimals)
        return {"accuracy": float(np.mean(list(per_dataset.values()))), "per_dataset": per_dataset}
