"""experiments/matching/int8_screens.py: round 7's screens table, and the batch dependence it measures."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "matching" / "int8_screens.py"


def test_the_table_reports_speed_against_torch_and_batch_dependence():
    render = runpy.run_path(str(SCRIPT), run_name="not_main")["render"]
    row = {
        "seconds": 5.0,
        "cosine_fp32": {"mean": 0.99, "p01": 0.98, "min": 0.97},
        "batch_dependence": 0.0,
        "alone_vs_batch_cosine": {"mean": 1.0, "min": 1.0},
    }
    report = {"rows": {"torch fp32, batches": {"seconds": 10.0}, "dynamic int8, one string per run": row},
              "strings": 4000, "calibration": "c", "command": "x", "created": "2026-11-29T00:00:00"}  # fmt: skip
    text = render(report)
    assert (
        "| dynamic int8, one string per run | 5.00 | 2.00x | 0.9900 / 0.9800 / 0.9700 | 0.0e+00 | 1.0000 / 1.0000 |"
        in text
    )
    assert "| torch fp32, batches | 10.00 | 1.00x |" in text


def test_batches_follow_length_order_and_one_string_per_run_sees_one_string():
    encode = runpy.run_path(str(SCRIPT), run_name="not_main")["encode"]
    seen = []

    def run(rows):
        seen.append(["".join(ids) for ids in rows["input_ids"]])
        return np.array([[len(rows["input_ids"])] + [0.0] * 383 for _ in rows["input_ids"]], dtype=np.float32)

    def tokenizer(texts, padding=False):
        return {"input_ids": [list(t) for t in texts]}

    texts = ["a", "abc", "ab"]
    vectors, _ = encode(run, tokenizer, texts, per_string=True)
    assert seen == [["a"], ["abc"], ["ab"]] and vectors[:, 0].tolist() == [1, 1, 1]
    seen.clear()
    vectors, _ = encode(run, tokenizer, texts, per_string=False)
    assert seen == [["abc", "ab", "a"]] and vectors[:, 0].tolist() == [3, 3, 3]
