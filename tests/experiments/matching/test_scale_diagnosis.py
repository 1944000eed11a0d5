"""experiments/matching/scale_diagnosis.py: the top-1 reading and the table, on made-up candidates."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "experiments" / "matching" / "scale_diagnosis.py"


def load():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return runpy.run_path(str(SCRIPT), run_name="not_main")


def test_top1_takes_the_best_valid_candidate_and_none_for_an_empty_row():
    script = load()
    cands = np.array([[4, 7, -1], [-1, -1, -1], [2, 3, 5]])
    scores = np.array([[0.1, 0.9, 5.0], [1.0, 1.0, 1.0], [0.3, 0.2, 0.1]], dtype=np.float32)
    assert script["top1"](scores, cands).tolist() == [7, -1, 2]  # the padded slot's 5.0 is not read


def test_the_table_has_one_column_per_size_and_every_reading():
    script = load()
    reading = {"default combination": 0.8, "char cosine among candidates": 0.7}
    rows = [{"size": n, "queries": 10, "candidates_per_query": 20.0, "candidate_recall": r, "combination": "+x",
             "top1": reading, "neighbourhood_means": {"emb_hub": {"true_rows": 0.5, "all_candidates": 0.6}}}
            for n, r in ((1000, 0.97), (4000, 0.9))]  # fmt: skip
    text = script["render"]({"rows": rows, "command": "c", "created": "2026-11-28T00:00:00"})
    assert "| reading (same candidates per size) | 1,000 x 1,000 | 4,000 x 4,000 |" in text
    assert "| candidate recall (true row among the candidates) | 97.0 | 90.0 |" in text
    assert "| top-1: char cosine among candidates | 70.0 | 70.0 |" in text
    assert "| `emb_hub` mean: true rows / all candidates | 0.500 / 0.600 | 0.500 / 0.600 |" in text


def test_the_footer_names_the_file_the_report_was_written_to():
    script = load()
    rows = [{"size": 10, "queries": 1, "candidates_per_query": 2.0, "candidate_recall": 1.0, "top1": {"d": 1.0},
             "neighbourhood_means": {}}]  # fmt: skip
    report = {"rows": rows, "command": "c", "created": "2026-11-29T00:00:00"}
    assert f"From `{script['OUT']}`" in script["render"](report)  # records written before the "file" key
    assert "From `elsewhere.json`" in script["render"]({**report, "file": "elsewhere.json"})
