"""experiments/pearl/names_source_soups.py: rule 20's step 2 counted from the files, soup by soup."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "pearl" / "names_source_soups.py"


def write_side(root: Path, path: str, names_mean: float, dev_avg: float, noisy: float = 0.0) -> None:
    """One side's files; ``noisy`` moves the noisy domain by that much and the three others back, mean unchanged."""
    folder, run = root / Path(path).parent, Path(path).name
    folder.mkdir(parents=True, exist_ok=True)
    domains = ("names_acronyms_dev", "names_aliases_dev", "names_short_names_dev", "names_noisy_dev")
    results = [{"task": d, "metric": "accuracy", "value": (names_mean + (noisy if d.endswith("noisy_dev") else
                -noisy / 3)) / 100} for d in domains]  # fmt: skip
    results.append({"task": "names_aliases_dev", "metric": "mrr10", "value": 0.99})  # not a top-1: not counted
    (folder / f"{run}-names-dev.json").write_text(json.dumps({"results": results}))
    rows = [{"weight_average": 0.0, "dev_avg": dev_avg / 100}, {"weight_average": 0.5, "dev_avg": 0.99}]
    (folder / f"{run}-dev-selection.json").write_text(json.dumps({"chosen": {"weight_average": 0.0}, "rows": rows}))


def count(script: dict, folder: Path, rule: str) -> dict:
    """Run the script for ``rule`` on ``folder`` and return its results file."""
    output = folder / f"rule{rule}.json"
    script["main"](["--rule", rule, "--folder", str(folder), "--output", str(output)])
    return json.loads(output.read_text())


def test_the_verdict_waits_for_three_soups_then_applies_the_rule(tmp_path):
    script = runpy.run_path(str(SCRIPT))
    for run, names, dev in (("pearl-ref", 57.0, 58.0), ("pearl-names", 59.0, 57.8),
                            ("pearl-ref-soup2", 57.0, 58.0), ("pearl-names-soup2", 58.0, 57.0)):  # fmt: skip
        write_side(tmp_path, f"names-source/{run}", names, dev)
    partial = count(script, tmp_path, "20")
    assert partial["verdict"]["soups"] == 2 and not partial["verdict"]["complete"]
    assert partial["soups"][0]["names"]["dev_avg"] == 57.8  # the chosen row, not the best one
    assert "no verdict yet" in script["table"](partial) and "not trained yet" in script["table"](partial)
    write_side(tmp_path, "names-source/pearl-ref-soup5", 57.0, 58.0)
    write_side(tmp_path, "names-source/pearl-names-soup5", 56.0, 58.0)  # below: 2 of 3 above is still enough
    done = count(script, tmp_path, "20")["verdict"]
    assert done["complete"] and done["soups_above"] == 2 and done["adopted"]  # +0.67 mean, dev -0.4
    write_side(tmp_path, "names-source/pearl-names-soup5", 56.0, 57.4)  # the dev average now falls by 0.6 on the mean
    assert count(script, tmp_path, "20")["verdict"]["adopted"] is False


def test_rule_21_step_1_needs_half_a_point_on_names_dev(tmp_path):
    script = runpy.run_path(str(SCRIPT))
    write_side(tmp_path, "names-source/pearl-names", 59.0, 57.8)
    assert "no verdict yet" in script["table"](count(script, tmp_path, "21"))
    write_side(tmp_path, "teacher-guard/pearl-guard", 59.4, 57.8)  # +0.4: not enough
    result = count(script, tmp_path, "21")
    assert result["verdict"]["adopted"] is False and "**fails**" in script["table"](result)
    write_side(tmp_path, "teacher-guard/pearl-guard", 59.5, 57.3)  # +0.5, dev -0.5: passes
    result = count(script, tmp_path, "21")
    assert result["verdict"]["adopted"] and "+ teacher guard" in script["table"](result)


def test_rule_23_step_1_needs_a_point_on_noisy_names_without_losing_the_mean(tmp_path):
    script = runpy.run_path(str(SCRIPT))
    write_side(tmp_path, "names-source/pearl-names", 59.0, 57.8)
    variant = "char-augmentation/pearl-char10n"
    write_side(tmp_path, variant, 59.0, 57.8, noisy=0.9)  # noisy +0.9: not enough
    result = count(script, tmp_path, "23")
    assert abs(result["verdict"]["noisy_change"] - 0.9) < 1e-9 and result["verdict"]["adopted"] is False
    write_side(tmp_path, variant, 58.9, 57.8, noisy=1.5)  # noisy +1.4 but the mean falls
    assert count(script, tmp_path, "23")["verdict"]["adopted"] is False
    write_side(tmp_path, variant, 59.0, 57.4, noisy=1.0)  # noisy +1.0, mean level, dev -0.4: passes
    result = count(script, tmp_path, "23")
    assert result["verdict"]["adopted"] and "noisy +1.00" in script["table"](result)


def test_rule_24_is_judged_on_rule_21s_terms(tmp_path):
    script = runpy.run_path(str(SCRIPT))
    write_side(tmp_path, "names-source/pearl-names", 59.0, 57.8)
    write_side(tmp_path, "teacher-nomic/pearl-nomic", 59.6, 57.0)  # +0.6 on names, but dev -0.8
    result = count(script, tmp_path, "24")
    assert result["verdict"]["adopted"] is False and "nomic teacher" in script["table"](result)
