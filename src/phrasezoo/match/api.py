"""``join`` (fuzzy join of two tables) and ``link`` (entity linking against a knowledge base), pandas in and out, and
``calibrate`` / ``calibrate_dedupe`` (labels you already have, made into a calibration file)."""

from __future__ import annotations

from typing import Any

from .engine.blocking import KeyFunction
from .engine.dedupe import distinct_names
from .engine.labelling import (
    SESSION_SAMPLE,
    answer_pool,
    calibration_of,
    check_known_rows,
    check_reference,
    in_either_order,
    label_rows,
    list_answer_pool,
    require_decision,
    scored_labels,
)
from .engine.matcher import Matcher
from .engine.results import (
    JOIN_COLUMNS,
    LINK_COLUMNS,
    check_target_precision,
    check_threshold,
    check_top_k,
    match_rows,
)
from .io.inputs import as_column, as_kb
from .model.calibration import Calibration, as_calibration
from .model.decision import sampled_rows
from .scoring.scorers import DEFAULT_MODEL

__all__ = ["JOIN_COLUMNS", "LINK_COLUMNS", "calibrate", "calibrate_dedupe", "join", "link"]


def _fitted(matcher: Matcher | None, reference, labels, what: str, options: dict[str, Any]) -> Matcher:
    """A matcher fitted on ``reference``: the given one (checked), or a new one built from ``options``."""
    if matcher is None:
        return Matcher(**options).fit(reference.values, labels)
    if matcher.reference != reference.values:
        raise ValueError(f"The matcher was fitted on another {what}; fit it on this one or pass matcher=None.")
    return matcher


def join(
    left: Any,
    right: Any,
    model: Any = DEFAULT_MODEL,
    top_k: int = 1,
    threshold: float | str | None = None,
    blocking: str | KeyFunction | None = None,
    *,
    left_column: str | None = None,
    right_column: str | None = None,
    target_precision: float = 0.9,
    index: str = "auto",
    blocking_fallback: str = "all",
    keep_unmatched: bool = False,
    on_missing: str = "raise",
    batch_size: int | None = None,
    progress: bool = True,
    matcher: Matcher | None = None,
    calibration: Any = None,
):
    """Fuzzy-join two tables: each ``right`` value gets its ``top_k`` most similar ``left`` values.

    ``left`` is the reference table (as in AutoFJ); ``left``/``right`` are lists of strings, pandas Series or
    DataFrames (name the text column with ``left_column``/``right_column``). Returns a DataFrame with columns
    ``right_index, right, left_index, left, score, rank`` (index labels of the inputs, the matched values, the
    score, 1 for the best match), one row per match, in right-table order.

    ``model``: ``"hybrid"`` (default: all-MiniLM-L6-v2 + character/word TF-IDF + number and acronym clues, combined
    by a model learned on the dev splits of AutoFJ and the name benchmark's four domains; the score is a match probability), an encoder alone, ``"tfidf:char"``,
    ``"rapidfuzz:WRatio"``...: see :class:`phrasezoo.match.Matcher`.

    ``threshold``: matches scoring below it are dropped; ``"auto"`` uses the threshold that reached
    ``target_precision`` (default 0.9) on the dev splits of every domain (default model only), so the join keeps the rows it
    is sure of rather than forcing a nearest neighbour on every row. Every right row is accounted for: it is in the
    result, or (no match passed the threshold) its label is in ``result.attrs["unmatched"]`` (``keep_unmatched=True``
    keeps it as a row with empty left columns), or (a missing value with ``on_missing="skip"``) in
    ``result.attrs["skipped"]["right"]``. ``result.attrs["threshold"]`` is the threshold used. An empty right table
    gives an empty result; an empty left table is an error. A fitted ``matcher`` may be passed to reuse its
    left-table index (``left`` must then be the table it was fitted on).

    With ``threshold="auto"`` and the default model, ``result.attrs["estimate"]`` says what this join's own scores
    expect of the threshold (rows kept, estimated precision and recall) and warns when they fall short of the target;
    ``result.attrs["estimate_tally"]`` holds the sums it is read from
    (:func:`~phrasezoo.match.engine.estimate.plot_estimate` draws them).
    ``calibration``: a file from ``phrasezoo match label`` or a :func:`phrasezoo.match.calibrate` result (labels of
    this matcher's answers on your data): scores recalibrated, and the ``"auto"`` threshold read from them.
    """
    check_threshold(threshold)
    check_top_k(top_k)
    left_col = as_column(left, left_column, what="left", on_missing=on_missing)
    right_col = as_column(right, right_column, what="right", on_missing=on_missing, allow_empty=True)
    calibration = as_calibration(calibration)
    if calibration is not None:
        calibration.check_use()  # a list's labels fail before the encoding
    options = {"model": model, "index": index, "blocking": blocking, "blocking_fallback": blocking_fallback,
               "batch_size": batch_size, "progress": progress}  # fmt: skip
    fitted = _fitted(matcher, left_col, left_col.labels, "left table", options)
    return match_rows(fitted, right_col, top_k, threshold, target_precision, keep_unmatched, left_col.labels,
                      left_col.originals, skipped={"right": right_col.skipped, "left": left_col.skipped},
                      calibration=calibration)  # fmt: skip


# Copied from phrasezoo.match.api.join: the matching options of the signature (model ... matcher), spelled out in both
# public functions so that help() and the docs show them; tests/match/test_match.py checks that they stay the same.
def link(
    mentions: Any,
    kb: Any,
    model: Any = DEFAULT_MODEL,
    top_k: int = 1,
    threshold: float | str | None = None,
    blocking: str | KeyFunction | None = None,
    *,
    mention_column: str | None = None,
    kb_name_column: str | None = None,
    kb_id_column: str | None = None,
    target_precision: float = 0.9,
    index: str = "auto",
    blocking_fallback: str = "all",
    keep_unmatched: bool = False,
    on_missing: str = "raise",
    batch_size: int | None = None,
    progress: bool = True,
    matcher: Matcher | None = None,
    calibration: Any = None,
):
    """Link mentions to the entities of a knowledge base by their names (and aliases).

    ``kb`` is a list of names, a Series (ids = index), a dict ``{id: name or [aliases]}`` or a DataFrame with a
    name column (``kb_name_column``, default ``"name"``) and an id column (``kb_id_column``, default ``"id"`` when
    present, else the index). An entity with several names is scored by its best-matching name and listed once.
    Returns a DataFrame with ``mention_index, mention, entity_id, entity (the matched name), score, rank``;
    ``threshold``, ``keep_unmatched``, ``on_missing`` and the ``attrs`` report as in :func:`join`.
    """
    check_threshold(threshold)
    check_top_k(top_k)
    mention_col = as_column(mentions, mention_column, what="mentions", on_missing=on_missing, allow_empty=True)
    names, ids = as_kb(kb, kb_name_column, kb_id_column, on_missing=on_missing)
    calibration = as_calibration(calibration)
    if calibration is not None:
        calibration.check_use()  # a list's labels fail before the encoding
    options = {"model": model, "index": index, "blocking": blocking, "blocking_fallback": blocking_fallback,
               "batch_size": batch_size, "progress": progress}  # fmt: skip
    fitted = _fitted(matcher, names, ids, "KB", options)
    return match_rows(fitted, mention_col, top_k, threshold, target_precision, keep_unmatched, ids, names.originals,
                      entity_ids=ids, columns=LINK_COLUMNS,
                      skipped={"mentions": mention_col.skipped, "kb": names.skipped}, calibration=calibration)  # fmt: skip


def calibrate(
    left: Any,
    right: Any,
    labels: Any,
    *,
    left_column: str | None = None,
    right_column: str | None = None,
    model: Any = DEFAULT_MODEL,
    target_precision: float = 0.9,
    matcher: Matcher | None = None,
    progress: bool = True,
    sample: int | None = SESSION_SAMPLE,
) -> Calibration:
    """A calibration of the default matcher's decision from labelled pairs of a join of ``left`` and ``right``
    (what ``phrasezoo match label`` writes, from labels you already have).

    ``labels``: a DataFrame (or a list of dicts) with columns ``right`` (a right value), ``left`` (its answer, a left
    value) and ``label`` or ``right_match`` (True/False, "y"/"n", 1/0; empty: not labelled); a :func:`join` result
    with a label column added works as it is. Each labelled pair is scored with the matcher's decision (its
    probability of that answer among the right value's best candidates); the labels fit a shift of its log-odds, and
    the join's threshold for each target precision is stored (what a streamed join uses; read on a seeded ``sample``
    of the right rows, plus the labelled ones, when ``right`` has more; None or 0: every row; the decision's claims
    then compare the rows read, so the probabilities can differ a little from a whole join's). Pass the result (or the
    file ``.save(path)`` writes) as ``calibration=`` of :func:`join`, :func:`link` or :func:`dedupe`, or as
    ``--calibration`` on the command line.

    Raises :class:`~phrasezoo.match.model.calibration.CalibrationError` (a ``ValueError``) with what to do: labels
    naming values the tables do not hold, a pair labelled both right and wrong, no pair labelled, a left table with
    fewer than two distinct rows, a matcher without a decision (``rapidfuzz``, ``tfidf``, an encoder alone).
    """
    check_target_precision(target_precision)
    left_col = as_column(left, left_column, what="left", allow_empty=True)
    check_reference(left_col.values)
    right_col = as_column(right, right_column, what="right", allow_empty=True)
    rows = label_rows(labels)
    check_known_rows(rows, right_col.values, left_col.values)
    if matcher is None:
        matcher = Matcher(model, progress=progress)
        decision = require_decision(matcher)  # before the left table is encoded
        matcher.fit(left_col.values, left_col.labels)
    else:
        decision = require_decision(_fitted(matcher, left_col, left_col.labels, "left table", {}))
    labelled = {row[0] for row in rows}
    keep = set(sampled_rows(len(right_col.values), sample).tolist())
    read = [value for k, value in enumerate(right_col.values) if k in keep or value in labelled]
    pool = answer_pool(matcher, read, candidates_of=labelled)
    return calibration_of(matcher.name, decision, pool, scored_labels(pool, rows), float(target_precision))


def calibrate_dedupe(
    names: Any,
    labels: Any,
    *,
    column: str | None = None,
    model: Any = DEFAULT_MODEL,
    target_precision: float = 0.9,
    progress: bool = True,
    sample: int | None = SESSION_SAMPLE,
) -> Calibration:
    """A calibration of :func:`~phrasezoo.match.dedupe` from labelled pairs of one list's rows (what ``phrasezoo
    match label --input`` writes, from labels you already have).

    ``names``: the list, read as :func:`~phrasezoo.match.dedupe` reads it. ``labels``: a DataFrame (or a list of
    dicts) with columns ``left`` and ``right`` (two values of the list, in either order) and ``label`` (True/False,
    "y"/"n", 1/0; empty: not labelled). Each pair is scored as ``dedupe`` scores it with labels (the default
    matcher's join decision over the list's other rows; the names searched are a seeded ``sample`` of the list's
    distinct names and the labelled ones, when the list has more); the labels fit a shift of its log-odds. Pass the
    result (or the file ``.save(path)`` writes) as ``calibration=`` of :func:`~phrasezoo.match.dedupe` or as
    ``--calibration`` of ``phrasezoo match dedupe``; a join or a link refuses it.

    Raises :class:`~phrasezoo.match.model.calibration.CalibrationError` (a ``ValueError``) with what to do: labels
    naming values the list does not hold, a pair labelled both right and wrong (in either order), no pair labelled,
    a list with fewer than two distinct rows, a model without a decision.
    """
    check_target_precision(target_precision)
    col = as_column(names, column, what="names", allow_empty=True)
    distinct, group = distinct_names(col.values)
    check_reference(distinct, "list")
    rows = label_rows(labels)
    check_known_rows(rows, col.values, col.values)
    first = {value: distinct[g] for value, g in zip(col.values, group.tolist())}  # a value's row in the search
    rows = [(first[a], first[b], said) for a, b, said in rows]
    matcher = Matcher(model, progress=progress)
    decision = require_decision(matcher)  # before the list is encoded
    pool = list_answer_pool(matcher.fit(distinct), sample, include={name for row in rows for name in row[:2]})
    labelled = scored_labels(pool, in_either_order(pool, rows))
    return calibration_of(matcher.name, decision, pool, labelled, float(target_precision), "list")
