"""docs/screenshots.py names each Space's model by its Hub id, not by a path on this machine: a model folder is
staged in a private Hugging Face cache under its recipe's repo id, and loads from there by id with HF_HUB_OFFLINE=1."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = yaml.safe_load((ROOT / "docs" / "blocks.yaml").read_text())["zoo"][0]["checkpoint"]
LOAD = """
import json, os
from transformers import AutoModel
model = AutoModel.from_pretrained(os.environ["PHRASEZOO_MODEL"], trust_remote_code=True)
print(json.dumps({"name": model.name_or_path, "dim": int(model.encode(["New York Times"]).shape[-1])}))
"""


@pytest.mark.slow  # the child process imports transformers and torch
def test_a_space_loads_its_model_by_the_recipes_hub_id_offline(tmp_path):
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.hub.export import export_model
    from phrasezoo.zoo.registry import get_method

    recipe = load_recipe(CHECKPOINT)
    folder = tmp_path / "outputs" / CHECKPOINT
    export_model(get_method(recipe.method).tiny_model(), folder, recipe, {"steps": 1})
    shots = runpy.run_path(str(ROOT / "docs" / "screenshots.py"), run_name="phrasezoo_screenshots")
    cache = tmp_path / "hub-cache"
    env_vars = shots["as_hub_models"]({"PHRASEZOO_MODEL": str(folder), "OTHER": "kept"}, cache)
    assert env_vars == {"PHRASEZOO_MODEL": recipe.repo_id, "OTHER": "kept"}
    env = {**os.environ, **env_vars, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", LOAD], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["name"] == recipe.repo_id and str(tmp_path) not in out["name"] and out["dim"] > 0
