"""The main job end to end on a tiny recipe: train, export, evaluate model and baseline, card, README table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from phrasezoo.cli import main as cli_main
from phrasezoo.pipeline import README_END, README_START, run_pipeline

SENTENCES = [
    "The New York Times reported that the United States and the United Kingdom signed a trade agreement.",
    "Machine learning and deep learning are popular topics at the university in New York.",
    "The European Union discussed climate change with the United Nations in Paris last year.",
    "Political philosophy studies voluntary institutions and free associations in modern societies.",
    "Deep learning models need large datasets and fast computers to work very well.",
    "Researchers in Paris and London study climate change and its effects on farming.",
]


def _tiny_recipe(tmp_path, name: str, **training) -> str:
    """A 2-step PEARL recipe on the SENTENCES corpus from minilm-l6, written to ``tmp_path/<name>.yaml``."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 4) + "\n")
    recipe = {
        "name": name,
        "method": "pearl",
        "repo_id": f"test/{name}",
        "backbone": "minilm-l6",
        "data": {"corpus": str(corpus), "min_freq": 1, "use_wordnet": False},
        "training": {
            "batch_size": 8,
            "max_steps": 2,
            "learning_rate": 1e-3,
            **training,
            "method_args": {"char_pretrain": {"steps": 1, "batch_size": 8, "vocabulary_size": 100}},
        },
    }
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump(recipe))
    return str(config)


def _counting(calls: list):
    """``export_model`` that records each call (the pipeline imports it at call time, so a patch reaches it)."""
    from phrasezoo.hub.export import export_model

    def export(*args, **kwargs):
        calls.append(args[1])
        return export_model(*args, **kwargs)

    return export


def test_pipeline_trains_exports_evaluates_and_writes_the_table(tmp_path, monkeypatch, benchmarks_dir):
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 4) + "\n")
    recipe = {
        "name": "pearl-tiny",
        "method": "pearl",
        "repo_id": "test/pearl-tiny",
        "backbone": "minilm-l6",
        "description": "A tiny PEARL for the pipeline test.",
        "data": {"corpus": str(corpus), "min_freq": 1, "use_wordnet": False},
        "training": {
            "batch_size": 8,
            "max_steps": 2,
            "checkpoint_every": 1,
            "weight_average": 0.5,
            "method_args": {"char_pretrain": {"steps": 1, "batch_size": 8, "vocabulary_size": 100}},
        },
        "eval": {"tasks": ["bird"], "baselines": ["baseline:minilm-l6"]},
    }
    config = tmp_path / "pearl-tiny.yaml"
    config.write_text(yaml.safe_dump(recipe))
    readme = tmp_path / "README.md"
    readme.write_text(f"# demo\n\n{README_START}\nold table\n{README_END}\n\nmore text\n")

    # another recipe's task already in the shared baseline file: measured again only for this recipe's tasks
    other = {"task": "turney", "metric": "accuracy", "value": 0.5, "n": 1, "seconds": 0.0, "notes": "other recipe"}
    (tmp_path / "results" / "baselines").mkdir(parents=True)  # results/README.md: baselines/, <method>/
    (tmp_path / "results" / "baselines" / "baseline-minilm-l6.json").write_text(
        json.dumps({"model": "baseline:minilm-l6", "model_revision": "x", "created": "x", "results": [other]})
    )

    doc = run_pipeline(str(config), benchmarks_dir=str(benchmarks_dir), update_readme=str(readme))

    assert doc["model"] == "pearl-tiny" and [r["task"] for r in doc["results"]] == ["bird"]
    assert 0.0 < doc["results"][0]["value"] < 1.0
    assert json.loads((tmp_path / "results" / "pearl" / "pearl-tiny.json").read_text())["results"] == doc["results"]
    baseline = json.loads((tmp_path / "results" / "baselines" / "baseline-minilm-l6.json").read_text())
    assert [r["task"] for r in baseline["results"]] == ["turney", "bird"] and baseline["results"][0] == other
    card = (tmp_path / "outputs" / "pearl-tiny" / "README.md").read_text()
    assert "model-index" in card and "bird" in card and "Training" in card and "pearl-tiny" in card
    assert "(paper)" in card  # reference rows of the published numbers
    text = readme.read_text()
    assert "old table" not in text and "pearl-tiny" in text and text.endswith("more text\n")

    # --no-train evaluates the exported model again without touching it
    weights = (tmp_path / "outputs" / "pearl-tiny" / "model.safetensors").read_bytes()
    again = run_pipeline(str(config), benchmarks_dir=str(benchmarks_dir), train=False)
    assert again["results"][0]["value"] == doc["results"][0]["value"]
    assert (tmp_path / "outputs" / "pearl-tiny" / "model.safetensors").read_bytes() == weights

    # the card can be regenerated from the results file, and the latest checkpoint exported on its own
    assert cli_main(["export", str(config)]) == 0
    assert cli_main(["export", str(config), "--from-checkpoint"]) == 0
    facts = json.loads((tmp_path / "outputs" / "pearl-tiny" / "training_facts.json").read_text())
    assert facts["exported from checkpoint"] == "step-000002" and facts["steps"] == 2


def test_pipeline_no_train_without_a_model_says_what_to_do(tmp_path, monkeypatch):
    import pytest

    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="drop --no-train"):
        run_pipeline("pearl-mini", train=False)


def test_pipeline_dev_only_without_a_selection_block_says_so_before_training(tmp_path, monkeypatch):
    import pytest

    monkeypatch.chdir(tmp_path)
    config = tmp_path / "no-selection.yaml"
    config.write_text(
        yaml.safe_dump(
            {"name": "no-selection", "method": "pearl", "repo_id": "test/no-selection", "backbone": "minilm-l6"}
        )
    )
    with pytest.raises(ValueError, match="eval.select_on_dev"):
        run_pipeline(str(config), dev_only=True)
    assert not (tmp_path / "outputs").exists()


def test_dev_selection_chooses_the_mix_on_the_dev_suite(tmp_path, monkeypatch, benchmarks_dir):
    import torch
    from safetensors.torch import load_file

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.evaluation.dev.suite import evaluate_dev
    from phrasezoo.training.loop import RunOptions
    from phrasezoo.training.recipe import train_recipe
    from phrasezoo.training.selection import select_on_dev

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(benchmarks_dir))  # the dev sets drop every benchmark item
    config = _tiny_recipe(tmp_path, "pearl-dev", weight_average=0.5)
    cfg = load_recipe(config)
    model = train_recipe(cfg, RunOptions(progress=False)).model

    grid = {"weight_average": [0.0, 1.0], "char_weight": [0.0, 0.5]}
    selection, facts = select_on_dev(
        cfg, grid, evaluate_dev, model, progress=False, dev_tasks=["fuzzy", "topics"], max_items=40
    )

    written = json.loads((tmp_path / "results" / "pearl" / "pearl-dev-dev-selection.json").read_text())
    assert written["chosen"] == selection["chosen"] and written["dev_tasks"] == ["dev_fuzzy", "dev_topics"]
    # coordinate search: 2 weight_average rows, then the char_weight row not yet seen
    assert len(selection["rows"]) == 3
    for key in grid:
        rows = [r for r in selection["rows"] if all(r[k] == selection["chosen"][k] for k in grid if k != key)]
        assert max(rows, key=lambda r: r["dev_avg"])[key] == selection["chosen"][key]
    # the model is left at the chosen blend of the last checkpoint and the starting weights, the recipe records it
    ckpt = tmp_path / "outputs" / "pearl-dev" / "checkpoints"
    finetuned = load_file(ckpt / "step-000002" / "model.safetensors")
    initial = load_file(ckpt / "initial.safetensors")
    w = selection["chosen"]["weight_average"]
    key = next(k for k in initial if k.endswith("word_embeddings.weight"))
    assert torch.allclose(model.state_dict()[key], (1 - w) * finetuned[key] + w * initial[key], atol=1e-6)
    assert model.config.char_weight == selection["chosen"]["char_weight"] == cfg.model["char_weight"]
    assert cfg.training.weight_average == w and facts["chosen on the dev suite"] == selection["chosen"]
    assert not (tmp_path / "outputs" / "pearl-dev" / "model.safetensors").exists()  # exporting is the caller's job

    # --dev-only: the pipeline makes the recipe's dev choice and stops before any benchmark is evaluated
    with_selection = {
        **yaml.safe_load(Path(config).read_text()),
        "eval": {
            "tasks": ["bird"],
            "select_on_dev": {"grid": {"weight_average": [0.0, 1.0]}, "tasks": ["fuzzy"], "max_items": 40},
        },
    }
    Path(config).write_text(yaml.safe_dump(with_selection))
    monkeypatch.setattr("phrasezoo.hub.export.export_model", _counting(calls := []))
    dev_doc = run_pipeline(config, dev_only=True)  # resumes the finished run, selects and exports once
    assert dev_doc["dev_tasks"] == ["dev_fuzzy"] and len(dev_doc["rows"]) == 2
    assert not (tmp_path / "results" / "pearl" / "pearl-dev.json").exists() and len(calls) == 1
    exported = load_file(tmp_path / "outputs" / "pearl-dev" / "model.safetensors")
    w = dev_doc["chosen"]["weight_average"]
    assert torch.allclose(exported[key], (1 - w) * finetuned[key] + w * initial[key], atol=1e-6)
    facts = json.loads((tmp_path / "outputs" / "pearl-dev" / "training_facts.json").read_text())
    assert facts["chosen on the dev suite"] == dev_doc["chosen"] and facts["steps"] == 2
    # --no-train: the selection runs on the exported model with the run's checkpoints, and exports it once more
    again = run_pipeline(config, train=False, dev_only=True)
    assert again["rows"] == dev_doc["rows"] and len(calls) == 2

    # worst_margin: the smallest per-task margin over the baseline, scored on the same dev tasks in the same call
    worst, _ = select_on_dev(
        cfg,
        {"weight_average": [0.0, 1.0]},
        evaluate_dev,
        model,
        progress=False,
        dev_tasks=["fuzzy", "topics"],
        max_items=40,
        objective="worst_margin",
        baseline="baseline:minilm-l6",
    )
    base = worst["baseline"]["scores"]
    assert worst["objective"] == "worst_margin" and set(base) == {"dev_fuzzy", "dev_topics"}
    for row in worst["rows"]:
        assert row["worst_margin"] == pytest.approx(min(row[t] - base[t] for t in base), abs=1e-5)
    best = max(worst["rows"], key=lambda r: r["worst_margin"])
    assert worst["chosen"]["weight_average"] == best["weight_average"]
    with pytest.raises(ValueError, match="objective"):
        select_on_dev(cfg, {"weight_average": [0.0]}, evaluate_dev, model, progress=False, objective="median")
    with pytest.raises(ValueError, match="needs a baseline"):
        select_on_dev(cfg, {"weight_average": [0.0]}, evaluate_dev, model, progress=False, objective="worst_margin")


def test_a_soup_recipe_trains_each_seed_and_exports_their_average(tmp_path, monkeypatch):
    import torch
    from safetensors.torch import load_file

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.train import train_and_export
    from phrasezoo.training.loop import RunOptions

    monkeypatch.chdir(tmp_path)
    config = _tiny_recipe(tmp_path, "pearl-soup", soup_seeds=[1, 2])
    train_and_export(load_recipe(config), RunOptions(progress=False), card=False)

    out = tmp_path / "outputs" / "pearl-soup"
    a, b = (
        load_file(out / "ingredients" / s / "checkpoints" / "step-000002" / "model.safetensors")
        for s in ("seed-1", "seed-2")
    )
    exported = load_file(out / "model.safetensors")
    key = next(k for k in a if "encoder.layer.0" in k and k.endswith("query.weight"))
    assert not torch.equal(a[key], b[key])
    torch.testing.assert_close(exported[key], (a[key] + b[key]) / 2, rtol=0, atol=1e-6)
    facts = json.loads((out / "training_facts.json").read_text())
    assert facts["seed"] == [1, 2] and len(facts["soup ingredients"]) == 2
    # rerun: the finished ingredients are reused (resumed at their last step), the soup is the same
    train_and_export(load_recipe(config), RunOptions(progress=False), card=False)
    again = load_file(out / "model.safetensors")
    assert all(torch.equal(again[k], exported[k]) for k in exported)
    # the soup checkpoint (no optimizer state) exports like a run's
    assert cli_main(["export", config, "--from-checkpoint"]) == 0
    assert json.loads((out / "training_facts.json").read_text())["exported from checkpoint"] == "step-000002"
    from_checkpoint = load_file(out / "model.safetensors")
    assert all(torch.equal(from_checkpoint[k], exported[k]) for k in exported)


def test_the_recipes_ccl_options_reach_the_models_evaluation_and_misspelt_ones_fail_before_training(
    tmp_path, monkeypatch
):
    import phrasezoo.hub.export
    import phrasezoo.pipeline

    monkeypatch.chdir(tmp_path)
    recipe = {"name": "ccl-recipe", "method": "pearl", "repo_id": "test/ccl-recipe", "backbone": "minilm-l6",
              "eval": {"tasks": ["conll2003_context_ccl"], "baselines": [], "ccl": {"steps": 25}}}  # fmt: skip
    config = tmp_path / "ccl-recipe.yaml"
    config.write_text(yaml.safe_dump(recipe))
    (tmp_path / "outputs" / "ccl-recipe").mkdir(parents=True)
    (tmp_path / "outputs" / "ccl-recipe" / "config.json").write_text("{}")
    seen = {}

    def fake_evaluate(model_dir, tasks, benchmarks_dir, output, name, task_options=None):
        seen.update(tasks=tasks, task_options=task_options)
        return {"model": "ccl-recipe", "model_revision": "x", "created": "x", "results": []}

    monkeypatch.setattr(phrasezoo.pipeline, "evaluate_in_parallel", fake_evaluate)
    monkeypatch.setattr(phrasezoo.hub.export, "refresh_card", lambda *args: None)
    run_pipeline(str(config), train=False)
    assert seen == {"tasks": ["conll2003_context_ccl"], "task_options": {"ccl": {"steps": 25}}}

    recipe["eval"]["ccl"] = {"stepz": 25}
    config.write_text(yaml.safe_dump(recipe))
    with pytest.raises(ValueError, match="stepz"):
        run_pipeline(str(config))  # before any training
    assert not (tmp_path / "outputs" / "ccl-recipe" / "ingredients").exists()
    assert sorted(p.name for p in (tmp_path / "outputs" / "ccl-recipe").iterdir()) == ["config.json"]


def test_one_pipeline_run_writes_the_model_folder_once_and_the_card_once(tmp_path, monkeypatch, benchmarks_dir):
    """train (a soup) -> select on dev -> export once -> evaluate -> card once: no step goes back up."""
    import phrasezoo.hub.card
    import phrasezoo.hub.export
    import phrasezoo.training.one_run
    import phrasezoo.training.recipe
    import phrasezoo.zoo.registry

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(benchmarks_dir))
    config = _tiny_recipe(tmp_path, "pearl-once", soup_seeds=[1, 2])
    recipe = yaml.safe_load(Path(config).read_text())
    recipe["eval"] = {
        "tasks": ["bird"],
        "baselines": [],
        "select_on_dev": {"grid": {"weight_average": [0.0, 0.5]}, "tasks": ["fuzzy"], "max_items": 40},
    }
    Path(config).write_text(yaml.safe_dump(recipe))
    exports, weights, cards = [], [], []
    monkeypatch.setattr("phrasezoo.hub.export.export_model", _counting(exports))
    replace = phrasezoo.hub.export.readable_replace
    monkeypatch.setattr(
        phrasezoo.hub.export, "readable_replace", lambda src, dst: weights.append(Path(dst).name) or replace(src, dst)
    )
    write_card = phrasezoo.hub.card.write_model_card
    monkeypatch.setattr(phrasezoo.hub.export, "write_model_card", lambda *a: cards.append(a) or write_card(*a))
    validations = []
    validate = phrasezoo.zoo.registry.validate_recipe
    for module in (
        phrasezoo.zoo.registry,
        phrasezoo.training.one_run,
        phrasezoo.training.recipe,
    ):  # every caller's name
        monkeypatch.setattr(
            module, "validate_recipe", lambda recipe: validations.append(recipe.name) or validate(recipe)
        )

    doc = run_pipeline(config, benchmarks_dir=str(benchmarks_dir))

    assert validations == ["pearl-once"]  # the recipe is validated once, not again by create_model or per seed
    assert exports == [Path("outputs/pearl-once")]
    assert weights.count("model.safetensors") == 1 and weights.count("config.json") == 1
    assert len(cards) == 1 and cards[0][3] is not None  # the one card has the results
    out = tmp_path / "outputs" / "pearl-once"
    card = (out / "README.md").read_text()
    assert "bird" in card and "model-index" in card and doc["results"][0]["task"] == "bird"
    facts = json.loads((out / "training_facts.json").read_text())
    assert facts["seed"] == [1, 2] and "chosen on the dev suite" in facts and "model soup" in facts
