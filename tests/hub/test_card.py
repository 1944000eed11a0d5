"""Each method's model card, rendered from a tiny export with the committed results of its released checkpoint:
short, with the five sections a reader looks for, and a model-index the Hub accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
#: the released checkpoints, their results files and backbones: declared once, in the docs' block registry
ZOO = yaml.safe_load((ROOT / "docs" / "blocks.yaml").read_text())["zoo"]
SECTIONS = ["## Usage", "## Results", "## Training", "## Limitations", "## Paper"]
MAX_LINES = 90  # a short card: the lines a reader sees (front matter and the folded recipe not counted)


def _method(checkpoint: str) -> str:
    from phrasezoo.core.recipes import load_recipe

    return load_recipe(checkpoint).method


def test_every_method_has_a_released_checkpoint_in_the_zoo_table():
    from phrasezoo.zoo.registry import list_methods

    assert set(list_methods()) <= {_method(row["checkpoint"]) for row in ZOO}


def _first_per_method() -> list[dict]:
    seen, rows = set(), []
    for row in ZOO:
        method = _method(row["checkpoint"])
        if method not in seen:
            seen.add(method)
            rows.append(row)
    return rows


@pytest.mark.parametrize("row", _first_per_method(), ids=lambda row: row["checkpoint"])
def test_card_from_a_tiny_export(row, tmp_path):
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.hub.export import export_model
    from phrasezoo.pipeline import card_results
    from phrasezoo.zoo.registry import get_method

    recipe = load_recipe(row["checkpoint"])
    doc = json.loads((ROOT / row["runs"][0]).read_text())
    baselines = [json.loads((ROOT / row["backbone"]).read_text())] if row.get("backbone") else []
    facts = {"steps": 3, "train_seconds": 1.5, "seed": 42}
    export_model(get_method(recipe.method).tiny_model(), tmp_path, recipe, facts, card_results(recipe, doc, baselines))
    card = (tmp_path / "README.md").read_text()

    header, body = re.match(r"^---\n(.*?)\n---\n(.*)$", card, re.S).groups()
    positions = [body.find(section + "\n") for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), f"sections missing or out of order: {SECTIONS}"
    visible = re.sub(r"<details>.*?</details>", "", body, flags=re.S)
    assert len(visible.splitlines()) <= MAX_LINES, f"the card shows {len(visible.splitlines())} lines; keep it short"
    assert f'"{recipe.repo_id}"' in body  # the usage example loads this checkpoint
    assert "No evaluation results" not in body
    if baselines:
        assert baselines[0]["model"] in body  # the backbone measured in the same run is a row of the table
    assert "| steps | 3 |" in body  # the training facts

    data = yaml.safe_load(header)
    index = data["model-index"][0]
    assert index["name"] == recipe.name
    results = index["results"]
    assert results and all(r["metrics"][0]["value"] is not None for r in results)
    measured = {round(100 * e["value"], 2) for e in doc["results"] if e.get("value") is not None}
    assert all(round(r["metrics"][0]["value"], 2) in measured for r in results)  # numbers from the results file
    assert "phrasezoo" in data["tags"] and data["library_name"] == "transformers"
