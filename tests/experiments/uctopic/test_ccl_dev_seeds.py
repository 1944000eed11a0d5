"""experiments/uctopic/ccl_dev_seeds.py: NMI change per (setting, step) over seed models and dev splits, the every-seed
verdict, diagnosis rows kept apart, the README block and the plot."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "uctopic" / "ccl_dev_seeds.py"


def run(model: str, data: str, nmis: list[float], top_fraction: float = 0.1, **extra) -> dict:
    checks = [{"step": 25 * i, "score": 0.1, "gold_nmi": v} for i, v in enumerate(nmis)]
    options = {"instances": "confident", "top_fraction": top_fraction, **extra.pop("options", {})}
    return {"name": f"{model}-{data}", "model": f"outputs/{model}", "data": data, "options": options,
            "checks": checks, **extra}  # fmt: skip


def write(path: Path, runs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return path


def test_changes_mean_worst_and_verdict(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    runs = [
        run("m", "conll2003-dev", [0.40, 0.41, 0.38]),
        run("m-seed7", "conll2003-dev", [0.30, 0.32, 0.33]),
        run("m", "bc5cdr-dev", [0.50, 0.52, 0.55]),
        run("m-seed7", "bc5cdr-dev", [0.60, 0.61, 0.62]),
        run("m-seed7", "conll2003-dev", [0.30, 0.31], top_fraction=0.2),
    ]
    rows = {(r["setting"], r["step"]): r for r in script["summary"](runs)}
    first = rows[("confident, t=0.1, the paper's masking", 25)]
    assert first["cells"] == {"m bc5cdr-dev": 2.0, "m conll2003-dev": 1.0, "m-seed7 bc5cdr-dev": 1.0,
                              "m-seed7 conll2003-dev": 2.0}  # fmt: skip
    assert first["mean"] == 1.5 and first["worst"] == 1.0 and first["improves_everywhere"] is True
    second = rows[
        ("confident, t=0.1, the paper's masking", 50)
    ]  # m on CoNLL falls 2 points: not an improvement everywhere
    assert second["worst"] == -2.0 and second["improves_everywhere"] is False
    lone = rows[("confident, t=0.2, the paper's masking", 25)]  # one run of four: never called an improvement
    assert lone["complete"] is False and lone["improves_everywhere"] is False
    table = script["render"](runs)
    assert "| confident, t=0.1, the paper's masking | 25 | +2.0 | +1.0 | +1.0 | +2.0 | +1.5 | +1.0 | yes |" in table
    assert "(incomplete)" in table and "seed 7" in table


def test_gold_label_runs_are_a_separate_setting_and_files_are_written(tmp_path: Path):
    main = runpy.run_path(str(SCRIPT))["main"]
    runs = [run("m", "conll2003-dev", [0.4, 0.45]), run("m", "conll2003-dev", [0.4, 0.5], oracle_labels=True)]
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- ccl:start -->\nold\n<!-- ccl:end -->\ny\n")
    plot, summary = tmp_path / "p.png", tmp_path / "s.json"
    main([str(write(tmp_path / "r.jsonl", runs)), "--plot", str(plot), "--summary", str(summary),
          "--readme", str(readme), "--block", "ccl"])  # fmt: skip
    text = readme.read_text()
    assert "\nold\n" not in text and "[gold labels: diagnosis] | 25 | +10.0" in text
    assert plot.stat().st_size > 1000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert len(json.loads(summary.read_text())) == 2


def test_runs_without_a_trace_are_refused(tmp_path: Path):
    main = runpy.run_path(str(SCRIPT))["main"]
    broken = run("m", "conll2003-dev", [0.4])
    for check in broken["checks"]:
        check.pop("gold_nmi")
    with pytest.raises(SystemExit):
        main([str(write(tmp_path / "r.jsonl", [broken]))])


def test_rule_16_choice_and_learning_rate_settings():
    script = runpy.run_path(str(SCRIPT))
    slow = {"options": {"learning_rate": 5e-6}}
    runs = [
        run("m", "conll2003-dev", [0.40, 0.41, 0.43]),
        run("m-seed7", "conll2003-dev", [0.30, 0.32, 0.29]),
        run("m", "conll2003-dev", [0.40, 0.42, 0.425], **slow),
        run("m-seed7", "conll2003-dev", [0.30, 0.31, 0.315], **slow),
    ]
    settings = {r["setting"] for r in script["summary"](runs)}
    assert settings == {"confident, t=0.1, the paper's masking", "confident, t=0.1, the paper's masking, lr 5e-06"}
    reseeded = run("m", "conll2003-dev", [0.40, 0.41], options={"seed": 2})
    assert script["setting_of"](reseeded) == "confident, t=0.1, the paper's masking, CCL seed 2"
    souped = run("m", "conll2003-dev", [0.40, 0.41], options={"seed": 2, "soup_seeds": [0, 1, 2]})
    assert script["setting_of"](souped) == "confident, t=0.1, the paper's masking, CCL soup of seeds 0, 1, 2"
    row, everywhere = script["choose"](script["summary"](runs))
    # lr 1e-5 at 50 steps has the best mean (+1.0) but lowers seed 7; lr 5e-6 at 50 steps (+2.0) raises both
    assert everywhere and row["step"] == 50 and row["mean"] == 2.0 and "lr 5e-06" in row["setting"]
    flat = [run("m", "conll2003-dev", [0.40, 0.42, 0.42]), run("m-seed7", "conll2003-dev", [0.30, 0.32, 0.32])]
    assert script["choose"](script["summary"](flat))[0]["step"] == 25  # a tie goes to fewer steps
    assert "raises dev NMI for every model" in script["render_choice"](runs)
    falling = [run("m", "conll2003-dev", [0.40, 0.38, 0.395]), run("m-seed7", "conll2003-dev", [0.30, 0.31, 0.29])]
    row, everywhere = script["choose"](script["summary"](falling))
    assert not everywhere and row["step"] == 50 and row["worst"] == -1.0
    assert "does not improve" in script["render_choice"](falling)


def test_rule_19_needs_every_ccl_seed_to_raise_every_run(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    slow = {"learning_rate": 5e-6}

    def seeded(model, data, nmis, seed):
        return run(model, data, nmis, options={**slow, "seed": seed})

    runs = [
        # seed 0 (the default, unnamed) raises both models at 25 and 50 steps, and has a 75-step check
        seeded("m", "conll2003-dev", [0.40, 0.41, 0.42, 0.43], 0),
        seeded("m-seed7", "conll2003-dev", [0.30, 0.31, 0.33, 0.34], 0),
        # seed 1 raises both at 50 steps, lowers m-seed7 at 25
        seeded("m", "conll2003-dev", [0.40, 0.42, 0.43], 1),
        seeded("m-seed7", "conll2003-dev", [0.30, 0.29, 0.31], 1),
        run("m", "conll2003-dev", [0.40, 0.41], oracle_labels=True, options=slow),  # a diagnosis: never pooled
    ]
    rows = {row["step"]: row for row in script["seed_robust_rows"](runs)}
    assert rows[25]["seeds"] == [0, 1] and not rows[25]["raises_for_every_seed"]
    assert rows[50]["raises_for_every_seed"] and rows[50]["cells"] == 4 and rows[50]["mean"] == 2.25
    assert rows[75]["seeds_at_step"] == [0] and not rows[75]["raises_for_every_seed"]  # seed 1 has no 75: fails
    text = script["render_seed_robust"](runs)
    assert "Chosen (rule 19): confident, t=0.1, the paper's masking, lr 5e-06, 50 steps" in text
    assert "0 (not run: 1)" in text
    # a seed whose run misses a model is not complete, even if what it has is a raise
    partial = runs[:2] + [seeded("m", "conll2003-dev", [0.40, 0.42, 0.43], 1)]
    assert not any(r["raises_for_every_seed"] for r in script["seed_robust_rows"](partial))
    assert "Chosen (rule 19): none" in script["render_seed_robust"](partial)
    readme = tmp_path / "README.md"
    readme.write_text("<!-- b:start -->\n<!-- b:end -->\n")
    script["main"]([str(write(tmp_path / "r.jsonl", runs)), "--choose-across-seeds", "--readme", str(readme),
                    "--block", "b"])  # fmt: skip
    assert "raises for every CCL seed" in readme.read_text()
