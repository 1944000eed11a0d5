"""scripts/compare_teacher_rows.py: two teacher caches agree only when every shared row is bitwise equal."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np

from phrasezoo.objectives.teacher_rows import save_rows

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_teacher_rows.py"


def run(monkeypatch, capsys, *folders: Path) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *map(str, folders)])
    try:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    except SystemExit as stop:
        return stop.code or 0, capsys.readouterr().out
    return 0, capsys.readouterr().out


def test_shared_rows_are_compared_bit_for_bit(tmp_path, monkeypatch, capsys):
    rows = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    save_rows(tmp_path / "eager" / "t-all.npy", "t|bf16", ["a", "b", "c"], rows)
    save_rows(tmp_path / "lazy" / "t-rows-1.npy", "t|bf16", ["c", "a"], rows[[2, 0]])
    save_rows(tmp_path / "lazy" / "t-rows-2.npy", "t|bf16", ["d"], rows[:1])
    code, out = run(monkeypatch, capsys, tmp_path / "eager", tmp_path / "lazy")
    assert code == 0 and "3 rows in the first, 3 in the second, 2 shared, 2 identical" in out
    nudged = rows[[2, 0]].copy()
    nudged[1, 0] = np.nextafter(nudged[1, 0], np.float32(9))  # one ulp
    save_rows(tmp_path / "other" / "t-rows-1.npy", "t|bf16", ["c", "a"], nudged)
    code, out = run(monkeypatch, capsys, tmp_path / "eager", tmp_path / "other")
    assert code == 1 and "1 identical (largest difference" in out
