"""experiments/matching/names_encoders.py: rule 22's decision and its table, from made-up rows."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "matching" / "names_encoders.py"
DOMAINS = ("autofj", "acronyms", "aliases", "short-names", "noisy")


def row(*accuracies: float) -> dict:
    per = {d: {"accuracy": a / 100} for d, a in zip(DOMAINS, accuracies, strict=True)}
    per["mean"] = {"accuracy": sum(accuracies) / len(accuracies) / 100}
    return {"matcher": per, "alone": per}


def test_a_candidate_needs_the_mean_margin_and_no_domain_loss_over_half_a_point():
    script = runpy.run_path(str(SCRIPT), run_name="not_main")
    rows = {
        "baseline:minilm-l6": row(78.0, 75.0, 60.0, 99.0, 98.0),
        "level": row(78.0, 75.0, 60.3, 99.0, 98.0),  # mean +0.06: a tie stays with MiniLM
        "one domain falls": row(77.0, 78.0, 61.0, 99.0, 98.0),  # mean +0.6, AutoFJ -1.0
        "better": row(78.0, 76.0, 61.0, 98.6, 98.0),  # mean +0.32, worst -0.4
    }
    decision = script["decide"](rows)
    assert {n: c["passes"] for n, c in decision["checks"].items()} == {
        "level": False, "one domain falls": False, "better": True}  # fmt: skip
    assert decision["checks"]["one domain falls"]["worst_domain"] == "autofj"
    assert decision["chosen"] == "better"
    del rows["better"]
    assert script["decide"](rows)["chosen"] == "baseline:minilm-l6"


def test_the_table_has_both_rows_per_encoder_and_the_verdict():
    script = runpy.run_path(str(SCRIPT), run_name="not_main")
    rows = {
        "baseline:minilm-l6": row(78.0, 75.0, 60.0, 99.0, 98.0),
        "outputs/model-b": row(77.0, 75.0, 60.0, 99.0, 98.0),
    }
    report = {"rows": rows, "feature_set": "+hub", "command": "c", "created": "2026-11-28T00:00:00"}
    report["decision"] = script["decide"](rows)
    text = script["render"](report)
    assert text.count("| outputs/model-b |") == 2
    assert "no candidate passes, **baseline:minilm-l6** stays the encoder" in text
    assert "worst domain AutoFJ -1.00 (fails)" in text


def test_the_test_read_sits_beside_the_torch_defaults_committed_row():
    script = runpy.run_path(str(SCRIPT), run_name="not_main")
    mine = {d: {"accuracy": 0.9, "mrr10": 0.95} for d in (*DOMAINS, "mean")}
    report = {"rows": {"hybrid:model-b": mine, "emb alone": mine}, "file": "results/matching/names-test-x.json",
              "command": "c", "created": "2026-11-28T00:00:00"}  # fmt: skip
    text = script["render_test_pair"](report)
    assert "| hybrid:baseline:minilm-l6 (torch, the default until round 8) |" in text  # every such read was beside it
    assert "| hybrid:model-b | 90.0 (0.950)" in text
    assert "emb alone" not in text and text.count("| difference, top-1 points |") == 1


def test_a_later_rule_names_itself_and_its_own_results_file():
    script = runpy.run_path(str(SCRIPT), run_name="not_main")
    rows = {
        "baseline:minilm-l6": row(78.0, 75.0, 60.0, 99.0, 98.0),
        "baseline:other": row(79.0, 76.0, 61.0, 99.0, 98.0),
    }
    report = {"rows": rows, "feature_set": "+hub", "command": "c", "created": "2026-11-28T00:00:00",
              "rule": "docs/experiments/matching.md rule 25", "file": "results/x/names-encoders-other.json"}  # fmt: skip
    report["decision"] = script["decide"](rows)
    text = script["render"](report)
    assert "Rule 25: **baseline:other** passes" in text and "From `results/x/names-encoders-other.json`" in text


def test_a_test_read_of_some_domains_says_so_and_compares_means_over_the_common_ones():
    script = runpy.run_path(str(SCRIPT), run_name="not_main")
    mine = {d: {"accuracy": 0.9, "mrr10": 0.95} for d in ("acronyms", "aliases", "short-names", "noisy", "mean")}
    report = {"rows": {"hybrid:slow": mine}, "file": "results/matching/names-test-slow.json", "command": "c",
              "created": "2026-11-28T00:00:00"}  # fmt: skip
    text = script["render_test_pair"](report)
    assert "| hybrid:slow | not run | 90.0 (0.950)" in text
    assert "The mean is over the domains both rows ran (acronyms, aliases, short names, noisy)." in text
    slow = next(line for line in text.splitlines() if line.startswith("| hybrid:slow"))
    assert slow.endswith("| 90.0 |")
