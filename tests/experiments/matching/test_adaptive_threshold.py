"""experiments/matching/adaptive_threshold.py: rule 27's judgement and table, on made-up joins."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "experiments" / "matching" / "adaptive_threshold.py"


def load():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return runpy.run_path(str(SCRIPT), run_name="not_main")


def cells(table: tuple[float, float], adaptive: tuple[float, float], iso: tuple[float, float]) -> dict:
    return {way: {"precision": p, "recall": r} for way, (p, r) in zip(("table", "adaptive", "adaptive-iso"),
                                                                      (table, adaptive, iso))}  # fmt: skip


def test_an_adaptive_way_wins_only_holding_as_many_pairs_with_more_recall():
    script = load()
    rows = {"aliases": {"0.9": cells((0.95, 0.30), (0.89, 0.50), (0.85, 0.60))},
            "noisy": {"0.9": cells((1.00, 0.50), (0.91, 0.90), (0.93, 0.95))}}  # fmt: skip
    decision = script["decide"](rows)
    assert decision["summary"]["table"]["held"] == 2
    assert decision["summary"]["adaptive"]["held"] == 2  # 0.89 is within 0.02 below 0.9
    assert decision["summary"]["adaptive-iso"]["held"] == 1  # 0.85 is not: more recall does not buy it
    assert decision["summary"]["adaptive"]["within_both_sides"] == 2
    assert decision["summary"]["table"]["within_both_sides"] == 0
    assert decision["winner"] == "adaptive"


def test_the_table_stays_when_the_recall_gain_is_within_the_margin():
    script = load()
    rows = {"noisy": {"0.9": cells((0.95, 0.50), (0.91, 0.51), (0.91, 0.515))}}
    assert script["decide"](rows)["winner"] == "table"


def test_kept_metrics_count_precision_one_when_nothing_is_kept():
    script = load()
    top, correct = np.array([0.9, 0.5]), np.array([True, False])
    assert script["kept_metrics"](top, correct, 2, np.array([False, False]))["precision"] == 1.0
    assert script["kept_metrics"](top, correct, 2, top >= 0.5) == {"precision": 0.5, "recall": 0.5, "kept": 2}


def test_render_names_each_way_and_the_winner():
    script = load()
    rows = {"noisy": {"0.9": cells((0.95, 0.50), (0.91, 0.80), (0.91, 0.85))}}
    report = {"rows": rows, "decision": script["decide"](rows), "command": "c", "created": "2026-11-29T00:00:00"}
    text = script["render"](report)
    assert "| noisy | 0.9 | 0.950 / 0.500 | 0.910 / 0.800 | 0.910 / 0.850 |" in text
    assert "| adaptive-iso | 1 of 1 | 1 | 0.850 |" in text
    assert "Winner by rule 27: **adaptive-iso**" in text
    ways = ("table", "context-table", "context-adaptive")  # rule 28's ways, named in the report
    rows = {"noisy": {"0.9": {w: {"precision": 0.95, "recall": 0.5} for w in ways}}}
    text = script["render"](
        {
            "rows": rows,
            "decision": script["decide"](rows, ways),
            "ways": list(ways),
            "rule": "docs/experiments/matching.md rule 28",
            "command": "c",
            "created": "2026-11-29",
        }
    )
    assert "| context-adaptive: precision / recall |" in text and "Winner by rule 28: **table**" in text


def test_adaptive_threshold_keeps_the_longest_prefix_whose_mean_reaches_the_target():
    threshold = load()["adaptive_threshold"]
    scores = np.array([0.5, 0.99, 0.1, 0.95, 0.9])
    assert threshold(scores, 0.9) == 0.9  # kept 0.99, 0.95, 0.9: mean 0.947; adding 0.5 gives 0.835
    assert threshold(scores, 0.99) == 0.99
    assert threshold(np.array([0.5, 0.2]), 0.9) == float("inf")  # even the best answer is below: keep nothing
    assert threshold(np.array([-np.inf, 0.95]), 0.9) == 0.95  # a query without a candidate is never kept
    assert threshold(np.array([]), 0.9) == float("inf")
