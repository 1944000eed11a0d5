"""Pearson correlation of predicted similarities with gold scores (scipy.stats.pearsonr, float64; or, with
``formula="corrcoef"``, numpy.corrcoef and NaN when either side is constant, as the codebook's tasks compute it).

An ``evaluate`` metric script, loaded by path (``phrasezoo.evaluation.metrics.load_metric("pearson")``), never from
the Hub; the benchmark suite computes its numbers through it.
"""

import numpy as np
from scipy.stats import pearsonr

from .metric_base import Correlation, score_inputs


class Pearson(Correlation):
    KEY = "pearson"
    INPUTS = (
        score_inputs(KEY)
        + """    formula: "scipy" (default: scipy.stats.pearsonr) or "corrcoef" (numpy.corrcoef; NaN on a constant side).
"""
    )

    @staticmethod
    def statistic(predicted, gold) -> float:
        return pearsonr(predicted, gold).statistic

    def _compute(self, predictions, references, formula: str = "scipy") -> dict[str, float]:
        if formula == "scipy":
            return super()._compute(predictions, references)
        if formula != "corrcoef":
            raise ValueError(f"formula is 'scipy' or 'corrcoef', not {formula!r}.")
        x, y = np.asarray(predictions, dtype=np.float64), np.asarray(references, dtype=np.float64)
        if x.std() == 0 or y.std() == 0:
            return {self.KEY: float("nan")}
        return {self.KEY: float(np.corrcoef(x, y)[0, 1])}
