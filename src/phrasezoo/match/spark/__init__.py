"""Matching on Spark with the same answers as one machine: :func:`join_spark` (a fuzzy join of a Spark DataFrame
against a reference) and :func:`dedupe_spark` (clusters of a Spark DataFrame's column).

Both fit the matcher once on the driver (the reference must be whole to be indexed), save it, and search the
partitions on the executors, one matcher loaded per Python worker (:mod:`~phrasezoo.match.spark.workers`). They need
pyspark (``pip install 'phrasezoo[splink]'``); nothing else in :mod:`phrasezoo.match` imports this package.
"""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ImportError as err:  # pragma: no cover - the extra is part of [dev]
    raise ImportError("phrasezoo.match.spark needs pyspark: pip install 'phrasezoo[splink]'") from err

from .dedupe import dedupe_spark
from .join import join_spark

__all__ = ["dedupe_spark", "join_spark"]
