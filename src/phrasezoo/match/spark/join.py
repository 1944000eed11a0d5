"""``join_spark``: :func:`phrasezoo.match.join` with a Spark DataFrame of queries, with the same answers as one machine.

The steps (the reference must be whole to be indexed, so the matcher is fitted once, on the driver):

1. the reference (``left``: a Spark DataFrame collected to the driver in ``left_id`` order, or anything
   :func:`~phrasezoo.match.join` accepts) is fitted once and saved (:meth:`Matcher.save`) to ``matcher_path``
   (default a temporary folder, removed when the driver exits: fine for ``local[n]``; on a cluster pass a path
   every executor can read);
2. each Python worker loads the saved matcher once (:func:`~phrasezoo.match.spark.workers.worker_matcher`), and a
   ``mapInPandas`` UDF searches each partition of ``right`` against the whole reference.

The default matcher's decision also reads the other rows searched together (a reference row claimed by a better
query, :func:`phrasezoo.match.model.decision.claim_inputs`), so its join runs in two passes: the executors search
each partition without claims (kept with ``persist``), window functions read the claims of every distinct text over
the whole of ``right``, and a second pass applies them and the threshold: one machine's answers and scores.

Nothing is lost at scale: the result keeps every ``right`` row. A row with matches appears once per match
(``rank`` 1, 2, ...), a row with none passing the threshold once with ``match_status = "unmatched"``, a row with a
missing text (``on_missing="skip"``) once with ``"skipped"``; filter ``rank IS NOT NULL`` for ``join``'s rows.

```python
from phrasezoo.match.spark import join_spark
from phrasezoo.integrations.splink import local_spark

spark = local_spark()
pairs, report = join_spark(spark.read.csv("kb.csv", header=True), spark.read.csv("mentions.csv", header=True),
                           left_column="name", right_column="mention", left_id="kb_id", threshold="auto")
```
"""

from __future__ import annotations

import atexit
import copy
import os
import shutil
import tempfile
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from ..engine.matcher import Matcher
from ..engine.results import check_threshold, check_top_k
from ..io.inputs import MISSING_POLICIES, _is_missing, as_column, as_text
from ..model.calibration import Calibration, as_calibration
from ..model.decision import CLAIM_CAP
from ..scoring.scorers import DEFAULT_MODEL
from .workers import worker_matcher

__all__ = ["join_spark"]

OUTPUT_COLUMNS = ("left_index", "left", "score", "rank", "match_status")


def join_spark(
    left: Any,
    right: Any,
    model: Any = DEFAULT_MODEL,
    top_k: int = 1,
    threshold: float | str | None = None,
    *,
    left_column: str | None = None,
    right_column: str = "name",
    left_id: str | None = None,
    target_precision: float = 0.9,
    on_missing: str = "raise",
    partitions: int | None = None,
    matcher_path: str | os.PathLike | None = None,
    matcher: Matcher | None = None,
    calibration: Calibration | str | os.PathLike | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Fuzzy-join a Spark DataFrame ``right`` (text column ``right_column``) against the reference ``left``.

    Returns ``(DataFrame, report)``: ``right``'s columns plus ``left_index`` (the reference row's ``left_id``, or its
    position), ``left`` (the matched reference text), ``score``, ``rank`` and ``match_status`` (see the module
    docstring); the result is lazy (Spark evaluates it when asked). ``model``, ``top_k``, ``threshold`` (a number,
    ``"auto"`` or ``None``), ``target_precision`` and ``on_missing`` are :func:`phrasezoo.match.join`'s; missing
    reference texts follow ``on_missing`` too and are counted in the report. ``partitions``: how many partitions
    search (default: ``right``'s own). ``matcher``: one already fitted on the reference, to reuse it.
    ``calibration``: labels of this matcher's answers (``phrasezoo match label``, :func:`phrasezoo.match.calibrate`):
    the executors recalibrate the scores, and ``"auto"`` takes the calibration's stored threshold, as the streamed
    command line does (an answer must not depend on how ``right`` is partitioned).
    """
    check_threshold(threshold)
    top_k = check_top_k(top_k)
    calibration = as_calibration(calibration)
    if calibration is not None:
        calibration.check_use()  # a list's labels fail before the reference is encoded
    if on_missing not in MISSING_POLICIES:
        raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
    _check_right(right, right_column, on_missing)
    values, labels, skipped = reference_rows(left, left_column, left_id, on_missing)
    if matcher is None:
        matcher = Matcher(model, progress=False).fit(values, labels)
    elif matcher.reference != values:
        raise ValueError("The matcher was fitted on another reference; fit it on this one or pass matcher=None.")
    else:
        matcher = copy.copy(matcher)  # the workers report this reference's labels; the caller's matcher is unchanged
        matcher.labels = list(labels)
    if calibration is not None:
        decision = getattr(matcher.scorer, "decision", None)
        calibration.check_matcher(matcher.name, decision.to_dict() if decision is not None else None)
    cut = threshold
    if threshold == "auto":
        cut = calibration.stored_cut(target_precision) if calibration is not None else matcher.threshold_for(
            target_precision)  # fmt: skip
    folder = _saved(matcher, matcher_path)
    label_type = _label_type(left, left_id, labels)
    scorer = matcher.scorer
    claims = matcher._blocks is None and getattr(getattr(scorer, "decision", None), "reads_claims", False)
    result = _search(right, right_column, folder, top_k, cut, label_type, partitions, claims, calibration)
    report = {"threshold": cut, "top_k": top_k, "model": matcher.name, "reference_rows": len(values),
              "reference_skipped": len(skipped), "matcher_path": folder}  # fmt: skip
    if calibration is not None:
        report["calibration"] = calibration.summary()
    if threshold == "auto":
        report["target_precision"] = float(target_precision)
    return result, report


def _check_right(right: Any, column: str, on_missing: str) -> None:
    if not hasattr(right, "mapInPandas"):
        raise TypeError(f"right must be a Spark DataFrame, got {type(right).__name__}; use phrasezoo.match.join "
                        "for pandas or lists.")  # fmt: skip
    if column not in right.columns:
        raise ValueError(f"right has no column {column!r}; its columns are: {', '.join(right.columns)}.")
    taken = [c for c in OUTPUT_COLUMNS if c in right.columns]
    if taken:
        raise ValueError(f"right has column(s) {', '.join(taken)} already; rename them before join_spark.")
    if on_missing == "raise":
        missing = right.where(F.col(column).isNull() | (F.trim(F.col(column).cast("string")) == "")).limit(1).count()
        if missing:
            raise ValueError(f"right's column {column!r} has missing or empty values. Drop them, fill them, or pass "
                             "on_missing='skip' (they are kept with match_status 'skipped').")  # fmt: skip


def reference_rows(left: Any, column: str | None, left_id: str | None, on_missing: str) -> tuple[list, list, list]:
    """The reference texts, their labels (``left_id`` values or positions) and the labels of skipped rows (what a
    matcher is fitted on before it joins ``left``)."""
    if hasattr(left, "toPandas"):  # a Spark DataFrame: collected once, in left_id order when given
        if column is None or column not in left.columns:
            raise ValueError(f"Name left's text column with left_column (its columns: {', '.join(left.columns)}).")
        if left_id is not None and left_id not in left.columns:
            raise ValueError(f"left has no id column {left_id!r}; its columns are: {', '.join(left.columns)}.")
        ordered = left.orderBy(left_id) if left_id is not None else left
        rows = ordered.select(column, *([left_id] if left_id else [])).toPandas()
        labels = rows[left_id].tolist() if left_id else list(range(len(rows)))
        left, column = pd.Series(rows[column].tolist(), index=labels), None
    elif left_id is not None:
        raise ValueError("left_id names a column of a Spark DataFrame; for pandas, use the index as labels.")
    col = as_column(left, column, what="left", on_missing=on_missing)
    return col.values, list(col.labels), list(col.skipped)


def _label_type(left: Any, left_id: str | None, labels: list) -> str:
    if left_id is not None:
        return left.schema[left_id].dataType.simpleString()
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in labels):
        return "bigint"
    return "string"


def _saved(matcher: Matcher, matcher_path) -> str:
    """The folder the workers load the matcher from (a temporary one, removed at exit, by default)."""
    if matcher_path is None:
        folder = tempfile.mkdtemp(prefix="phrasezoo-join-matcher-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    else:
        folder = os.fspath(matcher_path)
    matcher.save(folder)
    return folder


def _search(right, column: str, folder: str, top_k: int, cut, label_type: str, partitions: int | None,
            claims: bool = False, calibration: Calibration | None = None):  # fmt: skip
    """The lazy result: each partition of ``right`` searched by the worker's copy of the saved matcher. ``claims``
    (the default matcher's decision reads them): two passes, so that the claims compare every row as one machine
    does: each row's answers before claims (:meth:`~phrasezoo.match.scoring.hybrid.HybridScorer.search_unclaimed`,
    kept with ``persist``), the claims of every distinct text read with windows over its top answer's row, then the
    decision's shift and the threshold. ``calibration``: labels, whose shift the scores take before the threshold
    and whose answers win over it (:meth:`~phrasezoo.match.model.calibration.Calibration.verdicts`)."""
    extra = f"left_index {label_type}, left string, score double, rank int, match_status string"
    schema = T.StructType([*right.schema.fields, *T._parse_datatype_string(extra).fields])
    as_label = str if label_type == "string" else (lambda v: v)
    source = right.repartition(partitions) if partitions else right
    if not claims:

        def search(frames):
            for frame in frames:
                if not frame.empty:
                    worker = worker_matcher(folder)
                    present, keys = _present(frame, column)
                    scores, ids = worker.search(keys, top_k) if keys else _nothing(top_k)
                    said = _verdicts(calibration, worker, keys, ids)
                    if calibration is not None:
                        scores = calibration.apply(scores)
                    yield _rows(worker, frame, present, scores, ids, cut, as_label, said)

        return source.mapInPandas(search, schema)
    names = list(right.columns)
    found_schema = T.StructType([*right.schema.fields, *T._parse_datatype_string(
        "_key string, _ids array<bigint>, _scores array<double>, _top double").fields])  # fmt: skip

    def find(frames):
        for frame in frames:
            if frame.empty:
                continue
            present, keys = _present(frame, column)
            if keys:
                scores, ids, top = worker_matcher(folder).scorer.search_unclaimed(keys, top_k)
                scores[ids < 0] = -np.inf
            else:
                (scores, ids), top = _nothing(top_k), np.zeros(0)
            out = frame.copy()
            # a row without a text: no answer (never empty arrays: Spark's ANSI mode refuses [0] of one)
            columns = {"_key": [None] * len(frame), "_ids": [[-1]] * len(frame), "_scores": [[-np.inf]] * len(frame),
                       "_top": [np.nan] * len(frame)}  # fmt: skip
            for q, i in enumerate(present):
                columns["_key"][i], columns["_ids"][i] = keys[q], ids[q].tolist()
                columns["_scores"][i], columns["_top"][i] = scores[q].astype(np.float64).tolist(), float(top[q])
            for key, values in columns.items():
                out[key] = values
            yield out

    joined = _with_claims(source.mapInPandas(find, found_schema).persist())

    def decide(frames):
        for frame in frames:
            if frame.empty:
                continue
            worker = worker_matcher(folder)
            present = np.flatnonzero(frame["_key"].notna().to_numpy()).tolist()
            if present:
                scores = np.stack([np.asarray(v, dtype=np.float64) for v in frame["_scores"].iloc[present]])
                ids = np.stack([np.asarray(v, dtype=np.int64) for v in frame["_ids"].iloc[present]])
                claims_of = {"claim_gap": frame["_gap"].iloc[present].to_numpy(dtype=np.float64),
                             "log_claimants": frame["_log"].iloc[present].to_numpy(dtype=np.float64)}  # fmt: skip
                decision = worker.scorer.decision
                scores = decision.shifted(scores, decision.claim_shift(claims_of), ids[:, 0] >= 0)
                if calibration is not None:
                    scores = calibration.apply(scores)
            else:
                scores, ids = _nothing(top_k)
            said = _verdicts(calibration, worker, frame["_key"].iloc[present].tolist(), ids)
            yield _rows(worker, frame[names], present, scores, ids, cut, as_label, said)

    return joined.mapInPandas(decide, schema)


def _with_claims(found):
    """The first pass's rows with the claims of each distinct text (``_gap``, ``_log``), read with windows over its
    top answer's row across the whole of ``right`` (:func:`phrasezoo.match.model.decision.claim_inputs`)."""
    answered = found.where(F.col("_key").isNotNull() & (F.col("_ids").getItem(0) >= 0))
    tops = answered.select("_key", F.col("_ids").getItem(0).alias("_row"), "_top").dropDuplicates(["_key"])
    by_row = Window.partitionBy("_row")
    tops = (tops.withColumn("_pos", F.row_number().over(by_row.orderBy(F.desc("_top"), F.asc("_key"))))
            .withColumn("_best", F.max("_top").over(by_row)).withColumn("_count", F.count(F.lit(1)).over(by_row))
            .withColumn("_second", F.max(F.when(F.col("_pos") == 2, F.col("_top"))).over(by_row)))  # fmt: skip
    cap = F.lit(CLAIM_CAP)
    gap = (F.when(F.col("_count") == 1, cap).when(F.col("_pos") == 1, F.least(F.col("_best") - F.col("_second"), cap))
           .otherwise(F.least(F.col("_top") - F.col("_best"), cap)))  # fmt: skip
    claimed = tops.select("_key", gap.alias("_gap"), F.log(F.col("_count").cast("double")).alias("_log"))
    return found.join(claimed, on="_key", how="left")


def _present(frame, column: str) -> tuple[list[int], list[str]]:
    """The positions of the frame's rows with a text, and those texts as the matcher searches them."""
    texts = frame[column].tolist()
    present = [i for i, v in enumerate(texts) if not _is_missing(v) and str(v).strip()]
    return present, [as_text(texts[i], "right", i) for i in present]


def _nothing(top_k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((0, top_k), dtype=np.float32), np.zeros((0, top_k), dtype=np.int64)


def _verdicts(calibration: Calibration | None, worker: Matcher, keys: list[str], ids: np.ndarray) -> np.ndarray | None:
    """The labels of the searched rows' candidates (see ``Calibration.verdicts``), None without a calibration."""
    if calibration is None or not len(keys):
        return None
    return calibration.verdicts(keys, ids, worker.reference)


def _rows(matcher: Matcher, frame, present: list[int], scores: np.ndarray, ids: np.ndarray, cut, as_label,
          said: np.ndarray | None = None):  # fmt: skip
    """One partition's output rows from its answers (``scores``/``ids`` of the ``present`` rows): every input row,
    once per match or once with its status; ``said``: the labels of the answers, which win over the threshold."""
    rows, extra = [], {"left_index": [], "left": [], "score": [], "rank": [], "match_status": []}
    found = dict(zip(present, range(len(present))))
    for i in range(len(frame)):
        hits = []
        if i in found:
            q = found[i]
            verdict = said[q] if said is not None else np.zeros(len(ids[q]), dtype=np.int8)
            hits = [(s, j) for s, j, v in zip(scores[q], ids[q], verdict)
                    if j >= 0 and v >= 0 and (cut is None or s >= cut or v > 0)]  # fmt: skip
        for rank, (score, j) in enumerate(hits, start=1):
            rows.append(i)
            for key, value in zip(extra, (as_label(matcher.labels[j]), matcher.reference[j], float(score), rank,
                                          "matched")):  # fmt: skip
                extra[key].append(value)
        if not hits:
            rows.append(i)
            for key, value in zip(extra, (None, None, None, None, "unmatched" if i in found else "skipped")):
                extra[key].append(value)
    out = frame.iloc[rows].reset_index(drop=True)
    for key, values in extra.items():
        out[key] = values
    out["rank"] = out["rank"].astype("Int32")
    return out
