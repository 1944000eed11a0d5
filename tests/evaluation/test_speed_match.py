"""benchmarks/speed_match.py: its table names the workload it timed and every ratio it was asked for."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "speed_match.py"


def report(workload: str) -> dict:
    return {"rows_per_second": {"default (hybrid)": 40.0, "MiniLM alone": 50.0, "hybrid:slow": 4.0},
            "seconds": {"default (hybrid)": [1.0], "MiniLM alone": [0.8], "hybrid:slow": [10.0]},
            "ratios": {"default (hybrid) / MiniLM alone": 0.8, "hybrid:slow / default (hybrid)": 0.1},
            "machine": "x86_64, cpu, 1 thread", "workload": workload, "command": "c",
            "created": "2026-11-28T00:00:00"}  # fmt: skip


def test_all_ten_tables_keep_the_committed_header_and_a_subset_says_how_many():
    render = runpy.run_path(str(SCRIPT), run_name="not_main")["render"]
    assert "rows/s (AutoFJ dev-10, fit + search" in render(report("AutoFJ dev (10 tables): 5 left and 3 right rows"))
    text = render(report("AutoFJ dev (1 tables): 5 left and 3 right rows, fit + search"))
    assert "rows/s (AutoFJ dev (1 tables), fit + search" in text
    assert "hybrid:slow / default (hybrid): **0.10**" in text and "| hybrid:slow | 4.0 |" in text
