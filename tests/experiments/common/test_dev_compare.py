"""experiments/common/dev_compare.py: one line per run (its chosen grid row), the average without a named task, and a
markdown table of variant means."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "common" / "dev_compare.py"


def selection(model: str, chosen: float, rows: list[tuple[float, float, float]]) -> dict:
    return {
        "model": model,
        "checkpoint": "step-000010 (step 10)",
        "dev_tasks": ["dev_a", "dev_b"],
        "chosen": {"weight_average": chosen},
        "rows": [{"weight_average": w, "dev_avg": (a + b) / 2, "dev_a": a, "dev_b": b} for w, a, b in rows],
    }


def test_chosen_rows_partial_average_and_variant_means(tmp_path: Path, capsys: pytest.CaptureFixture):
    main = runpy.run_path(str(SCRIPT))["main"]
    files = []
    for name, chosen, rows in [
        ("one", 0.25, [(0.0, 0.2, 0.4), (0.25, 0.5, 0.3)]),
        ("one-seed7", 0.0, [(0.0, 0.7, 0.1)]),
        ("two", 0.0, [(0.0, 0.9, 0.1)]),
    ]:
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(selection(name, chosen, rows)))
    main([*map(str, files), "--without", "dev_a", "--labels", "x=1", "x=1", "x=2"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["variant"], line["run"]) for line in lines] == [("x=1", "one"), ("x=1", "one-seed7"), ("x=2", "two")]
    assert lines[0]["weight_average"] == 0.25 and lines[0]["dev_avg"] == pytest.approx(0.4)
    assert lines[0]["dev_avg_without_dev_a"] == pytest.approx(0.3)

    jsonl = tmp_path / "compare.jsonl"
    jsonl.write_text("\n".join(json.dumps(line) for line in lines))
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- cmp:start -->\nold\n<!-- cmp:end -->\nend\n")
    main(["--render", str(jsonl), "--readme", str(readme), "--block", "cmp"])
    text = readme.read_text()
    assert "old" not in text and text.startswith("intro") and text.endswith("end\n")
    row = next(line for line in text.splitlines() if line.startswith("| x=1 |"))
    # means over the two runs of x=1: a (0.5 + 0.7) / 2, b (0.3 + 0.1) / 2, avg 0.4, without a 0.2
    assert row.split(" | ")[2:] == ["60.0", "20.0", "40.0", "20.0 |"]


def test_worst_margin_runs_get_a_signed_margin_column(tmp_path: Path, capsys: pytest.CaptureFixture):
    main = runpy.run_path(str(SCRIPT))["main"]
    files = []
    for name, margin in [("m", 0.004), ("m-seed7", -0.002)]:
        doc = selection(name, 0.0, [(0.0, 0.6, 0.4)])
        doc["rows"][0]["worst_margin"] = margin
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(doc))
    main([*map(str, files), "--labels", "v", "v"])
    jsonl = tmp_path / "compare.jsonl"
    jsonl.write_text(capsys.readouterr().out)
    main(["--render", str(jsonl)])
    table = capsys.readouterr().out.splitlines()
    assert table[0].endswith("| avg | worst margin |")
    # the mean of +0.4 and -0.2 points, signed
    assert table[2].split(" | ")[-1] == "+0.1 |"
    assert any(line.startswith("- worst margin:") for line in table)


def test_a_chosen_value_missing_from_the_grid_is_an_error(tmp_path: Path):
    main = runpy.run_path(str(SCRIPT))["main"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(selection("bad", 0.5, [(0.0, 0.2, 0.4)])))
    with pytest.raises(ValueError, match="no grid row matches"):
        main([str(path)])


def test_runs_name_renamed_record_files(tmp_path: Path, capsys: pytest.CaptureFixture):
    main = runpy.run_path(str(SCRIPT))["main"]
    path = tmp_path / "some-mini-wnnf-dev-selection.json"  # renamed after its run: its model field says some-mini
    path.write_text(json.dumps(selection("some-mini", 0.0, [(0.0, 0.6, 0.4)])))
    main([str(path), "--runs", "some-mini-wnnf"])
    assert json.loads(capsys.readouterr().out)["run"] == "some-mini-wnnf"
    with pytest.raises(SystemExit):
        main([str(path), "--runs", "a", "b"])
