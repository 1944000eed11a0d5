"""The calibration core's pieces this branch adds: the thresholds a file keeps for streamed joins, labels of one
list's pairs in either order, and a file whose thresholds are not sound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from phrasezoo.match.model.calibration import (
    CUT_TARGETS,
    Calibration,
    CalibrationError,
    expected_precision,
    labelled_cut,
    read_calibration,
)


def calibration() -> Calibration:
    labels = [{"query": "a", "answer": "A", "right": True, "probability": 0.9},
              {"query": "b", "answer": "B", "right": False, "probability": 0.8},
              {"query": "c", "answer": "C", "right": None, "probability": 0.5}]  # fmt: skip
    return Calibration.from_labels("m", {"d": 1}, labels, target_precision=0.92)


def test_the_stored_thresholds_are_the_labelled_joins_own():
    rng = np.random.default_rng(0)
    p = rng.random(200).astype(np.float32)
    queries, answers = ["a", "b", "c"] + [f"q{i}" for i in range(197)], ["A", "B", "C"] + [f"x{i}" for i in range(197)]
    cal = calibration().with_cuts(p, queries, answers)
    assert [row[0] for row in cal.cuts] == sorted({*CUT_TARGETS, 0.92})
    known, right = cal.known(queries, answers)
    for target in (0.5, 0.9, 0.92):
        assert cal.stored_cut(target) == labelled_cut(cal.apply(p), known, right, target)
    assert cal.stored_cut(0.91) == pytest.approx(
        np.interp(0.91, [0.9, 0.92], [cal.stored_cut(0.9), cal.stored_cut(0.92)])
    )
    keep = cal.apply(p) >= cal.stored_cut(0.9)
    assert expected_precision(cal.apply(p), known, right, cal.stored_cut(0.9)) >= 0.9 and keep.any()
    assert cal.cut_for(cal.apply(p), queries, answers, 0.9) == cal.stored_cut(0.9)
    cal.use_stored_cuts = True  # a streamed join: one chunk's scores do not move the threshold
    assert cal.cut_for(p[:10], queries[:10], answers[:10], 0.9) == cal.stored_cut(0.9)


def test_a_target_no_threshold_reaches_keeps_nothing_and_one_outside_the_file_is_refused():
    cal = calibration()
    cal.cuts = [[0.5, 0.2], [0.9, 0.7], [0.99, None]]
    assert cal.stored_cut(0.99) == np.inf and cal.stored_cut(0.95) == np.inf
    with pytest.raises(CalibrationError, match="target precisions 0.5 to 0.99, not 0.3"):
        cal.stored_cut(0.3)
    cal.cuts = []
    with pytest.raises(CalibrationError, match="holds no thresholds"):
        cal.stored_cut(0.9)


def test_pairs_of_one_list_are_known_in_either_order():
    known, right = calibration().known_either(["A", "b", "c", "x"], ["a", "B", "C", "y"])
    assert known.tolist() == [True, True, False, False] and right.tolist()[:2] == [True, False]


def test_a_file_with_unsound_thresholds_is_refused(tmp_path):
    written = calibration()
    written.cuts = [[0.5, 0.1], [0.9, None]]
    path = written.save(tmp_path / "c.json")
    assert read_calibration(path) == written
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "cuts": [[0.9, 0.5], [0.5, 0.1]]}))
    with pytest.raises(CalibrationError, match="rising target; label again"):
        read_calibration(path)
