"""The publication rule of GPU-trained recipes: beat the named recipe's dev scores (read from results/)."""

from __future__ import annotations

import json

import pytest

import phrasezoo.evaluation.dev.comparison as comparison
from phrasezoo.core.recipes import recipe_from_dict

TASKS = ["dev_conll_context", "dev_bc5cdr_context"]


def _cfg(rule):
    raw = {"name": "thing-gpu", "method": "m", "repo_id": "o/thing-gpu", "eval": {"beat_on_dev": rule} if rule else {}}
    return recipe_from_dict(raw)


def _selection(scores: dict[str, float], chosen=None) -> dict:
    chosen = chosen or {"weight_average": 0.25}
    other = {"weight_average": 0.0, "dev_avg": 0.0, **{t: 0.0 for t in scores}}
    row = {**chosen, "dev_avg": sum(scores.values()) / len(scores), **scores}
    return {"chosen": chosen, "dev_tasks": list(scores), "rows": [other, row]}


def test_no_rule_no_comparison():
    assert comparison.compare_on_dev(_cfg(None), None) is None


def test_the_chosen_rows_are_compared_and_the_verdict_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    cpu = _selection({"dev_conll_context": 0.38, "dev_bc5cdr_context": 0.61})
    (tmp_path / "results" / "thing-mini-dev-selection.json").write_text(json.dumps(cpu))
    rule = {"recipe": "thing-mini", "tasks": TASKS}
    won = comparison.compare_on_dev(_cfg(rule), _selection({"dev_conll_context": 0.40, "dev_bc5cdr_context": 0.62}))
    assert won["beats"] and won["means"] == {"thing-gpu": 0.51, "thing-mini": 0.495}
    assert "chosen row" in won["sources"]["thing-mini"]
    cfg = _cfg(rule)  # the comparison goes beside the recipe's results (results/<method>/)
    written = json.loads(cfg.results_path.with_name("thing-gpu-dev-comparison.json").read_text())
    assert written["beats"] and written["tasks"] == TASKS
    lost = comparison.compare_on_dev(_cfg(rule), _selection({"dev_conll_context": 0.30, "dev_bc5cdr_context": 0.62}))
    assert not lost["beats"] and "does not beat it" in lost["verdict"]


def test_a_dev_eval_document_serves_and_missing_scores_say_how_to_make_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    rule = {"recipe": "thing-mini", "tasks": TASKS}
    ours = _selection({"dev_conll_context": 0.4, "dev_bc5cdr_context": 0.6})
    with pytest.raises(FileNotFoundError, match="phrasezoo dev-eval --model outputs/thing-mini"):
        comparison.compare_on_dev(_cfg(rule), ours)
    doc = {"tasks": {"dev_conll_context": {"score": 0.5}, "dev_bc5cdr_context": {"score": 0.6}}}
    (tmp_path / "results" / "dev-thing-mini.json").write_text(json.dumps(doc))
    assert not comparison.compare_on_dev(_cfg(rule), ours)["beats"]  # 0.5 vs 0.55


def test_without_a_selection_the_exported_folder_is_scored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    doc = {"tasks": {t: {"score": 0.5} for t in comparison.resolve_dev_tasks(None)}}
    (tmp_path / "results" / "dev-thing-mini.json").write_text(json.dumps(doc))
    scored = []

    def fake_dev(model, tasks=None, progress=True, **kwargs):
        scored.append((model, tasks))
        return {"tasks": {t: {"score": 0.6} for t in tasks}}

    monkeypatch.setattr(comparison, "evaluate_dev", fake_dev)
    result = comparison.compare_on_dev(_cfg({"recipe": "thing-mini", "tasks": None}), None)
    assert result["beats"] and scored == [("outputs/thing-gpu", comparison.resolve_dev_tasks(None))]
