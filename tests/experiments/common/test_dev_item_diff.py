"""experiments/common/dev_item_diff.py: per-item wins and losses of a model against a reference on a dev retrieval task."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "common" / "dev_item_diff.py"


def test_item_diff_counts_lost_and_gained_items_by_query_length():
    script = runpy.run_path(str(SCRIPT))
    queries = ["Kura", "Sioux Uprising", "Minoan", "Great War"]
    candidates = ["Kura River", "Dakota War of 1862", "Minoan civilization", "World War I", "Minnow", "World War II"]
    gold = [0, [1], {2}, 3]  # one index or several, as the dev sets give them
    picks = {"ref": np.array([0, 5, 2, 5]), "new": np.array([0, 1, 4, 3])}
    report = script["item_diff"](queries, candidates, gold, picks, examples=5)
    assert report["n"] == 4 and report["one_word_queries"] == 2
    ref, new = report["models"]["ref"], report["models"]["new"]
    assert ref["accuracy"] == 0.5 and new["accuracy"] == 0.75
    assert ref["accuracy_one_word"] == 1.0 and new["accuracy_one_word"] == 0.5
    assert "lost" not in ref  # the reference is not compared with itself
    assert (new["lost"], new["gained"], new["lost_one_word"], new["gained_one_word"]) == (1, 2, 1, 0)
    assert new["lost_examples"] == [{"query": "Minoan", "gold": "Minoan civilization", "picked": "Minnow"}]
    assert [e["picked"] for e in new["gained_examples"]] == ["World War II", "World War II"]  # the reference's picks


def test_a_single_model_is_refused_with_the_fix():
    script = runpy.run_path(str(SCRIPT))
    with pytest.raises(SystemExit):
        script["main"](["--models", "baseline:minilm-l6"])
