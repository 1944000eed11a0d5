"""What an export publishes (issue 65, item 7): the card's usage snippet loads this export, never another model's
repo id, and ``training_facts.json`` carries no path of the machine that trained it."""

from __future__ import annotations

import json

from phrasezoo.core.recipes import list_recipes, load_recipe
from phrasezoo.hub.export import export_model
from phrasezoo.zoo.registry import get_method

#: a released recipe (the first mini one)
RELEASE = next(name for name in list_recipes() if name.endswith("-mini"))


def _tiny(recipe):
    return get_method(recipe.method).tiny_model()


def test_a_renamed_recipes_card_loads_its_own_folder_not_the_release(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recipe = load_recipe(RELEASE, ["name=my-model"])  # the release's recipe, trained under another name
    released = load_recipe(RELEASE).repo_id
    export_model(_tiny(recipe), recipe.output_dir, recipe, {"steps": 3})
    card = (tmp_path / "outputs" / "my-model" / "README.md").read_text()
    assert '"outputs/my-model"' in card and f'"{released}"' not in card  # the usage snippet's id

    own = load_recipe(RELEASE, ["name=my-model", "repo_id=me/my-model"])  # a repo id of its own: that one
    export_model(_tiny(own), tmp_path / "elsewhere", own, {"steps": 3})
    assert '"me/my-model"' in (tmp_path / "elsewhere" / "README.md").read_text()


def test_training_facts_carry_no_local_absolute_path(tmp_path):
    recipe = load_recipe(RELEASE)
    out = tmp_path / "out"
    corpus = tmp_path / "data" / "my-corpus.txt"
    facts = {
        "steps": 3,
        "corpus": str(corpus),
        "soup ingredients": [str(out / "ingredients" / f"seed-{s}" / "checkpoints" / "step-000003") for s in (1, 2)],
        "dev-suite selection": "results/mine/my-model-dev-selection.json",
    }
    export_model(_tiny(recipe), out, recipe, facts)
    text = (out / "training_facts.json").read_text()
    written = json.loads(text)
    assert str(tmp_path) not in text and str(tmp_path) not in (out / "README.md").read_text()
    assert written["soup ingredients"] == [f"ingredients/seed-{s}/checkpoints/step-000003" for s in (1, 2)]
    assert written["corpus"] == "my-corpus.txt" and written["steps"] == 3
    assert written["dev-suite selection"] == "results/mine/my-model-dev-selection.json"
