"""experiments/common/seeds_report.py, the seed-aware table: means, spreads, margins and the beyond-the-spread verdict
from hand-made results."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[3] / "experiments" / "common" / "seeds_report.py"))
format_seed_table, main, seed_summary = SCRIPT["format_seed_table"], SCRIPT["main"], SCRIPT["seed_summary"]
format_selection_table, format_effect_table = SCRIPT["format_selection_table"], SCRIPT["format_effect_table"]
baseline_dev_average = SCRIPT["baseline_dev_average"]


def doc(model: str, **values: float) -> dict:
    metrics = {"turney": "accuracy", "bird": "pearson"}
    results = [
        {"task": t, "metric": metrics[t], "value": v, "n": 10, "seconds": 1.0, "notes": ""} for t, v in values.items()
    ]
    return {"model": model, "model_revision": "test", "created": "2026-11-23", "results": results}


def test_margin_must_exceed_the_spread():
    baseline = doc("baseline:minilm-l6", turney=0.50, bird=0.60)
    seeds = [doc("m", turney=0.55, bird=0.61), doc("m", turney=0.57, bird=0.64), doc("m", turney=0.56, bird=0.59)]
    rows = {r["label"]: r for r in seed_summary(baseline, seeds)}
    assert rows["Turney"]["mean"] == pytest.approx(0.56) and rows["Turney"]["spread"] == pytest.approx(0.02)
    assert rows["Turney"]["margin"] == pytest.approx(0.06) and rows["Turney"]["beyond_spread"]
    # BiRD: mean 0.6133, margin 0.0133 < spread 0.05
    assert not rows["BiRD"]["beyond_spread"]
    table = format_seed_table("m", baseline, seeds)
    assert "| **m mean (3 seeds)** | **56.0** | **61.3** |" in table
    assert "| beats the baseline by more than the spread | yes | **no** |" in table
    soups = format_seed_table("m", baseline, seeds, unit="soups")  # a soup recipe: one soup of seeds per row
    assert "| **m mean (3 soups)** |" in soups and "max - min over the soups" in soups
    with pytest.raises(ValueError, match="at least one"):
        seed_summary(baseline, [])


def test_cli_writes_the_readme_block(tmp_path, capsys):
    import json

    files = []
    for name, values in [("baseline", {"turney": 0.5}), ("m-seed1", {"turney": 0.6}), ("m-seed2", {"turney": 0.62})]:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc(name, **values)))
        files.append(str(path))
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- m-seeds:start -->\nold\n<!-- m-seeds:end -->\n")
    assert main(["--baseline", files[0], "--model", "m", *files[1:], "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert "old" not in text and "| m-seed1 | 60.0 |" in text and "| m-seed2 | 62.0 |" in text
    assert main(["--baseline", files[0], "--model", "m", *files[1:], "--labels", "seed 1", "seed 2"]) == 0
    assert "| seed 2 | 62.0 |" in capsys.readouterr().out


def test_selection_table_shows_each_runs_dev_choice():

    selection = {
        "model": "m-seed7",
        "checkpoint": "step-000250 (step 250)",
        "selected_on": "the dev suite",
        "search": "coordinate search",
        "chosen": {"weight_average": 0.25, "char_weight": 0.5},
        "rows": [
            {"weight_average": 0.0, "char_weight": 0.25, "dev_avg": 0.50},
            {"weight_average": 0.25, "char_weight": 0.5, "dev_avg": 0.55},
        ],
    }
    table = format_selection_table([selection], {"model": "baseline:minilm-l6", "dev_avg": 0.508})
    assert "| baseline:minilm-l6 | – | – | – | 50.8 |" in table
    assert "| m-seed7 | step-000250 (step 250) | 0.25 | 0.5 | 55.0 |" in table


def test_the_baseline_dev_average_uses_the_tasks_the_runs_were_chosen_on():
    baseline = {"model": "b", "dev_avg": 0.5, "tasks": {"dev_a": {"score": 0.2}, "dev_b": {"score": 0.4},
                                                        "dev_c": {"score": 0.9}}}  # fmt: skip
    assert baseline_dev_average(baseline, ["dev_a", "dev_b"]) == pytest.approx(0.3)
    assert baseline_dev_average(baseline, None) == 0.5
    assert baseline_dev_average(baseline, ["dev_a", "dev_missing"]) is None  # not comparable: not shown
    selection = {
        "model": "m", "checkpoint": "step-1", "selected_on": "dev", "search": "grid", "dev_tasks": ["dev_a", "dev_b"],
        "chosen": {"weight_average": 0.0}, "rows": [{"weight_average": 0.0, "dev_avg": 0.35}],
    }  # fmt: skip
    assert "| b | – | – | 30.0 |" in format_selection_table([selection], baseline)


def test_effect_table_says_whether_a_step_helps_in_every_seed():

    def ccl_doc(label: str, before: float, after: float) -> dict:
        results = [
            {"task": "conll2003_context", "metric": "nmi", "value": before, "n": 5, "seconds": 1.0, "notes": ""},
            {"task": "conll2003_context_ccl", "metric": "nmi", "value": after, "n": 5, "seconds": 1.0, "notes": ""},
        ]
        return {"model": "u", "seed": label, "results": results}

    pair = [("conll2003_context_ccl", "conll2003_context")]
    helps = format_effect_table([ccl_doc("s1", 0.30, 0.33), ccl_doc("s2", 0.40, 0.41)], pair)
    assert "| s1 | 30.0 -> 33.0 (+3.0) |" in helps and "| **mean change** | **+2.0** |" in helps
    assert "| improves in every seed | yes |" in helps
    mixed = format_effect_table([ccl_doc("s1", 0.30, 0.33), ccl_doc("s2", 0.40, 0.39)], pair)
    assert "| improves in every seed | **no** |" in mixed
    with pytest.raises(SystemExit):
        main(["--baseline", "b.json", "--model", "m", "x.json", "--effect", "no-separator"])


def test_selection_table_shows_the_worst_margin_of_worst_margin_runs():

    selection = {
        "model": "m",
        "checkpoint": "step-000400 (step 400)",
        "selected_on": "dev suite",
        "search": "coordinate search",
        "objective": "worst_margin",
        "chosen": {"weight_average": 0.5},
        "rows": [
            {"weight_average": 0.0, "dev_avg": 0.60, "worst_margin": -0.02},
            {"weight_average": 0.5, "dev_avg": 0.58, "worst_margin": 0.01},
        ],
    }
    table = format_selection_table([selection])
    assert "| run | checkpoint | weight_average | dev_avg (chosen) | worst margin (chosen) |" in table
    assert "| m | step-000400 (step 400) | 0.5 | 58.0 | +1.0 |" in table
