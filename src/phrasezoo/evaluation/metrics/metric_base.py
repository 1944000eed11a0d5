"""The part every metric script of the suite shares: its ``evaluate`` metric info.

A script describes itself in its module docstring and declares its inputs' documentation (``INPUTS``) and column
types (``COLUMNS``); :class:`SuiteMetric` turns them into ``evaluate.MetricInfo``. The scripts import it as
``from .metric_base import SuiteMetric``: when ``evaluate.load`` loads a script by path, it copies the script's
relative imports from the script's own folder next to it (``evaluate.loading.get_imports``: one module name, no
dots, resolved in that folder), which is why every metric script lives in this one folder.
"""

import abc
import sys

import datasets
import evaluate
import numpy as np


def columns(**types: str) -> datasets.Features:
    """Features from column name -> value type (``"float64"``, ``"int64"``, ``"string"``; ``"float64[]"``: a
    sequence of them)."""
    return datasets.Features(
        {
            name: datasets.Sequence(datasets.Value(kind[:-2])) if kind.endswith("[]") else datasets.Value(kind)
            for name, kind in types.items()
        }
    )


class SuiteMetric(evaluate.Metric, metaclass=abc.ABCMeta):
    """An ``evaluate`` metric described by its module's docstring, with documented inputs (``INPUTS``) of the given
    column types (``COLUMNS``: one :func:`columns`, or several a caller may choose from). Abstract (``_compute``),
    so that ``evaluate``, which takes a script's first concrete metric class, takes the script's own."""

    INPUTS: str = ""
    COLUMNS: tuple[datasets.Features, ...] = ()

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=sys.modules[type(self).__module__].__doc__,
            citation="",
            inputs_description=self.INPUTS,
            features=self.COLUMNS[0] if len(self.COLUMNS) == 1 else list(self.COLUMNS),
        )

    @abc.abstractmethod
    def _compute(self, predictions, references, **kwargs) -> dict:
        """The metric's values from the inputs."""


def score_inputs(key: str) -> str:
    """The inputs' documentation of a correlation of predicted scores with gold scores, returned as ``key``."""
    return f"""
Args:
    predictions: predicted scores (e.g. cosine similarities).
    references: gold scores (e.g. human relatedness).
Returns:
    {key}: the correlation coefficient, in [-1, 1].
"""


class Correlation(SuiteMetric):
    """A correlation of predicted scores with gold scores, both read as float64, returned as ``KEY``: the metric's
    own part is its :meth:`statistic`."""

    KEY: str = ""
    COLUMNS = (columns(predictions="float64", references="float64"),)

    @staticmethod
    @abc.abstractmethod
    def statistic(predicted: np.ndarray, gold: np.ndarray) -> float:
        """The correlation coefficient of two float64 arrays."""

    def _compute(self, predictions, references) -> dict[str, float]:
        pred = np.asarray(predictions, dtype=np.float64)
        gold = np.asarray(references, dtype=np.float64)
        return {self.KEY: float(self.statistic(pred, gold))}


#: the columns of a clustering metric: each item's cluster id and its gold label
CLUSTER_COLUMNS = (columns(predictions="int64", references="string"),)


def cluster_inputs(returns: str) -> str:
    """The inputs' documentation of a clustering metric (cluster ids against gold labels) that returns ``returns``."""
    return f"""
Args:
    predictions: the cluster id of each item (e.g. from KMeans).
    references: the gold label of each item (e.g. its entity type).
Returns:
    {returns}
"""
