"""The default matcher's score as a splink comparison: fixed m/u, probabilities = the calibrated targets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("splink")

from splink import DuckDBAPI, Linker, SettingsCreator, block_on  # noqa: E402

from phrasezoo.integrations.splink_matcher import (  # noqa: E402
    BEST_COLUMN,
    SCORE_COLUMN,
    add_matcher_scores,
    matcher_comparison,
    score_bands,
)
from phrasezoo.match.model.learned import default_combination  # noqa: E402

LEFT = ["International Business Machines", "General Electric Company", "World Health Organization",
        "New York Times", "Massachusetts Institute of Technology", "Deutsche Bank AG"]  # fmt: skip
RIGHT = ["Intl Business Machines Corp", "General Electrc", None, "NY Times newspaper", "MIT Institute of Technology"]


def test_bands_follow_the_calibration_and_refuse_targets_outside_it():
    calibration = default_combination().calibration
    bands = score_bands(calibration)
    assert [target for _, _, target in bands] == [0.95, 0.9, 0.8, 0.6]
    thresholds = [threshold for threshold, _, _ in bands]
    assert thresholds == sorted(thresholds, reverse=True)
    assert thresholds[1] == pytest.approx(default_combination().threshold_for(0.9), abs=1e-6)
    assert all(m > 0 for _, m, _ in bands) and sum(m for _, m, _ in bands) <= 1
    with pytest.raises(ValueError, match="calibrated range"):
        score_bands(calibration, targets=(0.2,))
    with pytest.raises(ValueError, match="recall"):
        score_bands([[0.9, 0.5]])


@pytest.fixture(scope="module")
def scored():
    left = pd.DataFrame({"unique_id": np.arange(10, 16), "name": LEFT})
    right = pd.DataFrame({"unique_id": np.arange(100, 105), "name": RIGHT})
    (left, right), matcher = add_matcher_scores([left, right], "name", progress=False)
    return left, right, matcher


def test_each_right_row_gets_the_matchers_pick_and_missing_texts_get_nulls(scored):
    left, right, matcher = scored
    assert left[BEST_COLUMN].tolist() == list(range(10, 16)) and left[SCORE_COLUMN].isna().all()
    assert len(right) == len(RIGHT) and pd.isna(right[BEST_COLUMN][2]) and pd.isna(right[SCORE_COLUMN][2])
    scores, ids = matcher.search([RIGHT[0]], top_k=1)
    assert right[BEST_COLUMN][0] == 10 + int(ids[0, 0]) and right[SCORE_COLUMN][0] == pytest.approx(scores[0, 0])


def test_the_default_matchers_bands_are_its_decisions_cuts(scored):
    """The default matcher scores with its decision: the levels cut where threshold="auto" cuts (one decision
    everywhere), not at the older calibration table's thresholds."""
    _, _, matcher = scored
    assert matcher.scorer.decision is not None
    bands = score_bands(_rows(matcher))
    for threshold, m, target in bands:
        assert threshold == pytest.approx(matcher.threshold_for(target), abs=1e-6)
        assert m > 0
    assert sum(m for _, m, _ in bands) <= 1


def _rows(matcher):
    return matcher.scorer.decision.calibration_rows()


def test_splink_probability_is_the_target_of_the_picks_score_band(scored):
    left, right, matcher = scored
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[matcher_comparison(matcher, left_rows=len(left))],
        blocking_rules_to_generate_predictions=[block_on(BEST_COLUMN)],
        probability_two_random_records_match=1 / len(left),
    )
    linker = Linker([left, right], settings, db_api=DuckDBAPI())
    predictions = linker.inference.predict().as_pandas_dataframe()
    assert sorted(predictions["unique_id_r"]) == [100, 101, 103, 104]  # the row without a text is not compared
    for row in predictions.itertuples():
        score = right.set_index("unique_id").loc[row.unique_id_r, SCORE_COLUMN]
        expected = next((t for threshold, _, t in score_bands(_rows(matcher))
                         if score >= threshold), 1 / len(left))  # fmt: skip
        assert row.match_probability == pytest.approx(expected, rel=1e-6), (row.unique_id_r, score)
    assert (predictions["match_probability"] >= 0.5).any()


def test_bad_input_says_what_to_do():
    left = pd.DataFrame({"unique_id": [1, 1], "name": ["a", "b"]})
    right = pd.DataFrame({"unique_id": [1], "name": ["a"]})
    with pytest.raises(ValueError, match="duplicate"):
        add_matcher_scores([left, right], "name", progress=False)
    with pytest.raises(ValueError, match="two tables"):
        add_matcher_scores([left], "name", progress=False)
    with pytest.raises(ValueError, match="left_rows"):
        matcher_comparison(default_combination().calibration, left_rows=1)
    with pytest.raises(ValueError, match="not calibrated"):
        matcher_comparison(object(), left_rows=10)


def test_spark_gives_the_picks_and_probabilities_of_one_machine(scored, spark):
    from splink import SparkAPI

    left, right, fitted = scored
    columns = ["unique_id", "name"]
    (left_df, right_df), matcher = add_matcher_scores(
        [spark.createDataFrame(left[columns]), spark.createDataFrame(right[columns])], "name", matcher=fitted
    )  # the fitted matcher is saved once and loaded by each executor
    picks = right_df.toPandas().sort_values("unique_id").reset_index(drop=True)
    assert picks[BEST_COLUMN].astype("Int64").tolist() == right[BEST_COLUMN].astype("Int64").tolist()
    assert np.allclose(picks[SCORE_COLUMN].fillna(-1), right[SCORE_COLUMN].astype(float).fillna(-1), atol=1e-6)
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[matcher_comparison(matcher, left_rows=len(LEFT))],
        blocking_rules_to_generate_predictions=[block_on(BEST_COLUMN)],
        probability_two_random_records_match=1 / len(LEFT),
    )
    on_spark = Linker([left_df, right_df], settings, db_api=SparkAPI(spark_session=spark)).inference.predict()
    on_duckdb = Linker([left, right], settings, db_api=DuckDBAPI()).inference.predict()
    key = ["unique_id_l", "unique_id_r"]
    a = on_spark.as_pandas_dataframe().sort_values(key)[key + ["match_probability"]].reset_index(drop=True)
    b = on_duckdb.as_pandas_dataframe().sort_values(key)[key + ["match_probability"]].reset_index(drop=True)
    assert a[key].astype(int).equals(b[key].astype(int))
    assert np.allclose(a["match_probability"], b["match_probability"])
