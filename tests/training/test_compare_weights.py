"""scripts/compare_weights.py: the reproducibility check says "identical" only for bitwise-equal weights."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_weights.py"


def run(monkeypatch, capsys, *files: Path) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *map(str, files)])
    code = 0
    try:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    except SystemExit as stop:
        code = stop.code or 0
    return code, capsys.readouterr().out


def test_identical_and_different_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    weights = {"a": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.ones(4)}
    save_file(weights, tmp_path / "one.safetensors")
    save_file({k: v.clone() for k, v in weights.items()}, tmp_path / "two.safetensors")
    nudged = dict(weights, b=torch.nextafter(torch.ones(4), torch.full((4,), 2.0)))  # one ulp away
    save_file(nudged, tmp_path / "three.safetensors")
    save_file({"a": weights["a"]}, tmp_path / "four.safetensors")

    code, out = run(monkeypatch, capsys, tmp_path / "one.safetensors", tmp_path / "two.safetensors")
    assert code == 0 and "identical" in out and "10 values" in out
    code, out = run(monkeypatch, capsys, tmp_path / "one.safetensors", tmp_path / "three.safetensors")
    assert code == 1 and "DIFFERENT: 1 tensor(s), e.g. b" in out
    code, out = run(monkeypatch, capsys, tmp_path / "one.safetensors", tmp_path / "four.safetensors")
    assert code == 1 and "b" in out  # a tensor missing from one file
