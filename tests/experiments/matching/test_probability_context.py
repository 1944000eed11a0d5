"""experiments/matching/probability_context.py: rule 28's reading of one join, on a made-up table."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "experiments" / "matching" / "probability_context.py"


def load():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return runpy.run_path(str(SCRIPT), run_name="not_main")


def test_each_way_reads_its_own_scores_and_threshold():
    script = load()
    from matching_dev import TableFeatures

    from phrasezoo.match.features.pairs import FEATURES

    n = 4  # four queries, two candidates each; candidate 0 is right for queries 0-2, wrong for query 3
    labels = np.zeros((n, 2), dtype=bool)
    labels[:3, 0] = True
    table = TableFeatures("t", np.zeros((n, 2), dtype=int), np.zeros((n, 2, len(FEATURES)), dtype=np.float32),
                          labels, np.ones(n, dtype=bool), FEATURES)  # fmt: skip
    shipped = {"t": np.array([[0.99, 0.1], [0.97, 0.1], [0.6, 0.1], [0.95, 0.1]])}
    context = {"t": np.array([[0.99, 0.1], [0.97, 0.1], [0.9, 0.1], [0.5, 0.1]])}
    fixed = {target: 0.9 for target in script["CHECK_TARGETS"]}
    out = script["judge"]([table], {"table": (shipped, fixed), "context-table": (context, fixed),
                                    "context-adaptive": (context, None)})  # fmt: skip
    # every query has a gold match somewhere (query 3's is not among its candidates): recall counts all four
    assert out["0.9"]["table"] == {"precision": 0.6667, "recall": 0.5}  # keeps queries 0, 1 and the wrong 3
    assert out["0.9"]["context-table"] == {"precision": 1.0, "recall": 0.75}  # the context moved 3 down and 2 up
    # adaptive at 0.95: mean of 0.99, 0.97 = 0.98 >= 0.95; adding 0.9 gives 0.953 >= 0.95; adding 0.5 drops below
    assert out["0.95"]["context-adaptive"] == {"precision": 1.0, "recall": 0.75}
