"""A run resumes only under the recipe it was started with (training.recipe_guard)."""

from __future__ import annotations

import json

import pytest

from phrasezoo.core.recipes import recipe_from_dict
from phrasezoo.training.checkpoint import STATE_FILE
from phrasezoo.training.recipe_guard import RECIPE_FILE, changed_keys, check_and_record_recipe, training_recipe

RECIPE = {
    "name": "pearl-tiny",
    "method": "pearl",
    "repo_id": "test/pearl-tiny",
    "backbone": "minilm-l6",
    "data": {"corpus": "embedded", "min_freq": 1},
    "training": {"max_steps": 3, "seed": 5, "method_args": {"distill_weight": 0.0}},
    "eval": {"tasks": "pearl"},
}


def _cfg(**changes):
    raw = json.loads(json.dumps(RECIPE))
    for dotted, value in changes.items():
        node = raw
        *parents, last = dotted.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    return recipe_from_dict(raw)


def _fake_checkpoint(output):
    step = output / "checkpoints" / "step-000003"
    step.mkdir(parents=True)
    (step / STATE_FILE).write_text("{}")


def test_names_evaluation_and_bookkeeping_are_not_part_of_the_recipe():
    base = training_recipe(_cfg())
    assert "name" not in base and "eval" not in base and "soup_seeds" not in base["training"]
    same = training_recipe(
        _cfg(
            name="other",
            eval={"tasks": "turney"},
            training__soup_seeds=[1, 2],
            training__time_budget_minutes=9,
            training__run_memory_gb=6.5,
        )
    )
    assert same == base
    changed = training_recipe(_cfg(training__method_args={"distill_weight": 3.0}, data__min_freq=2))
    assert changed_keys(base, changed) == ["data.min_freq", "training.method_args.distill_weight"]


def test_resuming_under_a_changed_recipe_is_refused_with_the_fix(tmp_path):
    output = tmp_path / "run"
    check_and_record_recipe(_cfg(), output, resume=True)  # a fresh run records its recipe
    assert json.loads((output / "checkpoints" / RECIPE_FILE).read_text()) == training_recipe(_cfg())
    _fake_checkpoint(output)
    check_and_record_recipe(_cfg(name="renamed", training__soup_seeds=[5, 6]), output, resume=True)  # same recipe
    with pytest.raises(ValueError, match=r"differs in: .*lexicon_weight.*--no-resume"):
        check_and_record_recipe(_cfg(training__method_args={"lexicon_weight": 1.0}), output, resume=True)
    # starting over is allowed and records the new recipe
    check_and_record_recipe(_cfg(training__seed=6), output, resume=False)
    assert json.loads((output / "checkpoints" / RECIPE_FILE).read_text())["training"]["seed"] == 6


def test_runs_from_before_the_record_resume_unchecked(tmp_path):
    output = tmp_path / "legacy"
    _fake_checkpoint(output)
    check_and_record_recipe(_cfg(), output, resume=True)
    assert (output / "checkpoints" / RECIPE_FILE).exists()


def test_a_run_recorded_before_gradient_accumulation_existed_resumes(tmp_path):
    """``training.gradient_accumulation_steps`` at its default is left out of the record, so runs recorded before the
    key existed resume; another value is a change."""
    assert "gradient_accumulation_steps" not in training_recipe(_cfg())["training"]
    _fake_checkpoint(tmp_path)
    check_and_record_recipe(_cfg(), tmp_path, resume=True)
    check_and_record_recipe(_cfg(training__gradient_accumulation_steps=1), tmp_path, resume=True)
    with pytest.raises(ValueError, match="another recipe.*gradient_accumulation_steps"):
        check_and_record_recipe(_cfg(training__gradient_accumulation_steps=2), tmp_path, resume=True)


def test_arguments_that_act_after_training_are_not_part_of_the_recipe(tmp_path):
    """PEARL's type_head_refit runs on the final model (its finalize hook): turning it on changes no trained weight,
    so a resume, a soup ingredient or a GPU pack built without it stays the same recipe."""
    base = training_recipe(_cfg())
    refit = _cfg(training__method_args={"distill_weight": 0.0, "type_head_refit": {"c": 2.0}})
    assert training_recipe(refit) == base
    output = tmp_path / "run"
    check_and_record_recipe(refit, output, resume=True)
    _fake_checkpoint(output)
    recorded = output / "checkpoints" / RECIPE_FILE  # a record written before the key left the recipe
    old = json.loads(recorded.read_text())
    old["training"]["method_args"]["type_head_refit"] = True
    recorded.write_text(json.dumps(old))
    check_and_record_recipe(_cfg(), output, resume=True)
