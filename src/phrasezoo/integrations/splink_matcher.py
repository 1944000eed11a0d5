"""The default matcher's score as a splink comparison, with m and u fixed from its calibration.

splink multiplies Bayes factors onto a prior, ``probability_two_random_records_match`` (``lambda``). In a linkage
where each row of the second table names at most one row of the first, ``lambda = 1 / len(first)``: at 100,000 rows
a pair needs a Bayes factor of about 10^5 to reach probability 0.5, more than string and cosine levels trained by EM
give (`docs/matching-scale.md`: no pair reached 0.5). The default matcher already knows how often its top answer is
right at each score: its calibration table (``[target precision, threshold, recall]`` rows measured on dev data).
This module turns that into splink terms:

* :func:`add_matcher_scores`: each row of the second table gets the first-table row the matcher ranks first
  (``matcher_best``, a unique id) and its score (``matcher_score``); each first-table row gets its own id as
  ``matcher_best``, so ``block_on("matcher_best")`` pairs every second-table row with its pick (for predictions
  and for EM training of the other comparisons). pandas and DuckDB are matched here; Spark DataFrames through
  :func:`phrasezoo.match.spark.join_spark` (the fitted matcher saved once, loaded per executor).
* :func:`matcher_comparison`: levels "the pick, its score at or above ``threshold="auto"``'s threshold for target
  precision ``p``" for each target ``p`` (highest first), "a pick below them", "not the pick", and a null level
  for a side without a pick. Each level's m and u are fixed so that, alone under ``lambda = 1 / left_rows``, a
  pair's match probability is ``p``: its Bayes factor is ``p / (1 - p) x (left_rows - 1)``. Cutting splink's
  output at probability ``p`` then keeps the pairs ``threshold="auto"`` keeps at target ``p``. Other comparisons
  (dates, cities, ...) multiply in as usual, and EM trains them around the fixed levels; they are taken as
  independent of the name, as splink takes every comparison.

```python
from splink import DuckDBAPI, Linker, SettingsCreator, block_on
from phrasezoo.integrations.splink_matcher import add_matcher_scores, matcher_comparison

(left, right), matcher = add_matcher_scores([left, right], "name")
settings = SettingsCreator(
    link_type="link_only",
    comparisons=[matcher_comparison(matcher, left_rows=len(left))],
    blocking_rules_to_generate_predictions=[block_on("matcher_best")],
    probability_two_random_records_match=1 / len(left),
)
linker = Linker([left, right], settings, db_api=DuckDBAPI())
pairs = linker.inference.predict(threshold_match_probability=0.5)
```
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

try:
    import splink.comparison_level_library as cll
    import splink.comparison_library as cl
except ImportError as err:  # pragma: no cover - the extra is part of [dev]
    raise ImportError("phrasezoo.integrations.splink_matcher needs splink 4: pip install 'phrasezoo[splink]'") from err

from phrasezoo.match import Matcher
from phrasezoo.match.scoring.scorers import DEFAULT_MODEL

from .splink_tables import SPARK, check_column, is_missing, read_texts, table_kind, with_column

BEST_COLUMN = "matcher_best"
SCORE_COLUMN = "matcher_score"
DEFAULT_TARGETS = (0.95, 0.9, 0.8, 0.6)

__all__ = ["BEST_COLUMN", "DEFAULT_TARGETS", "SCORE_COLUMN", "add_matcher_scores", "score_bands",
           "matcher_comparison"]  # fmt: skip


# ---------------------------------------------------------------------------------------------------- columns
def add_matcher_scores(
    tables: Sequence[Any],
    column: str,
    model: Any = DEFAULT_MODEL,
    *,
    right_column: str | None = None,
    unique_id_column: str = "unique_id",
    matcher: Matcher | None = None,
    progress: bool = True,
    connection: Any = None,
) -> tuple[list[Any], Matcher]:
    """``([left, right], matcher)``: the two tables with :data:`BEST_COLUMN` and :data:`SCORE_COLUMN` added.

    The matcher (``model``, default the default matcher; or a ``matcher`` already fitted on ``left``'s texts) is
    fitted on ``left[column]`` with ``left[unique_id_column]`` as labels and searches ``right[right_column or
    column]``. A right row with a missing text gets nulls; a left row with a missing text is left out of the
    reference (no right row can pick it) and keeps its own id. Every input row is kept.
    """
    if len(tables) != 2:
        raise ValueError(f"add_matcher_scores links two tables (left, right), got {len(tables)}.")
    left, right = tables
    right_column = right_column or column
    check_column(left, column)
    check_column(right, right_column)
    for table in (left, right):
        check_column(table, unique_id_column, what="unique id column")
    if {table_kind(left), table_kind(right)} == {SPARK}:
        return _spark_scores(left, right, column, right_column, model, unique_id_column, matcher)
    if SPARK in {table_kind(left), table_kind(right)}:
        raise TypeError("Both tables must be Spark DataFrames, or neither.")
    ids, texts = read_texts(left, unique_id_column), read_texts(left, column)
    kept = [i for i, text in enumerate(texts) if not is_missing(text) and str(text).strip()]
    reference, labels = [str(texts[i]) for i in kept], [ids[i] for i in kept]
    _check_reference(ids, reference, column, unique_id_column)
    matcher = _fitted(matcher, model, reference, labels, progress)
    queries = read_texts(right, right_column)
    present = [j for j, text in enumerate(queries) if not is_missing(text) and str(text).strip()]
    best, score = [None] * len(queries), [None] * len(queries)
    if present:
        found_scores, found_ids = matcher.search([str(queries[j]) for j in present], top_k=1)
        for j, s, i in zip(present, found_scores[:, 0], found_ids[:, 0]):
            if i >= 0:
                best[j], score[j] = labels[int(i)], float(s)
    id_type = pa.array(ids).type
    left = with_column(left, BEST_COLUMN, pa.array(ids, type=id_type), connection=connection)
    left = with_column(left, SCORE_COLUMN, pa.array([None] * len(ids), type=pa.float64()), connection=connection)
    right = with_column(right, BEST_COLUMN, pa.array(best, type=id_type), connection=connection)
    right = with_column(right, SCORE_COLUMN, pa.array(score, type=pa.float64()), connection=connection)
    return [left, right], matcher


def _check_reference(ids: list, reference: list[str], column: str, unique_id_column: str) -> None:
    """The pick is named by the left row's id, so ids must be unique; and there must be something to match."""
    if len(set(ids)) != len(ids):
        raise ValueError(f"left's {unique_id_column!r} has duplicate values; the matcher's pick is named by it.")
    if not reference:
        raise ValueError(f"left's column {column!r} has no text to match against.")


def _fitted(matcher: Matcher | None, model: Any, reference: list[str], labels: list, progress: bool) -> Matcher:
    if matcher is None:
        return Matcher(model, progress=progress).fit(reference, labels)
    if matcher.reference != reference:
        raise ValueError("The matcher was fitted on another reference; fit it on left's texts or pass matcher=None.")
    matcher = copy.copy(matcher)  # this table's ids as labels; the caller's matcher is unchanged
    matcher.labels = list(labels)
    return matcher


def _spark_scores(left, right, column: str, right_column: str, model, unique_id_column: str, matcher):
    from pyspark.sql import functions as F  # lazy: Spark tables only (pyspark is optional)

    from phrasezoo.match.spark.join import join_spark, reference_rows  # lazy: imports pyspark

    if right_column in (BEST_COLUMN, SCORE_COLUMN):
        raise ValueError(f"Rename right's column {right_column!r} first: it is one this function writes.")
    reference, labels, _ = reference_rows(left, column, unique_id_column, "skip")  # left collected once, here
    _check_reference(labels, reference, column, unique_id_column)
    matcher = _fitted(matcher, model, reference, labels, progress=False)
    base = right.drop(BEST_COLUMN, SCORE_COLUMN)
    collected = pd.Series(reference, index=labels)  # join_spark reads it as it is instead of collecting left again
    picks, _ = join_spark(collected, base.select(unique_id_column, right_column), top_k=1,
                          right_column=right_column, on_missing="skip", matcher=matcher)  # fmt: skip
    id_type = left.schema[unique_id_column].dataType
    picks = picks.select(F.col(unique_id_column), F.col("left_index").cast(id_type).alias(BEST_COLUMN),
                         F.col("score").alias(SCORE_COLUMN))  # fmt: skip
    left = left.withColumn(BEST_COLUMN, F.col(unique_id_column)).withColumn(SCORE_COLUMN, F.lit(None).cast("double"))
    return [left, base.join(picks, on=unique_id_column, how="left")], matcher


# ------------------------------------------------------------------------------------------------- comparison
def score_bands(calibration: Sequence[Sequence[float]], targets: Sequence[float] = DEFAULT_TARGETS):
    """``[(threshold, right_share, target)]``, highest target first: for each target precision ``p``, the score
    threshold at which the matcher's top answers reached ``p`` on the dev domains (``threshold="auto"``'s), and the
    share of queries whose right answer scores between it and the next higher band's threshold (the calibration's
    recall at ``p`` minus the recall at the higher target). A pair in a band gets match probability ``p``, so
    cutting splink's output at probability ``p`` keeps what ``threshold="auto"`` with ``target_precision=p`` keeps.
    """
    table = sorted((float(row[0]), float(row[1]), float(row[2])) for row in calibration if len(row) >= 3)
    if not table:
        raise ValueError("The calibration needs [target precision, threshold, recall] rows (the default matcher's).")
    low, high = table[0][0], table[-1][0]
    chosen = sorted({float(t) for t in targets}, reverse=True)
    if not chosen or any(not low <= t <= high for t in chosen):
        raise ValueError(f"targets must be precisions in the calibrated range [{low}, {high}], got {list(targets)}.")
    values = np.array([r[0] for r in table])
    bands, recall_above = [], 0.0
    for target in chosen:
        threshold = float(np.interp(target, values, [r[1] for r in table]))
        recall = float(np.interp(target, values, [r[2] for r in table]))
        bands.append((threshold, max(recall - recall_above, 1e-6), target))
        recall_above = max(recall, recall_above)
    return bands


def matcher_comparison(
    matcher_or_calibration: Any,
    left_rows: int,
    targets: Sequence[float] = DEFAULT_TARGETS,
    *,
    best_column: str = BEST_COLUMN,
    score_column: str = SCORE_COLUMN,
    unique_id_column: str = "unique_id",
):
    """A splink comparison of the matcher's pick and score with fixed m and u (see the module docstring).

    ``matcher_or_calibration``: the fitted default matcher of :func:`add_matcher_scores` (or any object with a
    ``threshold_for`` whose combination is calibrated; with a decision, the decision's cuts and training recall) or
    its calibration rows. ``left_rows``: rows of the first
    table (the prior ``lambda`` to use is ``1 / left_rows``).
    """
    if isinstance(left_rows, bool) or not isinstance(left_rows, (int, np.integer)) or left_rows < 2:
        raise ValueError(f"left_rows must be the first table's row count (>= 2), got {left_rows!r}.")
    bands = score_bands(_calibration(matcher_or_calibration), targets)
    return _comparison(bands, int(left_rows), best_column, score_column, unique_id_column)


def _calibration(source: Any) -> list:
    if isinstance(source, (list, tuple)):
        return list(source)
    decision = getattr(getattr(source, "scorer", None), "decision", None)
    if decision is not None:  # the matcher's scores are its decision's probabilities: its cuts decide
        return decision.calibration_rows()
    combination = getattr(getattr(source, "scorer", None), "combination", None)
    if combination is None or not combination.calibration:
        raise ValueError("matcher_comparison needs the default matcher (a calibrated 'hybrid' one) or its "
                         "calibration rows; an encoder or TF-IDF matcher's scores are not calibrated.")  # fmt: skip
    return combination.calibration


def _comparison(bands, left_rows: int, best: str, score: str, uid: str):
    """The splink comparison: a null level, one level per band, a pick below the bands, else."""
    odds_factor = left_rows - 1  # a level's Bayes factor times the prior odds 1 / (left_rows - 1): the band's odds
    # the pair's score when one side is the other's pick (either table may come first in a pair)
    pair_score = (f"COALESCE(CASE WHEN {best}_r = {uid}_l THEN {score}_r END, "
                  f"CASE WHEN {best}_l = {uid}_r THEN {score}_l END)")  # fmt: skip

    def fixed(level, m: float, u: float):
        return level.configure(m_probability=m, u_probability=u, fix_m_probability=True, fix_u_probability=True)

    levels = [cll.CustomLevel(f"{best}_l IS NULL OR {best}_r IS NULL", "a side without a pick").configure(
        is_null_level=True)]  # fmt: skip
    m_total = u_total = 0.0
    for threshold, m, precision in bands:  # m: of the true pairs, the share that are a pick in this band
        u = m / (precision / (1 - precision) * odds_factor)
        m_total, u_total = m_total + m, u_total + u
        levels.append(fixed(cll.CustomLevel(f"{pair_score} >= {threshold!r}", f"pick, score >= {threshold:.3f}"), m, u))
    # a pick below the lowest band: no evidence either way (Bayes factor 1)
    levels.append(fixed(cll.CustomLevel(f"{pair_score} IS NOT NULL", "pick, lower score"), 1e-6, 1e-6))
    levels.append(fixed(cll.ElseLevel(), max(1.0 - m_total, 1e-6), max(1.0 - u_total, 1e-6)))
    return cl.CustomComparison(levels, output_column_name="matcher",
                               comparison_description="the default matcher's pick and score, m and u fixed from "
                                                      "its calibration")  # fmt: skip
