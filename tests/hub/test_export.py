"""What an export publishes (issue 65, item 7): the card's usage snippet loads this export, never another model's
repo id, and ``training_facts.json`` carries no path of the machine that trained it."""

from __future__ import annotations

import json

from phrasezoo.core.recipes import load_recipe
from phrasezoo.hub.export import export_model
from phrasezoo.zoo.registry import get_method


def test_a_renamed_recipes_card_loads_its_own_folder_not_the_release(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recipe = load_recipe("pearl-mini", ["name=my-pearl"])  # the release's recipe, trained under another name
    export_model(get_method("pearl").tiny_model(), recipe.output_dir, recipe, {"steps": 3})
    card = (tmp_path / "outputs" / "my-pearl" / "README.md").read_text()
    assert 'from_pretrained("outputs/my-pearl"' in card and 'from_pretrained("phrasezoo/pearl-mini"' not in card

    own = load_recipe("pearl-mini", ["name=my-pearl", "repo_id=me/my-pearl"])  # a repo id of its own: that one
    export_model(get_method("pearl").tiny_model(), tmp_path / "elsewhere", own, {"steps": 3})
    assert 'from_pretrained("me/my-pearl"' in (tmp_path / "elsewhere" / "README.md").read_text()


def test_training_facts_carry_no_local_absolute_path(tmp_path):
    recipe = load_recipe("pearl-mini")
    out = tmp_path / "out"
    corpus = tmp_path / "data" / "my-corpus.txt"
    facts = {
        "steps": 3,
        "corpus": str(corpus),
        "soup ingredients": [str(out / "ingredients" / f"seed-{s}" / "checkpoints" / "step-000003") for s in (1, 2)],
        "dev-suite selection": "results/pearl/my-pearl-dev-selection.json",
    }
    export_model(get_method("pearl").tiny_model(), out, recipe, facts)
    text = (out / "training_facts.json").read_text()
    written = json.loads(text)
    assert str(tmp_path) not in text and str(tmp_path) not in (out / "README.md").read_text()
    assert written["soup ingredients"] == [f"ingredients/seed-{s}/checkpoints/step-000003" for s in (1, 2)]
    assert written["corpus"] == "my-corpus.txt" and written["steps"] == 3
    assert written["dev-suite selection"] == "results/pearl/my-pearl-dev-selection.json"
