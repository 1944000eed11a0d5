"""``join`` (fuzzy join of two tables) and ``link`` (entity linking against a knowledge base), pandas in and out."""

from __future__ import annotations

from typing import Any

import numpy as np

from .blocking import KeyFunction
from .inputs import as_column, as_kb
from .matcher import Matcher
from .scorers import DEFAULT_MODEL

JOIN_COLUMNS = ["right_index", "right", "left_index", "left", "score", "rank"]
LINK_COLUMNS = ["mention_index", "mention", "entity_id", "entity", "score", "rank"]


def _check_threshold(threshold: float | None) -> None:
    if threshold is not None and not (isinstance(threshold, (int, float)) and -1.0 <= threshold <= 1.0):
        raise ValueError(
            f"threshold must be a number in [-1, 1] (cosine; rapidfuzz scores are / 100), got {threshold!r}."
        )


def join(
    left: Any,
    right: Any,
    model: Any = DEFAULT_MODEL,
    top_k: int = 1,
    threshold: float | None = None,
    blocking: str | KeyFunction | None = None,
    *,
    left_column: str | None = None,
    right_column: str | None = None,
    index: str = "auto",
    blocking_fallback: str = "all",
    keep_unmatched: bool = False,
    on_missing: str = "raise",
    batch_size: int | None = None,
    progress: bool = True,
    matcher: Matcher | None = None,
):
    """Fuzzy-join two tables: each ``right`` value gets its ``top_k`` most similar ``left`` values.

    ``left`` is the reference table (as in AutoFJ); ``left``/``right`` are lists of strings, pandas Series or
    DataFrames (name the text column with ``left_column``/``right_column``). Returns a DataFrame with columns
    ``right_index, right, left_index, left, score, rank`` (index labels of the inputs, the matched values, the
    cosine similarity, 1 for the best match), one row per match, in right-table order. Matches scoring below
    ``threshold`` are dropped; ``keep_unmatched=True`` keeps right values without any match as one row with empty
    left columns. ``model``, ``index``, ``blocking``: see :class:`phrasezoo.match.Matcher`; a fitted ``matcher``
    may be passed to reuse its left-table index (``left`` must then be the table it was fitted on).
    """
    _check_threshold(threshold)
    left_col = as_column(left, left_column, what="left", on_missing=on_missing)
    right_col = as_column(right, right_column, what="right", on_missing=on_missing)
    if matcher is None:
        matcher = Matcher(model, index=index, blocking=blocking, blocking_fallback=blocking_fallback,
                          batch_size=batch_size, progress=progress).fit(left_col.values)  # fmt: skip
    elif matcher.reference != left_col.values:
        raise ValueError("The matcher was fitted on another left table; fit it on this one or pass matcher=None.")
    scores, ids = matcher.search(right_col.values, top_k)
    rows = []
    for r, (value, label) in enumerate(zip(right_col.values, right_col.labels)):
        rank = 0
        for score, i in zip(scores[r], ids[r]):
            if i < 0 or (threshold is not None and score < threshold):
                continue
            rank += 1
            rows.append((label, value, left_col.labels[i], left_col.values[i], float(score), rank))
        if rank == 0 and keep_unmatched:
            rows.append((label, value, None, None, np.nan, np.nan))
    return _frame(rows, JOIN_COLUMNS)


def link(
    mentions: Any,
    kb: Any,
    model: Any = DEFAULT_MODEL,
    top_k: int = 1,
    threshold: float | None = None,
    blocking: str | KeyFunction | None = None,
    *,
    mention_column: str | None = None,
    kb_name_column: str | None = None,
    kb_id_column: str | None = None,
    index: str = "auto",
    blocking_fallback: str = "all",
    keep_unmatched: bool = False,
    on_missing: str = "raise",
    batch_size: int | None = None,
    progress: bool = True,
    matcher: Matcher | None = None,
):
    """Link mentions to the entities of a knowledge base by their names (and aliases).

    ``kb`` is a list of names, a Series (ids = index), a dict ``{id: name or [aliases]}`` or a DataFrame with a
    name column (``kb_name_column``, default ``"name"``) and an id column (``kb_id_column``, default ``"id"`` when
    present, else the index). An entity with several names is scored by its best-matching name and listed once.
    Returns a DataFrame with ``mention_index, mention, entity_id, entity (the matched name), score, rank``.
    """
    _check_threshold(threshold)
    mention_col = as_column(mentions, mention_column, what="mentions", on_missing=on_missing)
    names, ids = as_kb(kb, kb_name_column, kb_id_column, on_missing=on_missing)
    if matcher is None:
        matcher = Matcher(model, index=index, blocking=blocking, blocking_fallback=blocking_fallback,
                          batch_size=batch_size, progress=progress).fit(names.values)  # fmt: skip
    elif matcher.reference != names.values:
        raise ValueError("The matcher was fitted on another KB; fit it on this one or pass matcher=None.")
    aliases_per_entity = len(ids) / max(1, len(set(map(_hashable, ids))))
    search_k = min(len(ids), max(top_k, int(np.ceil(top_k * aliases_per_entity)) + top_k))
    scores, found = matcher.search(mention_col.values, search_k)
    rows = []
    for m, (value, label) in enumerate(zip(mention_col.values, mention_col.labels)):
        seen: set = set()
        for score, i in zip(scores[m], found[m]):
            if i < 0 or (threshold is not None and score < threshold):
                continue
            key = _hashable(ids[i])
            if key in seen:
                continue  # a better-scoring alias of this entity is already listed
            seen.add(key)
            rows.append((label, value, ids[i], names.values[i], float(score), len(seen)))
            if len(seen) == top_k:
                break
        if not seen and keep_unmatched:
            rows.append((label, value, None, None, np.nan, np.nan))
    return _frame(rows, LINK_COLUMNS)


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _frame(rows: list[tuple], columns: list[str]):
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns)
    frame["score"] = frame["score"].astype("float64")
    frame["rank"] = frame["rank"].astype("Int64")
    return frame
