"""``phrasezoo.match.calibrate``: a calibration from labels you have, and every input it refuses, with what to do."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from phrasezoo.match import Calibration, CalibrationError, calibrate, dedupe, join, read_calibration
from tests.match.conftest import GOLD, LEFT, RIGHT


def gold_labels(result: pd.DataFrame) -> pd.DataFrame:
    """A join result with the user's label column added."""
    return result.assign(label=[GOLD[r] == a for r, a in zip(result["right"], result["left"])])


@pytest.fixture(scope="module")
def calibrated(decision_scorer) -> tuple[pd.DataFrame, Calibration]:
    result = join(LEFT, RIGHT, model=decision_scorer)
    return result, calibrate(LEFT, RIGHT, gold_labels(result), model=decision_scorer)


def test_a_labelled_join_result_gives_a_calibration_the_join_uses(calibrated, decision_scorer, tmp_path):
    result, calibration = calibrated
    assert calibration.matcher == decision_scorer.name and len(calibration.labels) == len(RIGHT)
    assert [row["probability"] for row in calibration.labels] == pytest.approx(result["score"].tolist(), rel=1e-6)
    assert read_calibration(calibration.save(tmp_path / "c.json")) == calibration
    joined = join(LEFT, RIGHT, model=decision_scorer, threshold="auto", calibration=tmp_path / "c.json")
    assert joined.attrs["threshold"] == calibration.stored_cut(0.9)
    assert joined.attrs["calibration"]["labels"] == len(RIGHT) and "estimate" in joined.attrs


def test_labels_as_dicts_of_y_and_n_of_any_rank(decision_scorer):
    scores, ids = join(LEFT, ["JP Morgan"], model=decision_scorer, top_k=2)[["score", "left"]].T.values
    labels = [{"right": "JP Morgan", "left": "JPMorgan Chase", "right_match": "y"},
              {"right": "JP Morgan", "left": "Morgan Stanley", "right_match": "n"},
              {"right": "JP Morgan", "left": "Morgan Stanley", "right_match": "no"},  # the same label twice: once
              {"right": "cherry tart", "left": "apple pie", "right_match": ""}]  # fmt: skip
    calibration = calibrate(LEFT, RIGHT, labels, model=decision_scorer, target_precision=0.8)
    assert [(row["answer"], row["right"]) for row in calibration.labels] == [
        ("JPMorgan Chase", True), ("Morgan Stanley", False), ("apple pie", None)]  # fmt: skip
    assert [row["probability"] for row in calibration.labels[:2]] == pytest.approx(list(scores), rel=1e-6)
    assert calibration.target_precision == 0.8 and [0.8, calibration.stored_cut(0.8)] in calibration.cuts


def test_dedupe_recalibrates_its_pairs_and_reads_labels_in_either_order(calibrated, decision_scorer):
    _, calibration = calibrated
    names = LEFT + ["NY Times", "JP Morgan", "LA Times", "cherry tart"]
    plain = dedupe(names, model=decision_scorer)
    found = dedupe(names, model=decision_scorer, calibration=calibration)
    report = found.attrs["report"]
    assert report["calibration"]["labels"] == len(RIGHT) and report["threshold"] != plain.attrs["report"]["threshold"]
    assert report["estimate"]["queries"] == report["estimate_tally"]["queries"] > 0
    assert found.loc[found["name"] == "JP Morgan", "cluster"].item() == found.loc[
        found["name"] == "JPMorgan Chase", "cluster"].item()  # fmt: skip


@pytest.mark.parametrize(
    ("left", "labels", "message"),
    [
        (LEFT, [{"right": "NY Time", "left": "The New York Times", "label": "y"}],
         r"Unknown rows: 1 labelled right value\(s\) are not in the right table \('NY Time'\)"),
        (LEFT, [{"right": "NY Times", "left": "New York Times", "label": "y"}],
         "Unknown rows: 1 labelled left value.*pass the left table the labels were made on"),
        ([], [{"right": "NY Times", "left": "x", "label": "y"}], "0 distinct row.*at least two distinct reference rows"),
        (["apple pie"], [], "1 distinct row.*at least two distinct reference rows"),
        (["apple pie", "apple pie"], [], "1 distinct row"),
        (LEFT, [{"right": "NY Times", "answer": "x"}], "need the columns right .*, left .* and label"),
        (LEFT, [{"right": "NY Times", "left": "The New York Times", "label": "maybe"}], "'maybe' is not a label"),
        (LEFT, [{"right": "NY Times", "left": None, "label": "y"}], "Label row 0 has no left value"),
    ],
)  # fmt: skip
def test_bad_labels_and_references_are_refused_before_anything_is_encoded(left, labels, message):
    with pytest.raises(CalibrationError, match=message):
        calibrate(left, RIGHT, labels, model="hybrid:no-such-encoder")  # never loaded: refused before


def test_labels_that_contradict_or_say_nothing_are_refused(decision_scorer):
    pair = {"right": "NY Times", "left": "The New York Times"}
    with pytest.raises(CalibrationError, match="labelled both right and wrong; keep one answer"):
        calibrate(LEFT, RIGHT, [{**pair, "label": "y"}, {**pair, "label": False}], model=decision_scorer)
    with pytest.raises(CalibrationError, match="No pair among the labels is labelled yes or no"):
        calibrate(LEFT, RIGHT, [{**pair, "label": "s"}], model=decision_scorer)


def test_a_matcher_without_a_decision_is_refused():
    labels = [{"right": "NY Times", "left": "The New York Times", "label": "y"}]
    with pytest.raises(CalibrationError, match="rapidfuzz:ratio has no decision.*Use the default model"):
        calibrate(LEFT, RIGHT, labels, model="rapidfuzz:ratio")


def test_a_file_of_another_matcher_decision_or_version_is_refused(calibrated, decision_scorer, tmp_path):
    _, calibration = calibrated
    for changes, message in (({"matcher": "hybrid:other"}, "made with hybrid:other"),
                             ({"decision": "0123456789abcdef"}, "decision 0123456789abcdef.*label this matcher's")):  # fmt: skip
        path = tmp_path / "other.json"
        path.write_text(json.dumps({**calibration.to_dict(), **changes}))
        with pytest.raises(CalibrationError, match=message):
            join(LEFT, RIGHT, model=decision_scorer, threshold="auto", calibration=path)
    path.write_text(json.dumps({**calibration.to_dict(), "format_version": 2}))
    with pytest.raises(CalibrationError, match="format_version 2; this phrasezoo reads 1. Label again"):
        join(LEFT, RIGHT, model=decision_scorer, calibration=path)
    path.write_text(json.dumps({"format_version": 1}))
    with pytest.raises(CalibrationError, match="is not a phrasezoo calibration file"):
        read_calibration(path)
    with pytest.raises(CalibrationError, match="needs the default matcher's decision; rapidfuzz:ratio has none"):
        join(LEFT, RIGHT, model="rapidfuzz:ratio", calibration=calibration)


def test_with_labels_dedupe_scores_pairs_by_the_join_decision_their_shift_was_fitted_on(calibrated):
    from dataclasses import replace

    from phrasezoo.match.model.calibration import decision_digest
    from phrasezoo.match.model.combinations import Combination
    from phrasezoo.match.model.learned import default_combination
    from phrasezoo.match.scoring.hybrid import HybridScorer
    from tests.match.conftest import hand_made_decision

    _, calibration = calibrated
    lists = hand_made_decision()
    lists.intercept = -30.0  # a dedupe decision that merges nothing
    decision = {**hand_made_decision().to_dict(), "lists": lists.to_dict()}
    scorer = HybridScorer(combination=Combination.from_dict({**default_combination().to_dict(), "decision": decision}),
                          progress=False)  # fmt: skip
    calibration = replace(calibration, decision=decision_digest(decision))  # the labels, on this matcher
    names = LEFT + ["NY Times", "JP Morgan", "LA Times"]
    assert dedupe(names, model=scorer, threshold=0.5)["cluster_size"].max() == 1  # the dedupe decision: no pair
    found = dedupe(names, model=scorer, calibration=calibration, threshold=0.5)  # the join's, recalibrated
    assert found.attrs["report"]["scored_by"] == "join decision"
    assert found.loc[found["name"] == "JP Morgan", "cluster"].item() == found.loc[
        found["name"] == "JPMorgan Chase", "cluster"].item()  # fmt: skip


def test_calibrate_dedupe_reads_labels_of_a_list_in_either_order(decision_scorer, tmp_path):
    from phrasezoo.match import calibrate_dedupe

    names = LEFT + ["NY Times", "JP Morgan", "LA Times", "cherry tart"]
    labels = pd.DataFrame({"left": ["NY Times", "JPMorgan Chase", "Morgan Stanley", "apple pie"],
                           "right": ["The New York Times", "JP Morgan", "JP Morgan", "cherry tart"],
                           "label": ["y", "y", "n", ""]})  # fmt: skip
    calibration = calibrate_dedupe(names, labels, model=decision_scorer)
    assert calibration.labels_of == "list" and len(calibration.labels) >= 3
    assert {frozenset((r["query"], r["answer"])) for r in calibration.labels if r["right"] is not None} == {
        frozenset(("NY Times", "The New York Times")), frozenset(("JP Morgan", "JPMorgan Chase")),
        frozenset(("JP Morgan", "Morgan Stanley"))}  # fmt: skip
    assert read_calibration(calibration.save(tmp_path / "list.json")) == calibration
    found = dedupe(names, model=decision_scorer, calibration=tmp_path / "list.json")
    assert found.attrs["report"]["calibration"]["shift"] == calibration.shift
    with pytest.raises(CalibrationError, match="calibrates dedupe only"):
        join(LEFT, RIGHT, model=decision_scorer, calibration=calibration)
    contradicting = pd.DataFrame({"left": ["NY Times", "The New York Times"], "right": ["The New York Times",
                                  "NY Times"], "label": ["y", "n"]})  # fmt: skip
    with pytest.raises(CalibrationError, match="labelled both right and wrong"):
        calibrate_dedupe(names, contradicting, model=decision_scorer)
    with pytest.raises(CalibrationError, match="Unknown rows"):
        calibrate_dedupe(names, pd.DataFrame({"left": ["NY Times"], "right": ["Chicago Tribune"], "label": ["n"]}),
                         model=decision_scorer)  # fmt: skip


def test_a_file_written_before_lists_had_labels_reads_as_a_join_s(calibrated, tmp_path):
    _, calibration = calibrated
    data = calibration.to_dict()
    del data["labels_of"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert read_calibration(tmp_path / "old.json").labels_of == "join"
    (tmp_path / "bad.json").write_text(json.dumps({**data, "labels_of": "lists"}))
    with pytest.raises(CalibrationError, match="labels_of 'lists' is not one of join, list"):
        read_calibration(tmp_path / "bad.json")


def test_a_join_and_a_dedupe_honour_the_labels_whatever_the_threshold(decision_scorer):
    """A pair the user labelled wrong is never returned (a join) or linked directly (a dedupe); one labelled right is,
    even below the threshold."""
    from phrasezoo.match import calibrate_dedupe

    plain = join(LEFT, RIGHT, model=decision_scorer, threshold=0.0)
    wrong = plain.iloc[0]  # the best-scoring answer of the first right row, labelled wrong
    low = plain.sort_values("score").iloc[0]  # the lowest-scoring answer, labelled right
    labels = [{"right": wrong["right"], "left": wrong["left"], "label": "n"},
              {"right": low["right"], "left": low["left"], "label": "y"}]  # fmt: skip
    calibration = calibrate(LEFT, RIGHT, labels, model=decision_scorer)
    cut = float(calibration.apply([low["score"]])[0]) + 1e-3  # above the labelled-right answer's score
    joined = join(LEFT, RIGHT, model=decision_scorer, threshold=cut, calibration=calibration)
    pairs = set(zip(joined["right"], joined["left"]))
    assert (wrong["right"], wrong["left"]) not in pairs and (low["right"], low["left"]) in pairs
    names = ["Goldman Sachs", "Goldman", "JPMorgan Chase", "JP Morgan", "Morgan Stanley", "apple pie"]
    before = dedupe(names, model=decision_scorer, threshold=0.0001)  # every candidate pair linked
    assert before["cluster"].nunique() == 1
    kept_apart = calibrate_dedupe(names, [{"left": a, "right": b, "label": "n"} for a in names for b in names
                                          if a < b], model=decision_scorer)  # fmt: skip
    apart = dedupe(names, model=decision_scorer, threshold=0.0001, calibration=kept_apart)
    assert apart["cluster"].nunique() == len(names) and apart.attrs["report"]["labels_honoured"]["kept_apart"] > 0
    linked = calibrate_dedupe(names, [{"left": "apple pie", "right": "Goldman", "label": "y"}], model=decision_scorer)
    together = dedupe(names, model=decision_scorer, threshold=0.9999, calibration=linked)
    assert together.loc[together["name"] == "apple pie", "cluster"].item() == together.loc[
        together["name"] == "Goldman", "cluster"].item()  # fmt: skip
    assert together.attrs["report"]["labels_honoured"] == {"linked": 1, "kept_apart": 0}


def test_threshold_alone_lets_the_threshold_decide_the_labelled_pairs_too(decision_scorer):
    """``Calibration.threshold_alone()``: the labels recalibrate and set the threshold, and win over nothing; a join
    returns an answer labelled wrong above the threshold and drops one labelled right below it, a dedupe links a pair
    labelled not; the reports say the labels were not honoured."""
    from phrasezoo.match import calibrate_dedupe

    plain = join(LEFT, RIGHT, model=decision_scorer, threshold=0.0)
    wrong, low = plain.iloc[0], plain.sort_values("score").iloc[0]
    labels = [{"right": wrong["right"], "left": wrong["left"], "label": "n"},
              {"right": low["right"], "left": low["left"], "label": "y"}]  # fmt: skip
    calibration = calibrate(LEFT, RIGHT, labels, model=decision_scorer)
    alone = calibration.threshold_alone()
    assert alone == calibration and alone.honour is False and calibration.honour is True  # a copy; the file the same
    cut = float(calibration.apply([low["score"]])[0]) + 1e-3
    joined = join(LEFT, RIGHT, model=decision_scorer, threshold=cut, calibration=alone)
    pairs = set(zip(joined["right"], joined["left"]))
    assert (wrong["right"], wrong["left"]) in pairs and (low["right"], low["left"]) not in pairs
    auto = join(LEFT, RIGHT, model=decision_scorer, threshold="auto", calibration=alone)
    assert auto.attrs["calibration"]["honoured"] is False
    assert (joined["score"] >= cut).all() and len(joined) == int((calibration.apply(plain["score"]) >= cut).sum())
    names = ["Goldman Sachs", "Goldman", "JPMorgan Chase", "JP Morgan", "Morgan Stanley", "apple pie"]
    kept_apart = calibrate_dedupe(names, [{"left": a, "right": b, "label": "n"} for a in names for b in names
                                          if a < b], model=decision_scorer)  # fmt: skip
    linked = dedupe(names, model=decision_scorer, threshold=0.0001, calibration=kept_apart.threshold_alone())
    assert linked["cluster"].nunique() == 1
    report = linked.attrs["report"]
    assert report["labels_honoured"] == {"linked": 0, "kept_apart": 0}
    auto = dedupe(names, model=decision_scorer, threshold="auto", calibration=kept_apart.threshold_alone())
    assert auto.attrs["report"]["calibration"]["honoured"] is False


def test_a_large_table_is_read_on_a_sample_plus_the_labelled_rows(decision_scorer):
    """``sample``: the stored thresholds are read on a seeded sample of the right rows (a list's names) plus the
    labelled ones. The decision's claims compare the rows searched together, so a sample's probabilities can differ
    a little from the whole table's (here a join's are equal, a list's close)."""
    from phrasezoo.match import calibrate_dedupe

    labels = [{"right": "JP Morgan", "left": "JPMorgan Chase", "label": "y"},
              {"right": "Goldman", "left": "Morgan Stanley", "label": "n"},
              {"right": "LA Times", "left": "Los Angeles Times", "label": "y"}]  # fmt: skip
    whole = calibrate(LEFT, RIGHT, labels, model=decision_scorer, sample=0)
    part = calibrate(LEFT, RIGHT, labels, model=decision_scorer, sample=2)
    assert part.labels == whole.labels and part.shift == whole.shift
    names = LEFT + ["NY Times", "JP Morgan", "LA Times", "cherry tart"]
    pairs = [{"left": "JP Morgan", "right": "JPMorgan Chase", "label": "y"},
             {"left": "Morgan Stanley", "right": "JPMorgan Chase", "label": "n"}]  # fmt: skip
    whole = calibrate_dedupe(names, pairs, model=decision_scorer, sample=0)
    part = calibrate_dedupe(names, pairs, model=decision_scorer, sample=2)
    assert [(r["query"], r["answer"], r["right"]) for r in part.labels] == [
        (r["query"], r["answer"], r["right"]) for r in whole.labels] and len(part.labels) == 2  # fmt: skip
    # a list's claims compare the names searched (the sample and the labelled ones), not every name: close, not equal
    assert [r["probability"] for r in part.labels] == pytest.approx([r["probability"] for r in whole.labels], abs=0.05)
