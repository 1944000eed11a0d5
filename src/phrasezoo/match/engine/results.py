"""From a fitted matcher's top-k answers to the result table of ``join``, ``link`` and ``Matcher.transform``.

One routine for all three: search, drop answers under the threshold (a number, or ``"auto"``: the calibrated
threshold of the target precision), collapse the aliases of one entity (``link``), and account for every query:
a query is in the result (matched, or as an empty row with ``keep_unmatched``), or its label is listed in
``attrs["unmatched"]`` (no match passed the threshold) or ``attrs["skipped"]`` (missing value, ``on_missing="skip"``).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ..io.inputs import Column
from ..model.calibration import Calibration, as_calibration
from .estimate import estimate_of, score_tally

JOIN_COLUMNS = ["right_index", "right", "left_index", "left", "score", "rank"]
LINK_COLUMNS = ["mention_index", "mention", "entity_id", "entity", "score", "rank"]


def check_threshold(threshold: Any) -> None:
    if threshold is None or threshold == "auto":
        return
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a number, 'auto' or None, got {threshold!r}.")
    if not -1.0 <= float(threshold) <= 1.0:
        raise ValueError(
            f"threshold must be in [-1, 1] (cosine, match probability, or rapidfuzz / 100), got {threshold!r}."
        )


def check_target_precision(target_precision: Any, what: str = "target_precision") -> float:
    """A target precision as a float; a clear error (naming it ``what``) for anything but a number in (0, 1)."""
    if (
        isinstance(target_precision, bool)
        or not isinstance(target_precision, (int, float))
        or not (0 < target_precision < 1)
    ):
        raise ValueError(f"{what} must be a number in (0, 1), got {target_precision!r}.")
    return float(target_precision)


def check_top_k(top_k: Any) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
    return int(top_k)


def hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def match_rows(
    matcher,
    queries: Column,
    top_k: int,
    threshold: float | str | None,
    target_precision: float,
    keep_unmatched: bool,
    reference_labels: list[Any],
    reference_values: list[Any],
    entity_ids: list[Any] | None = None,
    columns: list[str] = JOIN_COLUMNS,
    skipped: dict[str, list[Any]] | None = None,
    calibration: Calibration | str | os.PathLike | None = None,
):
    """The result DataFrame (see the module docstring); ``entity_ids`` collapses several names of one entity;
    ``calibration`` (a file or :class:`~phrasezoo.match.model.calibration.Calibration` from labels of this
    matcher's answers) recalibrates the scores and, with ``threshold="auto"``, sets the threshold from this join's
    recalibrated scores and its labels."""
    check_threshold(threshold)
    top_k = check_top_k(top_k)
    calibration = as_calibration(calibration)
    decision = getattr(matcher.scorer, "decision", None)
    if calibration is not None:
        calibration.check_matcher(matcher.name, decision.to_dict() if decision is not None else None)
    cut = matcher.threshold_for(target_precision) if threshold == "auto" else threshold
    search_k = top_k
    if entity_ids is not None:
        names_per_entity = len(entity_ids) / max(1, len(set(map(hashable, entity_ids))))
        search_k = min(len(entity_ids), max(top_k, int(np.ceil(top_k * names_per_entity)) + top_k))
    scores, found = matcher.search(queries.values, search_k) if len(queries) else (np.zeros((0, 1)), None)
    if calibration is not None and len(queries):
        scores = calibration.apply(scores)
        if threshold == "auto":
            answers = [matcher.reference[i] if i >= 0 else None for i in found[:, 0].tolist()]
            cut = calibration.cut_for(scores[:, 0], queries.values, answers, target_precision)
    verdict = None
    if calibration is not None and len(queries):  # the user's own answers win over the threshold
        verdict = calibration.verdicts(queries.values, found, matcher.reference)
    rows, unmatched = [], []
    for q, (value, label) in enumerate(zip(queries.originals or queries.values, queries.labels)):
        seen: set = set()
        for r, (score, i) in enumerate(zip(scores[q], found[q])):
            said = 0 if verdict is None else verdict[q, r]
            if i < 0 or said < 0 or (cut is not None and score < cut and said <= 0):
                continue
            key = hashable(entity_ids[i]) if entity_ids is not None else i
            if key in seen:
                continue  # a better-scoring name of this entity is listed already
            seen.add(key)
            target = entity_ids[i] if entity_ids is not None else reference_labels[i]
            rows.append((label, value, target, reference_values[i], float(score), len(seen)))
            if len(seen) == top_k:
                break
        if not seen:
            unmatched.append(label)
            if keep_unmatched:
                rows.append((label, value, None, None, np.nan, np.nan))
    frame = _frame(rows, columns)
    frame.attrs["threshold"] = None if cut is None else float(cut)
    if threshold == "auto":
        auto_report(frame, scores[:, 0] if decision is not None and len(queries) else None, target_precision,
                    calibration)  # fmt: skip
    frame.attrs["unmatched"] = unmatched
    frame.attrs["skipped"] = {k: v for k, v in (skipped or {}).items() if v}
    if frame.attrs["skipped"]:
        counts = ", ".join(f"{len(v)} {k} row(s)" for k, v in frame.attrs["skipped"].items())
        warnings.warn(f"Skipped {counts} with missing values (on_missing='skip'); their labels are in "
                      "result.attrs['skipped'].", stacklevel=3)  # fmt: skip
    return frame


def auto_report(frame, answer_scores: np.ndarray | None, target_precision: float,
                calibration: Calibration | None) -> None:  # fmt: skip
    """The ``attrs`` of a ``threshold="auto"`` result: the target, the calibration used, and (for a matcher whose
    scores are probabilities, ``answer_scores`` not None) the join's own estimate and its tally, with a warning when
    the estimate falls short of the target."""
    frame.attrs["target_precision"] = float(target_precision)
    if calibration is not None:
        frame.attrs["calibration"] = {**calibration.summary(), "stored_cut": calibration.use_stored_cuts}
    if answer_scores is not None:
        frame.attrs["estimate_tally"] = score_tally(answer_scores, frame.attrs["threshold"])
        frame.attrs["estimate"] = estimate_of(frame.attrs["estimate_tally"], target_precision, calibration is not None)
        if frame.attrs["estimate"]["warning"]:
            warnings.warn(frame.attrs["estimate"]["warning"], stacklevel=4)


def _frame(rows: list[tuple], columns: list[str]):
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    frame = pd.DataFrame(rows, columns=columns, dtype=object)  # labels and values keep their own types
    frame["score"] = frame["score"].astype("float64")
    frame["rank"] = frame["rank"].astype("Int64")
    return frame
