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
