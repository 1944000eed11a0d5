"""results/ stays in order (issue 35): every file indexed in results/README.md, no crowded folder, no dead link in the
index, writers put files where the layout says, and scripts/results_layout.py rewrites references idempotently."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from phrasezoo.core.recipes import BASELINES_DIR, RESULTS_DIR, list_recipes, load_recipe, results_path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "results"
INDEX = RESULTS / "README.md"
FIX = "run `.venv/bin/python scripts/results_layout.py --index` (and move new files into their method's folder)"


def _layout_module():
    spec = importlib.util.spec_from_file_location("results_layout", REPO_ROOT / "scripts" / "results_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _indexed() -> set[str]:
    return set(re.findall(r"\]\(([^)]+)\)", INDEX.read_text()))


def test_every_results_file_is_in_the_index():
    files = {p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*") if p.is_file() and p != INDEX}
    missing = sorted(files - _indexed())
    assert not missing, f"results files missing from results/README.md ({FIX}):\n" + "\n".join(missing)


def test_every_path_the_index_names_exists():
    dead = sorted(rel for rel in _indexed() if not (RESULTS / rel).is_file())
    assert not dead, f"results/README.md names files that do not exist ({FIX}):\n" + "\n".join(dead)


def test_no_folder_holds_more_than_thirty_files():
    crowded = _layout_module().crowded_folders()
    assert not crowded, f"folders under results/ with more than 30 files (split them into subfolders): {crowded}"


def test_the_layout_places_every_file_once():
    layout = _layout_module().read_layout()  # raises on a repeated entry, two files to one place, a name clash
    assert layout["file"] and all("/" in new for new in layout["file"].values())


def test_recipe_results_go_to_their_method_folder_and_dev_choices_beside_them():
    for name in list_recipes():
        recipe = load_recipe(name)
        folder = RESULTS_DIR / recipe.method.replace("_", "-")
        assert results_path(name) == recipe.results_path == folder / f"{name}.json"
    renamed = load_recipe(list_recipes()[0], ["name=some-variant"])  # a `--set name=` run: the recipe's method
    assert renamed.results_path.parent == results_path(list_recipes()[0]).parent


def test_baselines_go_to_results_baselines():
    assert results_path("baseline:minilm-l6") == BASELINES_DIR / "baseline-minilm-l6.json"
    assert results_path("baseline:intfloat/e5-small-v2") == BASELINES_DIR / "baseline-intfloat--e5-small-v2.json"


def test_a_model_folder_goes_to_its_model_types_method(tmp_path):
    folder = tmp_path / "my-run"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "phrasezoo-some-method"}))
    assert results_path(str(folder)) == RESULTS_DIR / "some-method" / "my-run.json"
    (folder / "config.json").write_text(json.dumps({"model_type": "phrasezoo_other_method"}))
    assert results_path(str(folder)) == RESULTS_DIR / "other-method" / "my-run.json"
    assert results_path(str(tmp_path / "unknown")) == RESULTS_DIR / "unknown.json"


@pytest.fixture
def layout():
    return {
        "file": {
            "run-mini.json": "m/run-mini.json",
            "run-mini-soup2.json": "m/run-mini-soup2.json",
            "run-mini-xy.json": "m/earlier/run-mini-spelled-out.json",
            "run-mini-xy-seed7.json": "m/earlier/run-mini-spelled-out-seed7.json",
            "ab-dev.jsonl": "m/experiments/ab-dev.jsonl",
        },
        "glob": {"*.json": "*/*.json"},
        "text": {"<run>.json": "<method>/<run>.json"},
    }


def test_rewrite_replaces_longest_names_first_and_is_idempotent(layout):
    rewrite = _layout_module().rewrite
    text = (
        "See `results/run-mini.json`, results/run-mini-soup2.json. Also results/run-mini-xy*.json, "
        "results/*.json, results/<run>.json, run-mini-xy.json and results/ab-dev.jsonl.\n"
        "Not: myresults/run-mini.json, results/run-mini.json5, outputs/run-mini-xy.json.\n"
    )
    once, unmapped = rewrite(text, layout)
    assert once == (
        "See `results/m/run-mini.json`, results/m/run-mini-soup2.json. Also results/m/earlier/run-mini-spelled-out*.json, "
        "results/*/*.json, results/<method>/<run>.json, run-mini-spelled-out.json and results/m/experiments/ab-dev.jsonl.\n"
        "Not: myresults/run-mini.json, results/run-mini.json5, outputs/run-mini-xy.json.\n"
    )
    assert not unmapped
    assert rewrite(once, layout) == (once, [])


def test_rewrite_reports_a_pattern_it_cannot_map(layout):
    _, unmapped = _layout_module().rewrite("results/run-mini*.json", layout)  # spans two folders
    assert unmapped == ["run-mini*.json"]
