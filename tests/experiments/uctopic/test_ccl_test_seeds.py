"""experiments/uctopic/ccl_test_seeds.py: CCL's test effect pooled over CCL seeds, its interval, verdict and README block."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "uctopic" / "ccl_test_seeds.py"
OPTIONS = {"instances": "confident", "steps": 25, "top_fraction": 0.1}


def results_file(path: Path, model: str, seed: int, changes: dict[str, tuple[float, float]], **options) -> str:
    """A ``phrasezoo evaluate`` results file with one ``*_context_ccl`` task per dataset (NMI before, after)."""
    results = []
    for dataset, (before, after) in changes.items():
        details = {"options": {**OPTIONS, **options, "seed": seed}, "before_ccl": {"nmi": before, "acc": 0.5}}
        results.append({"task": f"{dataset}_context_ccl", "metric": "nmi", "value": after, "details": details})
        results.append({"task": f"{dataset}_context_ccl", "metric": "acc", "value": 0.5, "details": details})
        results.append({"task": f"{dataset}_context", "metric": "nmi", "value": before, "details": {}})
    path.write_text(json.dumps({"model": f"outputs/{model}", "results": results}))
    return str(path)


def test_pooled_statistics_interval_and_verdict(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    files = [
        results_file(tmp_path / "a0.json", "m", 0, {"conll2003": (0.40, 0.42), "bc5cdr": (0.60, 0.59)}),
        results_file(tmp_path / "a1.json", "m", 1, {"conll2003": (0.40, 0.43), "bc5cdr": (0.60, 0.62)}),
        results_file(tmp_path / "b0.json", "m2", 0, {"conll2003": (0.30, 0.32), "bc5cdr": (0.50, 0.48)}),
        results_file(tmp_path / "b1.json", "m2", 1, {"conll2003": (0.30, 0.33), "bc5cdr": (0.50, 0.49)}),
    ]
    runs = script["runs_from_results"](files)
    assert len(runs) == 8 and {r["seed"] for r in runs} == {0, 1}
    rows = {r["dataset"]: r for r in script["summarise"](runs)}
    conll, bc5 = rows["conll2003"], rows["bc5cdr"]
    assert conll["changes"] == pytest.approx([2.0, 3.0, 2.0, 3.0])
    assert conll["mean"] == pytest.approx(2.5) and conll["above_zero"] == 4
    # sd of (2, 3, 2, 3) = 0.577; t(0.975, 3) = 3.182 -> half width 0.918
    assert conll["low"] == pytest.approx(2.5 - 3.1824 * 0.57735 / 2, abs=1e-3)
    assert conll["improves"] is True
    assert bc5["model_means"] == pytest.approx({"m": 0.5, "m2": -1.5})
    assert bc5["improves"] is False and bc5["min"] == pytest.approx(-2.0)


def test_a_model_whose_mean_falls_blocks_the_verdict_even_with_a_positive_interval(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    files = [results_file(tmp_path / f"m{s}.json", "m", s, {"conll2003": (0.4, 0.45)}) for s in range(5)]
    files += [
        results_file(tmp_path / f"n{s}.json", "n", s, {"conll2003": (0.4, 0.399 if s == 0 else 0.4)}) for s in range(2)
    ]
    (row,) = script["summarise"](script["runs_from_results"](files))
    assert row["model_means"]["n"] < 0
    assert row["improves"] is False


def test_mixed_settings_and_conflicting_reruns_are_refused(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    mixed = [
        results_file(tmp_path / "a.json", "m", 0, {"conll2003": (0.4, 0.41)}),
        results_file(tmp_path / "b.json", "m", 1, {"conll2003": (0.4, 0.42)}, steps=50),
    ]
    with pytest.raises(ValueError, match="different CCL options"):
        script["summarise"](script["runs_from_results"](mixed))
    clash = [
        results_file(tmp_path / "c.json", "m", 0, {"conll2003": (0.4, 0.41)}),
        results_file(tmp_path / "d.json", "m", 0, {"conll2003": (0.4, 0.43)}),
    ]
    with pytest.raises(ValueError, match="second, different run"):
        script["runs_from_results"](clash)
    same = [clash[0], results_file(tmp_path / "e.json", "m", 0, {"conll2003": (0.4, 0.41)})]
    assert len(script["runs_from_results"](same)) == 1


def test_readme_block_and_jsonl_round_trip(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    files = [
        results_file(tmp_path / f"m{s}.json", "m", s, {"conll2003": (0.4, 0.41 + s / 100), "bc5cdr": (0.6, 0.6)})
        for s in range(3)
    ]
    readme = tmp_path / "README.md"
    readme.write_text("before\n<!-- ccl-test:start -->\nold\n<!-- ccl-test:end -->\nafter\n")
    jsonl = tmp_path / "runs.jsonl"
    script["main"]([*files, "--jsonl", str(jsonl), "--readme", str(readme), "--block", "ccl-test"])
    text = readme.read_text()
    assert "| conll2003 | 3 | +2.00 |" in text and "old" not in text and text.endswith("after\n")
    assert "| conll2003 | m | 40.0 | +1.0 | +2.0 | +3.0 |" in text
    assert len(jsonl.read_text().splitlines()) == 6
    again = tmp_path / "README2.md"
    again.write_text("<!-- ccl-test:start -->\n<!-- ccl-test:end -->\n")
    script["main"](["--from-jsonl", str(jsonl), "--readme", str(again), "--block", "ccl-test"])
    assert (
        again.read_text().split("<!-- ccl-test:start -->")[1]
        == text.split("<!-- ccl-test:start -->")[1][: -len("after\n")]
    )


def test_plot_writes_a_png(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    files = [
        results_file(tmp_path / f"{m}{s}.json", m, s, {"conll2003": (0.4, 0.4 + s / 100), "bc5cdr": (0.6, 0.61)})
        for m in ("m", "n")
        for s in range(3)
    ]
    png = tmp_path / "ccl.png"
    script["main"]([*files, "--plot", str(png)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
