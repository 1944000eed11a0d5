"""Two processes, data-parallel over gloo, end to end: the same code a multi-GPU run takes.

``accelerate launch --cpu --num_processes 2`` starts ONE process in accelerate 1.x unless MPI is configured
(``--cpu`` always takes its simple launcher), so the test uses ``--multi_gpu --num_processes 2``: torchrun
starts two processes and, with no GPU present, Accelerate runs them as MULTI_CPU with the gloo backend.

One launch (:mod:`tests.training.launch_tiny_recipes`) trains and exports, through ``train.py``'s entry point, a tiny
version of every mini recipe (the golden tests' specs: the teacher and lexicon terms on where the mini recipe has
them), then checks that an interrupted two-process run resumes to the uninterrupted run's weights.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from phrasezoo.zoo.registry import list_methods

REPO_ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [
    "The New York Times reported that the United States and the United Kingdom signed a trade agreement.",
    "Machine learning and deep learning are popular topics at the university in New York.",
    "The European Union discussed climate change with the United Nations in Paris last year.",
    "Political philosophy studies voluntary institutions and free associations in modern societies.",
    "The World Health Organization published a report on public health in Geneva.",
    "Deep learning models need large datasets and fast computers to work very well.",
    "The United States Congress passed a new law about public health last week.",
    "Researchers in Paris and London study climate change and its effects on farming.",
    "The Boston Globe and The New York Times covered the election in the United States.",
    "Students at the university learn machine learning, statistics and political philosophy.",
]


def _tiny_recipes() -> list[tuple[str, str, dict, set]]:
    """``(recipe name, method, changes to the golden spec, extra terms)`` of every mini recipe, as each method's
    ``tests/methods/<name>/test_assembly.py`` declares them (``MINI_RECIPES``, ``TERMS``)."""
    found = []
    for method in list_methods():
        module = importlib.import_module(f"tests.methods.{method}.test_assembly")
        assert module.MINI_RECIPES, f"{method}: no tiny mini recipe declared for the two-process test"
        found += [(name, method, changes, module.TERMS) for name, changes in module.MINI_RECIPES.items()]
    return found


def _recipe(name: str, method: str, root: Path, changes: dict, **training) -> dict:
    from tests.training import golden

    spec = importlib.import_module(f"tests.methods.{method}.test_assembly").SPEC(root)
    for key, value in changes.items():
        spec[key] = {**spec.get(key, {}), **value}
    recipe = {
        "name": f"{name}-tiny",
        "method": method,
        "repo_id": f"test/{name}-tiny",
        "model": spec.get("model", {}),
        "data": spec["data"],
        "training": {**golden.TRAINING, **training, "method_args": spec["method_args"]},
    }
    if "backbone" in spec:
        recipe["backbone"] = spec["backbone"]
    return recipe


@pytest.mark.slow
def test_two_processes_train_every_tiny_mini_recipe_and_resume(tmp_path, benchmarks_dir):
    (tmp_path / "recipes").mkdir()
    tiny = _tiny_recipes()
    for name, method, changes, _ in tiny:
        recipe = _recipe(name, method, tmp_path, changes)
        (tmp_path / "recipes" / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
    resume = _recipe("pearl-resume", "pearl", tmp_path, {}, max_steps=4, checkpoint_every=2)
    (tmp_path / "resume.yaml").write_text(yaml.safe_dump(resume))
    env = {
        **os.environ,
        "PHRASEZOO_CACHE": str(tmp_path / "cache"),
        "OMP_NUM_THREADS": "1",
        "PHRASEZOO_BENCHMARKS": str(benchmarks_dir),
        "TQDM_DISABLE": "1",
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no",
        str(REPO_ROOT / "tests" / "training" / "launch_tiny_recipes.py"), str(tmp_path),
    ]  # fmt: skip
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "MULTI_CPU" in proc.stdout + proc.stderr
    for name, _, _, terms in tiny:
        output = tmp_path / "out" / name
        facts = json.loads((output / "training_facts.json").read_text())
        assert facts["processes"] == 2 and facts["steps"] == 2, (name, facts)
        assert terms <= set(facts["last losses"]), (name, facts["last losses"])
        assert (output / "model.safetensors").exists() and "auto_map" in json.loads(
            (output / "config.json").read_text()
        )
    resumed = json.loads((tmp_path / "resume.json").read_text())
    assert resumed["keys"] and resumed["facts"]["processes"] == 2 and resumed["facts"]["steps"] == 4
    assert resumed["max_difference"] <= 1e-6, resumed
