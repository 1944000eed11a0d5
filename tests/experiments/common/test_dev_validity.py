"""experiments/common/dev_validity.py: per stand-in pair, the correlation between runs' dev scores and benchmark results."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "common" / "dev_validity.py"
TASKS = ["turney", "bird", "ppdb", "ppdb_filtered", "conll2003", "bc5cdr", "autofj"]


def write_run(folder: Path, name: str, dev_alias: float, autofj: float) -> Path:
    selection = {
        "model": name,
        "chosen": {"weight_average": 0.25},
        "rows": [
            {"weight_average": 0.0, "dev_avg": 0.0, "dev_alias": 0.0},  # not chosen: must not be read
            {"weight_average": 0.25, "dev_avg": dev_alias, "dev_alias": dev_alias},
        ],
    }
    values = {t: 0.5 for t in TASKS} | {"autofj": autofj}
    results = {
        "model": name,
        "model_revision": "x",
        "created": "x",
        "results": [
            {"task": t, "metric": "accuracy", "value": v, "n": 1, "seconds": 0.0, "notes": ""}
            for t, v in values.items()
        ],
    }
    (folder / f"{name}.json").write_text(json.dumps(results))
    path = folder / f"{name}-dev-selection.json"
    path.write_text(json.dumps(selection))
    return path


def test_pairs_correlate_over_runs_with_both_files(tmp_path: Path, capsys: pytest.CaptureFixture):
    script = runpy.run_path(str(SCRIPT))
    files = [
        write_run(tmp_path, "a", 0.70, 0.60),
        write_run(tmp_path, "b", 0.80, 0.70),
        write_run(tmp_path, "c", 0.75, 0.62),
        write_run(tmp_path, "d", 0.60, 0.65),
    ]
    (tmp_path / "d.json").unlink()  # a run without benchmark results is skipped
    points = script["run_points"](files)
    assert [p["run"] for p in points] == ["a", "b", "c"]
    assert points[0]["dev"]["dev_alias"] == 0.70  # the chosen row, not the first
    assert points[0]["test"]["avg7"] == pytest.approx((6 * 0.5 + 0.60) / 7)
    rows = {(r["dev"], r["benchmark"]): r for r in script["validity"](points)}
    alias = rows[("dev_alias", "autofj")]
    assert alias["runs"] == 3 and alias["spearman"] == pytest.approx(1.0) and 0.9 < alias["pearson"] <= 1.0
    assert rows[("dev_compound", "turney")]["runs"] == 0 and rows[("dev_compound", "turney")]["pearson"] is None

    out = tmp_path / "validity.json"
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- v:start -->\n<!-- v:end -->\n")
    script["main"]([*map(str, files), "--output", str(out), "--readme", str(readme), "--block", "v"])
    assert json.loads(out.read_text())["runs"] == ["a", "b", "c"]
    assert "| dev_alias | autofj | 3 | +" in readme.read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        script["main"]([str(files[0])])  # fewer than 3 usable runs
