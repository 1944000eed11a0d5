"""``phrasezoo convert`` on stand-ins of every published release, and every zoo model type loaded back by repo id.

The releases are the methods' (``Method.releases``); their stand-ins and the authors' forward passes are in
``tests/methods/<name>/release_standins.py`` (:mod:`tests.hub.release_layouts`). The local Hub
(:class:`~tests.recipes_offline.served_hub.ServedHub`, which also takes pushes) serves the stand-ins under the
releases' real repo ids. One child process runs ``phrasezoo convert <method> <repo id> <folder>`` on each and pushes
the exports plus a tiny export of every zoo model type. Then:

- each converted model's ``encode`` equals the authors' forward pass on the stand-in, to 1e-5;
- each export records its source and revision, credits the authors and keeps the licence, in safetensors only;
- in a fresh process where phrasezoo cannot be imported, ``AutoModel.from_pretrained(<repo id>,
  trust_remote_code=True)`` loads every pushed export and encodes, and the releases' user code runs verbatim (the
  brief's line on the converted PEARL-small stand-in pushed as ``org/pearl-small``); then the same again with
  ``HF_HUB_OFFLINE=1`` and the network refused, from the cache the first load filled.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from huggingface_hub import ModelCard
from safetensors.torch import load_file
from transformers import AutoModel

from phrasezoo.hub.convert import convert_release
from phrasezoo.zoo.registry import get_method, list_methods
from tests.recipes_offline.served_hub import ServedHub

from .hub_server import hub_python
from .release_layouts import standin_modules, write_files

STANDINS = standin_modules()
#: (method, release repo id): every published release, as the methods declare them
RELEASES = [(name, release.repo_id) for name in list_methods() for release in get_method(name).releases]
#: every zoo model type: (method, tiny variant) as the contract tests build them
TINY = [(name, None) for name in list_methods()] + [
    (name, variant) for name in list_methods() for variant in sorted(get_method(name).tiny_variants)
]

CONVERT_AND_PUSH = """
from phrasezoo.cli import main
from phrasezoo.hub.push import push_folder
out = {"codes": [main(["convert", method, repo, folder, "--repo-id", target])
                 for method, repo, folder, target in conversions],
       "pushed": {target: push_folder(folder, target).commit_oid for folder, target in pushes}}
"""
LOAD_BY_REPO_ID = """
import importlib.abc, socket
class BlockPhrasezoo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "phrasezoo" or name.startswith("phrasezoo."):
            raise ImportError("phrasezoo is blocked in this test")
sys.meta_path.insert(0, BlockPhrasezoo())
if block_network:
    def no_network(*args, **kwargs):
        raise OSError("network access attempted")
    socket.socket.connect = no_network
    socket.create_connection = no_network

from transformers import AutoModel
out = {"encoded": {}, "user_code": {}}
for repo, inputs in loads.items():
    inputs = [tuple(x) if isinstance(x, list) else x for x in inputs]
    out["encoded"][repo] = AutoModel.from_pretrained(repo, trust_remote_code=True).encode(inputs, batch_size=3).tolist()
for name, code in user_code.items():
    scope = {}
    exec(code, scope)
    out["user_code"][name] = scope["emb"].tolist()
out["phrasezoo_imported"] = any(m == "phrasezoo" or m.startswith("phrasezoo.") for m in sys.modules)
"""


def test_every_release_has_stand_ins():
    assert RELEASES, "no method declares a published release"
    for method, repo in RELEASES:
        assert method in STANDINS and repo in STANDINS[method].STANDINS, (
            f"{repo}: no stand-in in tests/methods/{method}"
        )


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The local Hub serving each stand-in under its release's repo id; the stand-ins also on disk (``releases``)."""
    root = tmp_path_factory.mktemp("convert")
    server = ServedHub()
    for method, repo in RELEASES:
        files = STANDINS[method].STANDINS[repo]()
        server.add(repo, files)
        write_files(root / "releases" / repo, files)
    server.root = root
    with server:
        yield server


@pytest.fixture(scope="module")
def pushed(hub):
    """Every release through ``phrasezoo convert``, and every export pushed, the converted ones and a tiny one of each
    zoo model type: ``{repo id: (folder, inputs)}``."""
    exports = hub.root / "exports"
    loads, conversions = {}, []
    for method, repo in RELEASES:
        target = STANDINS[method].PUSHED_AS[repo]
        conversions.append((method, repo, str(exports / target.replace("/", "--")), target))
        loads[target] = (exports / target.replace("/", "--"), STANDINS[method].INPUTS)
    for name, variant in TINY:
        method = get_method(name)
        folder = exports / f"tiny-{name}-{variant or 'default'}"
        model = method.tiny_model(variant).eval()
        model.save_pretrained(folder, safe_serialization=True)
        model.tokenizer.save_pretrained(folder)
        loads[f"org/tiny-{name}-{variant or 'default'}"] = (folder, method.sample_inputs)
    out = hub_python(hub, hub.root / "home-convert", CONVERT_AND_PUSH, timeout=600, conversions=conversions,
                     pushes=[(str(folder), repo) for repo, (folder, _) in loads.items()])  # fmt: skip
    assert out["codes"] == [0] * len(conversions)
    assert set(out["pushed"]) == set(loads)
    return loads


def _load(folder: Path):
    return AutoModel.from_pretrained(folder, trust_remote_code=True).eval()


@pytest.mark.parametrize(("method", "repo"), RELEASES, ids=[repo for _, repo in RELEASES])
def test_conversion_equals_the_authors_forward_pass(hub, pushed, method, repo):
    standins = STANDINS[method]
    folder, inputs = pushed[standins.PUSHED_AS[repo]]
    expected = standins.reference(hub.root / "releases" / repo, inputs)
    np.testing.assert_allclose(_load(folder).encode(inputs), expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize(("method", "repo"), RELEASES, ids=[repo for _, repo in RELEASES])
def test_export_credits_the_authors_and_records_the_source(hub, pushed, method, repo):
    release = next(r for r in get_method(method).releases if r.repo_id == repo)
    target = STANDINS[method].PUSHED_AS[repo]
    folder, _ = pushed[target]
    revision = hub.repos[repo].head.oid
    config = json.loads((folder / "config.json").read_text())
    assert config["converted_from"] == {"repo_id": repo, "revision": revision}
    assert set(config["auto_map"]) >= {"AutoConfig", "AutoModel"} and (folder / "model.safetensors").is_file()
    assert not [p.name for p in folder.iterdir() if p.suffix in (".bin", ".pt", ".pkl", ".pickle")]
    card = ModelCard.load(folder / "README.md")
    assert card.data.license == release.license and card.data.base_model == repo and "converted" in card.data.tags
    assert f"`{repo}` at revision\n`{revision}`" in card.text and f'from_pretrained("{target}"' in card.text
    assert release.paper.citation in card.text and release.paper.code in card.text
    assert all(item in card.text for item in release.missing)
    assert "not measurements of this conversion" in card.text


@pytest.mark.parametrize(("method", "repo"), RELEASES, ids=[repo for _, repo in RELEASES])
def test_a_local_copy_converts_to_the_same_weights(hub, pushed, method, repo, tmp_path):
    out = convert_release(method, str(hub.root / "releases" / repo), tmp_path / "local", source_repo=repo,
                          revision="abc123")  # fmt: skip
    assert json.loads((out / "config.json").read_text())["converted_from"] == {"repo_id": repo, "revision": "abc123"}
    local = load_file(out / "model.safetensors")
    from_hub = load_file(pushed[STANDINS[method].PUSHED_AS[repo]][0] / "model.safetensors")
    assert local.keys() == from_hub.keys() and all(torch.equal(local[k], from_hub[k]) for k in local)
    with pytest.raises(FileExistsError, match="--overwrite"):
        convert_release(method, str(hub.root / "releases" / repo), out, source_repo=repo)


@pytest.mark.parametrize("method", [m for m in list_methods() if not get_method(m).releases] or ["none"])
def test_methods_without_published_weights_are_refused(method, tmp_path, capsys):
    from phrasezoo.cli import main

    if method == "none":
        pytest.skip("every method has a published release")
    assert main(["convert", method, "org/anything", str(tmp_path / "out")]) == 2
    assert "has no published checkpoint to convert" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_every_model_type_loads_by_repo_id_without_phrasezoo_then_offline(hub, pushed):
    """Online from the local Hub into an empty cache, then ``HF_HUB_OFFLINE=1`` with sockets refused from that
    cache: both in fresh processes where phrasezoo cannot be imported, both equal to the exported folders."""
    loads = {repo: inputs for repo, (_, inputs) in pushed.items()}
    user_code = {m.__name__: m.USER_CODE for m in STANDINS.values() if hasattr(m, "USER_CODE")}
    home = hub.root / "home-user"
    online = hub_python(hub, home, LOAD_BY_REPO_ID, timeout=600, loads=loads, user_code=user_code,
                        block_network=False)  # fmt: skip
    offline = hub_python(hub, home, LOAD_BY_REPO_ID, env={"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": None}, timeout=600,
                         loads=loads, user_code=user_code, block_network=True)  # fmt: skip
    assert not online["phrasezoo_imported"] and not offline["phrasezoo_imported"]
    expected = {repo: _load(folder).encode(inputs, batch_size=3) for repo, (folder, inputs) in pushed.items()}
    for module in (m for m in STANDINS.values() if hasattr(m, "USER_CODE")):
        assert f'"{module.USER_REPO}"' in module.USER_CODE
        local = module.USER_CODE.replace(f'"{module.USER_REPO}"', repr(str(pushed[module.USER_REPO][0])))
        scope: dict = {}
        exec(local, scope)
        expected[module.__name__] = scope["emb"]
    for run in (online, offline):
        assert set(run["user_code"]) == set(user_code)
        for name, vectors in {**run["encoded"], **run["user_code"]}.items():
            np.testing.assert_allclose(vectors, expected[name], rtol=0, atol=1e-5, err_msg=name)


EVALUATE_BY_REPO_ID = """
from huggingface_hub import constants
from phrasezoo.evaluation.commands import main
out = {"online": main(online)}
constants.HF_HUB_OFFLINE = True  # the second run: offline, from the cache the first filled
out["cached"] = main(cached)
"""


def test_evaluate_takes_an_authors_repo_id_converts_it_and_names_its_results(hub, benchmarks_dir):
    """``phrasezoo evaluate --model <an authors' repo id>``: downloaded from the (local) Hub, converted, scored,
    results under the name the zoo table reads; then offline from the Hub cache."""
    from phrasezoo.evaluation.hub_model import authors_results_path

    method, repo = RELEASES[0]
    home, out = hub.root / "home-evaluate", hub.root / "evaluated"
    argv = ["evaluate", "--model", repo, "--tasks", "bird", "--benchmarks-dir", str(benchmarks_dir), "--no-progress"]
    runs = {"online": [*argv, "--output", str(out / "online.json")], "cached": [*argv, "--output", str(out / "c.json")]}
    codes = hub_python(hub, home, EVALUATE_BY_REPO_ID, timeout=300, **runs)
    assert codes == {"online": 0, "cached": 0}
    docs = [json.loads((out / name).read_text()) for name in ("online.json", "c.json")]
    assert docs[0]["model"] == repo and docs[0]["results"][0]["value"] == docs[1]["results"][0]["value"] is not None
    name = repo.split("/")[1]
    assert authors_results_path(repo) == Path("results", method.replace("_", "-"), f"authors-{name}.json")


def test_evaluate_by_repo_id_without_a_network_is_one_line_saying_what_to_do(tmp_path, monkeypatch, capsys):
    from huggingface_hub import constants

    from phrasezoo.evaluation.commands import main

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = RELEASES[0][1]
    assert main(["evaluate", "--model", repo, "--tasks", "bird", "--no-progress"]) == 2
    message = capsys.readouterr().err.strip()
    assert message.count("\n") == 0 and message.startswith(f"error: cannot download {repo}")
    assert "HF_HUB_OFFLINE" in message and "local folder" in message
    assert not (tmp_path / "hub").exists() or not list((tmp_path / "hub").rglob("config.json"))
