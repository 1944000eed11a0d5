"""Model soups: shared-start tensors averaged, seed-initialised modules from the first run, a finished checkpoint."""

from __future__ import annotations

import copy
import json
import os

import pytest
import torch
from safetensors.torch import load_file

from phrasezoo.training.checkpoint import latest_checkpoint, load_checkpoint
from phrasezoo.training.loop import RunOptions, train
from phrasezoo.training.soup import write_soup_checkpoint
from phrasezoo.zoo.registry import get_method
from tests.training.test_reproducibility import SENTENCES

tiny_model = get_method("pearl").tiny_model


def _two_runs(tmp_path, pearl_task, training_config):
    start = tiny_model()
    runs = []
    for seed in (3, 4):
        model = copy.deepcopy(start)  # one pretrained start, as a real backbone gives every seed
        runs.append(
            train(
                model, pearl_task(model), training_config(seed=seed), RunOptions(tmp_path / f"s{seed}", progress=False)
            )
        )
    return runs


def test_soup_checkpoint_of_two_seeds(tmp_path, pearl_task, training_config):
    runs = _two_runs(tmp_path, pearl_task, training_config)
    returned, facts = write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "soup")

    found = latest_checkpoint(tmp_path / "soup" / "checkpoints")
    soup, optimizer_state, state = load_checkpoint(found)
    assert found.name == "step-000006" and state["step"] == 6 and optimizer_state == {}
    assert len(state["soup"]) == 2 and len(facts["soup ingredients"]) == 2
    assert all(torch.equal(returned[k], soup[k]) for k in soup)  # what it returns is what it wrote
    a, b = (load_file(tmp_path / s / "checkpoints" / "step-000006" / "model.safetensors") for s in ("s3", "s4"))
    shared = load_file(tmp_path / "soup" / "checkpoints" / "initial.safetensors")
    assert shared and all(k.startswith("backbone.") for k in shared)
    for key in shared:
        if a[key].is_floating_point():
            torch.testing.assert_close(soup[key], (a[key] + b[key]) / 2, rtol=0, atol=1e-7, msg=key)
    moved = [k for k in shared if not torch.equal(a[k], b[k])]
    assert moved  # the seeds really trained apart, so the test is not averaging equal tensors
    fresh = [k for k in soup if k not in shared]
    assert fresh and all(torch.equal(soup[k], a[k]) for k in fresh)  # char encoder, type head: the first run's
    # a soup is not a run to resume
    model = tiny_model()
    with pytest.raises(ValueError, match="model soup"):
        train(model, pearl_task(model), training_config(), RunOptions(tmp_path / "soup", progress=False))
    # the same ingredients give bitwise the same soup
    write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "again")
    again = load_file(latest_checkpoint(tmp_path / "again" / "checkpoints") / "model.safetensors")
    assert all(torch.equal(again[k], soup[k]) for k in soup)
    assert runs[0].steps == runs[1].steps == 6


def test_soup_refuses_runs_from_different_starts(tmp_path, pearl_task, training_config):
    for seed in (3, 4):
        model = tiny_model()
        if seed == 4:  # another pretrained start: no shared start to average from
            with torch.no_grad():
                next(model.backbone.parameters()).add_(0.1)
        train(model, pearl_task(model), training_config(seed=seed), RunOptions(tmp_path / f"s{seed}", progress=False))
    state = json.loads((tmp_path / "s3" / "checkpoints" / "step-000006" / "trainer_state.json").read_text())
    assert state["step"] == 6
    with pytest.raises(ValueError, match="same weights"):
        write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "soup")
    with pytest.raises(ValueError, match="at least two"):
        write_soup_checkpoint([tmp_path / "s3"], tmp_path / "soup")


def test_seeds_trained_side_by_side_give_the_soup_of_seeds_trained_in_turn(tmp_path, monkeypatch):
    """One process per seed (each on one pinned thread) == every seed in this process, one after another: the same
    ingredients and the same soup, bit for bit (teacher rows embedded lazily in each process included)."""
    import yaml

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.training.loop import RunOptions
    from phrasezoo.training.recipe import runs_on_cores, soup_workers, train_recipe

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / "cache"))
    (tmp_path / "corpus.txt").write_text("\n".join(SENTENCES * 4) + "\n")  # the reproducibility test's corpus
    recipe = {
        "name": "pearl-soup",
        "method": "pearl",
        "repo_id": "test/pearl-soup",
        "backbone": "minilm-l6",
        "data": {"corpus": str(tmp_path / "corpus.txt"), "min_freq": 1, "use_wordnet": False},
        "training": {
            "batch_size": 8,
            "max_steps": 3,
            "learning_rate": 1e-3,
            "num_threads": 1,
            "soup_seeds": [5, 6, 7],
            "method_args": {
                "char_pretrain": {"steps": 1, "batch_size": 8, "vocabulary_size": 100},
                "distill_weight": 10.0,
                "teacher": "minilm-l6",
            },
        },
    }
    (tmp_path / "soup.yaml").write_text(yaml.safe_dump(recipe))
    cfg = load_recipe(str(tmp_path / "soup.yaml"))
    fit = len(os.sched_getaffinity(0))  # one-thread runs
    assert soup_workers(cfg, 3) == (1 if fit < 2 else 3 if 2 * fit >= 3 else fit)  # 2 cores: all 3 seeds at once
    monkeypatch.setenv("PHRASEZOO_SOUP_WORKERS", "1")
    assert soup_workers(cfg, 3) == 1

    in_turn = train_recipe(cfg, RunOptions(tmp_path / "in-turn", progress=False, workers=1))
    spare: list[int] = []
    again = load_recipe(str(tmp_path / "soup.yaml"))
    started = lambda: spare.append(int((tmp_path / "side" / "ingredients").exists()))  # noqa: E731
    side_by_side = train_recipe(again, RunOptions(tmp_path / "side", progress=False, workers=2, spare=started))

    logs = sorted(p.parent.name for p in (tmp_path / "side" / "ingredients").glob("*/ingredient.log"))
    assert logs and "seed-5" not in logs  # seed 5 trains in this process, at least one other in a worker process
    for seed in (5, 6, 7):
        a, b = (
            load_file(latest_checkpoint(root / "ingredients" / f"seed-{seed}" / "checkpoints") / "model.safetensors")
            for root in (tmp_path / "in-turn", tmp_path / "side")
        )
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), f"seed {seed} differs"
    soup_a, soup_b = in_turn.model.state_dict(), side_by_side.model.state_dict()
    assert all(torch.equal(soup_a[k], soup_b[k]) for k in soup_a)
    assert side_by_side.facts["seed"] == [5, 6, 7] and side_by_side.facts["steps"] == 3
    stages = [stage for stage, _start, _seconds in side_by_side.stages]
    assert sum(stage.startswith("training run seed") for stage in stages) == 3
    # handed on once: before the first seed's task build if the two workers take every core, else when one fell free
    assert spare == ([0] if runs_on_cores(again) <= 2 else [1])


def test_the_soup_trains_no_more_seeds_at_once_than_the_free_memory_holds(monkeypatch, capsys):
    from phrasezoo.core.recipes import Recipe, TrainingConfig
    from phrasezoo.training import recipe

    cfg = Recipe("r", "pearl", "x/r", training=TrainingConfig(num_threads=1, soup_seeds=[1, 2, 3]))
    monkeypatch.delenv("PHRASEZOO_SOUP_WORKERS", raising=False)
    monkeypatch.setattr(recipe, "usable_cores", lambda: 4)
    monkeypatch.setattr(recipe.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(recipe, "available_memory", lambda: 13 * 2**30)
    assert recipe.soup_workers(cfg, 3) == 3  # no peak in the recipe: the cores alone decide
    cfg.training.run_memory_gb = 6.0
    assert recipe.runs_in_memory(cfg) == 2
    assert recipe.soup_workers(cfg, 3) == 2
    assert "2 run(s) at a time, not 3" in capsys.readouterr().out
    monkeypatch.setattr(recipe, "available_memory", lambda: 2**30)
    assert recipe.soup_workers(cfg, 3) == 1  # one run always starts: training in turn is slower, not impossible
    monkeypatch.setattr(recipe, "available_memory", lambda: None)  # unknown: the cores decide
    assert recipe.soup_workers(cfg, 3) == 3
    monkeypatch.setenv("PHRASEZOO_SOUP_WORKERS", "2")
    assert recipe.soup_workers(cfg, 3) == 2
