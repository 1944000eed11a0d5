"""Installable as users install it: a wheel built from the repository, installed into a clean environment and run
outside the checkout, lists and loads every recipe and finds every model-card template (issue 35).

The clean environment is a fresh venv that sees this project's dependencies (its site-packages as a plain path, so
the editable install of the checkout is not active there) and gets the wheel with ``--no-deps``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from phrasezoo.core.files import REPO_ROOT
from tests.fresh_venv import make_venv

CHECK = """
import json, phrasezoo
from phrasezoo.core.recipes import RECIPES_DIR, list_recipes, load_recipe
from phrasezoo.zoo.registry import get_method, list_methods, validate_recipe
from phrasezoo.match.model.learned import LEARNED_FILE, default_combination, zoo_learned
for name in list_recipes():
    validate_recipe(load_recipe(name))
print(json.dumps({
    "package": phrasezoo.__file__,
    "recipes_dir": str(RECIPES_DIR),
    "recipes": list_recipes(),
    "cards": {m: str(get_method(m).card_template) for m in list_methods() if get_method(m).card_template.is_file()},
    "learned": [str(LEARNED_FILE), default_combination().meta["encoder"], sorted(zoo_learned())],
}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory, phrasezoo_wheel) -> Path:
    """A venv with the freshly built wheel installed (no dependencies), its interpreter's bin folder returned."""
    tmp = tmp_path_factory.mktemp("wheel")
    # the project's dependencies, as a plain path: the checkout's editable install (a .pth there) stays inactive
    bin_dir = make_venv(tmp / "venv", sysconfig.get_paths()["purelib"])
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--no-deps", "-q",
         "--disable-pip-version-check", str(phrasezoo_wheel)],
        check=True, cwd=tmp,
    )  # fmt: skip
    return bin_dir


def _run(command: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_installed_wheel_lists_every_recipe_outside_the_checkout(installed, tmp_path):
    shipped = sorted(p.stem for p in (REPO_ROOT / "hub_configs").glob("*.yaml"))
    assert shipped
    out = _run([str(installed / "phrasezoo"), "list"], cwd=tmp_path)
    listed = out.split("recipes (hub_configs/*.yaml):", 1)[1]
    for name in shipped:
        assert f"  {name} " in listed, f"{name} is not listed by the installed wheel:\n{out}"


def test_the_installed_wheel_loads_every_recipe_and_finds_every_card_template(installed, tmp_path):
    found = json.loads(_run([str(installed / "python"), "-c", CHECK], cwd=tmp_path).strip().splitlines()[-1])
    site = str(installed.parent)
    assert found["package"].startswith(site), f"the checkout was imported, not the wheel: {found['package']}"
    assert found["recipes_dir"].startswith(site)
    assert found["recipes"] == sorted(p.stem for p in (REPO_ROOT / "hub_configs").glob("*.yaml"))
    templates = sorted(p.stem for p in (REPO_ROOT / "model_cards").glob("*.md"))
    assert sorted(found["cards"]) == templates and all(path.startswith(site) for path in found["cards"].values())
    # the matcher's learned combinations are package data: the shipped file and a zoo method's matcher.json
    learned_file, default_encoder, zoo = found["learned"]
    assert learned_file.startswith(site) and default_encoder == "baseline:minilm-l6@onnx-int8"
    method_files = (REPO_ROOT / "src" / "phrasezoo" / "methods").glob("*/matcher.json")
    assert zoo == sorted(key for file in method_files for key in json.loads(file.read_text())["combinations"])


METRICS_CHECK = """
import json
from phrasezoo.evaluation.metrics import METRICS, compute, metric_path
print(json.dumps({
    "paths": [str(metric_path(name)) for name in METRICS],
    "pearson": compute("pearson", predictions=[0.1, 0.9, 0.4], references=[1.0, 4.5, 2.0])["pearson"],
    "nmi": compute("nmi", predictions=[0, 0, 1, 1], references=["a", "a", "b", "b"])["nmi"],
}))
"""


def test_the_installed_wheel_computes_with_its_own_evaluate_metric_modules_offline(installed, tmp_path):
    """The metric scripts ship inside the wheel and load by path with the Hub unreachable (HF_HUB_OFFLINE=1, a dead
    endpoint), so nothing is fetched from the Hub."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "hf")}
    env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(installed / "python"), "-c", METRICS_CHECK], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    site = str(installed.parent)
    assert all(path.startswith(site) for path in found["paths"]), found["paths"]
    assert found["pearson"] == pytest.approx(0.995082, abs=1e-6) and found["nmi"] == 1.0
