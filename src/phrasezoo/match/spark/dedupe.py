"""``dedupe_spark``: :func:`phrasezoo.match.dedupe` on a Spark DataFrame, with the same clusters as one machine.

The steps (the matcher must see the whole list, so it is fitted once on the driver):

1. the text column's distinct names (exact duplicates by normal form are one name) are collected to the driver, in
   ``id_column`` order when given, and the matcher is fitted on them once and saved (:meth:`Matcher.save`) to
   ``matcher_path`` (default a temporary folder: fine for ``local[n]``; on a cluster pass a path every executor
   can read);
2. the distinct names are spread over the executors; each Python worker loads the saved matcher once (cached per
   process, as :mod:`phrasezoo.integrations.splink` caches its encoder) and a ``mapInPandas`` UDF searches each
   partition's names against the whole list (:func:`phrasezoo.match.engine.dedupe.neighbour_pairs`, self excluded);
3. the kept pairs (at most ``top_k`` per name, small) are collected and clustered on the driver
   (:func:`phrasezoo.match.engine.dedupe.cluster_pairs`), and the cluster ids are joined back onto every row by its
   exact-duplicate key.

```python
from phrasezoo.match.spark import dedupe_spark
from phrasezoo.integrations.splink import local_spark

spark = local_spark()
clusters, report = dedupe_spark(spark.read.csv("names.csv", header=True), "name", id_column="row_id")
```
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..engine.dedupe import (
    check_dedupe_arguments,
    claimed_pairs,
    cluster_pairs,
    distinct_names,
    exact_key,
    kept_edges,
    linked_pairs,
    neighbour_pairs,
    neighbour_table,
    resolve_threshold,
    scores_lists,
    size_report,
)
from ..engine.matcher import Matcher
from ..io.inputs import MISSING_POLICIES, _is_missing, as_text
from ..model.calibration import Calibration, as_calibration
from ..scoring.scorers import DEFAULT_MODEL
from .workers import worker_matcher

__all__ = ["dedupe_spark"]

KEY_COLUMN = "_phrasezoo_dedupe_key"


# The options shared with phrasezoo.match.dedupe are spelled out in both public functions (as join and link do), so
# that help() and the docs show them.
def dedupe_spark(
    table: Any,
    column: str,
    model: Any = DEFAULT_MODEL,
    threshold: float | str = "auto",
    *,
    id_column: str | None = None,
    method: str = "components",
    top_k: int = 10,
    target_precision: float = 0.9,
    on_missing: str = "raise",
    partitions: int | None = None,
    matcher_path: str | os.PathLike | None = None,
    matcher: Matcher | None = None,
    calibration: Calibration | str | os.PathLike | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Cluster the rows of a Spark DataFrame's ``column`` that name the same entity; see :func:`phrasezoo.match.dedupe`.

    Returns ``(table with cluster and cluster_size columns, report)``. ``cluster`` is the position of the cluster's
    first row in ``id_column`` order (with ``id_column`` = the rows' positions, the ids equal ``dedupe``'s); without
    ``id_column`` the order is the table's collect order, so ids are stable for one plan only. Rows with a missing
    text are an error (``on_missing="raise"``) or kept with a null cluster and counted in the report (``"skip"``).
    ``partitions``: how many partitions search (default Spark's default parallelism). ``matcher``: one already
    fitted on the column's distinct names (:func:`phrasezoo.match.engine.dedupe.distinct_names` in ``id_column``
    order), to reuse it across thresholds and methods. ``calibration``: labels, as :func:`phrasezoo.match.dedupe`
    takes them (the pairs scored by the join's decision and recalibrated; with ``"auto"`` the labelled threshold over
    every pair, read on the driver): the same clusters as one machine.
    """
    top_k = check_dedupe_arguments(threshold, method, top_k, target_precision)
    calibration = as_calibration(calibration)
    lists = calibration is None  # labels recalibrate the join decision's scores (as dedupe)
    _check_table(table, column, id_column, on_missing)
    texts, positions, n_rows, missing = _collect(table, column, id_column)
    if missing and on_missing == "raise":
        raise ValueError(f"The column {column!r} has {missing} missing or empty value(s). Drop them, fill them, or "
                         "pass on_missing='skip'.")  # fmt: skip
    distinct, group = distinct_names(texts)
    first_position = np.full(len(distinct), -1, dtype=np.int64)
    for row in range(len(texts) - 1, -1, -1):
        first_position[group[row]] = positions[row]
    if not distinct:
        return _join_back(table, column, [], np.zeros(0, np.int64), np.zeros(0, np.int64)), size_report(
            np.zeros(0, np.int64), n_rows, [None] * missing, threshold=None, method=method, top_k=top_k,
            pairs_kept=0, distinct_names=0)  # fmt: skip
    if matcher is None:
        matcher = Matcher(model, progress=False).fit(distinct)
    elif matcher.reference != distinct:
        raise ValueError("The matcher was fitted on other names; fit it on the column's distinct names or pass "
                         "matcher=None.")  # fmt: skip
    decision = getattr(matcher.scorer, "decision", None)
    if calibration is not None:
        calibration.check_matcher(matcher.name, decision.to_dict() if decision is not None else None, dedupe=True)
    cut = resolve_threshold(matcher, threshold, target_precision, lists)
    # every pair to the driver where it reads them anyway (labels, or the default's claims over the whole list), so
    # that the threshold, the estimate and the honoured labels come from every pair, as on one machine
    gather = not lists or scores_lists(matcher)
    pairs = _search(table.sparkSession, matcher, distinct, top_k, -np.inf if gather else cut, partitions,
                    matcher_path, lists)  # fmt: skip
    score = pairs["score"].to_numpy()
    edges = kept_edges(pairs["i"].to_numpy(), pairs["j"].to_numpy(), calibration.apply(score) if not lists else score,
                       -np.inf if gather else cut)  # fmt: skip
    auto = {}
    if gather:
        cut, edges, auto = linked_pairs(edges, distinct, threshold, cut, target_precision, calibration,
                                        decision is not None)  # fmt: skip
    labels = first_position[cluster_pairs(len(distinct), edges, cut, method)]  # as dedupe: the first row's position
    row_labels = labels[group]
    report = size_report(row_labels, n_rows, [None] * missing, threshold=cut, method=method, top_k=top_k,
                         pairs_kept=len(edges), distinct_names=len(distinct), **auto)  # fmt: skip
    if threshold == "auto":
        report["target_precision"] = float(target_precision)
    if decision is not None:  # as dedupe's report says
        report["scored_by"] = "dedupe decision" if lists and scores_lists(matcher) else "join decision"
    sizes = np.bincount(row_labels, minlength=int(labels.max()) + 1)
    return _join_back(table, column, distinct, labels, sizes[labels]), report


def _check_table(table, column: str, id_column: str | None, on_missing: str) -> None:
    if on_missing not in MISSING_POLICIES:
        raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
    if column not in table.columns:
        raise ValueError(f"The table has no column {column!r}; its columns are: {', '.join(table.columns)}.")
    if id_column is not None and id_column not in table.columns:
        raise ValueError(f"The table has no id column {id_column!r}; its columns are: {', '.join(table.columns)}.")
    for taken in (KEY_COLUMN, "cluster", "cluster_size"):
        if taken in table.columns:
            raise ValueError(f"The table has a column {taken!r} already; rename it before dedupe_spark.")


def _collect(table, column: str, id_column: str | None) -> tuple[list[str], list[int], int, int]:
    """The column's texts on the driver (in ``id_column`` order), their row positions, the row and missing counts."""
    ordered = table.orderBy(id_column) if id_column is not None else table
    texts, positions, n_rows, missing = [], [], 0, 0
    for row in ordered.select(column).toLocalIterator():
        n_rows += 1
        if _is_missing(row[0]):
            missing += 1
            continue
        texts.append(as_text(row[0], "names", n_rows - 1))
        positions.append(n_rows - 1)
    return texts, positions, n_rows, missing


def _search(spark, matcher: Matcher, distinct: list[str], top_k: int, cut: float, partitions: int | None,
            matcher_path, lists: bool = True) -> Any:  # fmt: skip
    """The kept pairs (``i, j, score``, a pandas frame): the matcher saved once, each partition of the distinct
    names searched against the whole list on the executors (one matcher loaded per Python worker). With the hybrid
    default, the executors return every name's neighbours unclaimed with the ranking score of its best one, and the
    driver reads the decision's claims over the whole list (as one machine does) before the cut. ``lists``: the
    pairs scored by the dedupe decision (else the join's, as with labels)."""
    owned = matcher_path is None
    folder = tempfile.mkdtemp(prefix="phrasezoo-dedupe-matcher-") if owned else os.fspath(matcher_path)
    claims = scores_lists(matcher)
    try:
        matcher.save(folder)

        def search(frames):
            for frame in frames:
                if not frame.empty:
                    worker = worker_matcher(folder)
                    ids = frame["id"].to_numpy()
                    if not claims:
                        i, j, s = neighbour_pairs(worker, frame["name"].tolist(), ids, top_k)
                        yield pd.DataFrame({"i": i, "j": j, "score": s, "rank": 0, "top": np.nan})
                        continue
                    best, found, ranks = neighbour_table(worker, frame["name"].tolist(), ids, top_k, lists=lists)
                    yield pd.DataFrame({"i": np.repeat(ids, best.shape[1]), "j": found.ravel(), "score": best.ravel(),
                                        "rank": np.tile(np.arange(best.shape[1]), len(ids)),
                                        "top": np.repeat(ranks, best.shape[1])})  # fmt: skip

        names = spark.createDataFrame(pd.DataFrame({"id": np.arange(len(distinct), dtype=np.int64), "name": distinct}))
        names = names.repartition(partitions or spark.sparkContext.defaultParallelism)
        found = names.mapInPandas(search, "i long, j long, score double, rank long, top double")
        if not claims:
            return found.where(F.col("score") >= cut).select("i", "j", "score").toPandas()
        return _claimed(matcher, found.toPandas(), len(distinct), cut, lists)
    finally:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)


def _claimed(matcher: Matcher, rows: pd.DataFrame, n: int, cut: float, lists: bool = True) -> pd.DataFrame:
    """The executors' neighbour tables, gathered on the driver as one ``(names, k)`` table in name order, their
    claims read over the whole list (:func:`~phrasezoo.match.engine.dedupe.claimed_pairs`), the pairs at ``cut``."""
    k = int(rows["rank"].max()) + 1 if len(rows) else 1
    best = np.full((n, k), -np.inf)
    found = np.full((n, k), -1, dtype=np.int64)
    ranks = np.full(n, -np.inf)
    i, r = rows["i"].to_numpy(), rows["rank"].to_numpy()
    best[i, r], found[i, r] = rows["score"].to_numpy(), rows["j"].to_numpy()
    ranks[i] = rows["top"].to_numpy()
    i, j, s = claimed_pairs(matcher, np.arange(n), best.astype(np.float32), found, ranks, lists)
    keep = s >= cut
    return pd.DataFrame({"i": i[keep], "j": j[keep], "score": s[keep]})


def _join_back(table, column: str, distinct: list[str], labels: np.ndarray, sizes: np.ndarray):
    """``table`` with ``cluster`` and ``cluster_size``, joined by each row's exact-duplicate key (null: missing)."""
    key_type = T.StructType([*table.schema.fields, T.StructField(KEY_COLUMN, T.StringType(), True)])

    def add_key(frames):
        for frame in frames:
            frame[KEY_COLUMN] = [None if _is_missing(v) else exact_key(as_text(v, "names", "?")) for v in frame[column]]
            yield frame

    schema = f"{KEY_COLUMN} string, cluster long, cluster_size long"
    mapping = pd.DataFrame({KEY_COLUMN: [exact_key(n) for n in distinct], "cluster": labels.astype(np.int64),
                            "cluster_size": np.asarray(sizes, dtype=np.int64)})  # fmt: skip
    mapping = table.sparkSession.createDataFrame(mapping, schema)
    keyed = table.mapInPandas(add_key, key_type)
    return keyed.join(F.broadcast(mapping), on=KEY_COLUMN, how="left").drop(KEY_COLUMN)
