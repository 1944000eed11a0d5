"""What runs in Spark's Python workers: the fitted matcher, saved once by the driver, loaded once per worker process.

``join_spark`` and ``dedupe_spark`` save the matcher they fitted (:meth:`Matcher.save`) to a folder every executor
can read; each ``mapInPandas`` partition asks :func:`worker_matcher` for it, which loads it on the first call in a
worker process and keeps it for the partitions that follow.
"""

from __future__ import annotations

from ..engine.matcher import Matcher

_WORKER_MATCHERS: dict[str, Matcher] = {}


def worker_matcher(path: str) -> Matcher:
    """The matcher saved at ``path``, loaded once per Spark Python worker process (``join_spark`` and
    ``dedupe_spark``)."""
    if path not in _WORKER_MATCHERS:
        _WORKER_MATCHERS[path] = Matcher.load(path, progress=False)
    return _WORKER_MATCHERS[path]
