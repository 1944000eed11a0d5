"""``phrasezoo push`` against a local Hub (:mod:`tests.hub.hub_server`): a real export of a released checkpoint,
laid out as a soup release with its training state beside it, goes up in one commit with exactly the exported files;
its card's eval results read back through huggingface_hub; an unchanged push makes no commit.

huggingface_hub reads ``HF_ENDPOINT`` when it is imported, so every Hub call runs in a child process with the local
endpoint in its environment (:func:`~tests.hub.hub_server.hub_python` for the library calls, ``python -m
phrasezoo.cli`` for the CLI).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from huggingface_hub.utils import filter_repo_objects

from phrasezoo.hub.push import IGNORE_PATTERNS, plan_push

from .hub_server import FakeHub, git_oid, hub_env, hub_python

ROOT = Path(__file__).resolve().parents[2]
#: the first released checkpoint of the zoo table, with its committed results (as tests/hub/test_card.py)
ZOO_ROW = yaml.safe_load((ROOT / "docs" / "blocks.yaml").read_text())["zoo"][0]


@pytest.fixture(scope="module")
def hub():
    with FakeHub() as server:
        yield server


PUSH = """
from phrasezoo.hub.push import push_folder
result = push_folder(folder, repo_id)
out = {"committed": result.committed, "commit": result.commit_oid, "deleted": result.deleted}
"""
READ_BACK = """
import dataclasses
from huggingface_hub import HfApi, ModelCard
from huggingface_hub.hf_api import RepoFile
api = HfApi()
info = api.model_info(repo_id)
out = {
    "commits": [c.title for c in api.list_repo_commits(repo_id)],
    "head": info.sha,
    "files": {f.path: (f.lfs.sha256 if f.lfs else f.blob_id)
              for f in api.list_repo_tree(repo_id, recursive=True) if isinstance(f, RepoFile)},
    "card_eval": [dataclasses.asdict(r) for r in ModelCard.load(repo_id).data.eval_results or []],
    "info_eval": [dataclasses.asdict(r) for r in info.card_data.eval_results or []],
}
"""


def local_ids(folder: Path, files: list[str]) -> dict[str, str]:
    """What the Hub's tree reports for each file: sha256 for LFS files (safetensors here), git's blob id otherwise."""
    import hashlib

    def oid(path: Path) -> str:
        data = path.read_bytes()
        return hashlib.sha256(data).hexdigest() if path.suffix == ".safetensors" else git_oid(data)

    return {f: oid(folder / f) for f in files}


def add_soup_training_state(folder: Path, model) -> None:
    """What training leaves beside an export of a soup release, written by the training code itself: two seeds'
    runs under ``ingredients/seed-*`` (checkpoints with optimizer state, logs), the soup checkpoint, the run log,
    a scratch folder of an interrupted export and the bytecode of the copied model code."""
    import torch

    from phrasezoo.training.checkpoint import save_checkpoint, save_state_dict
    from phrasezoo.training.soup import write_soup_checkpoint

    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    runs = []
    for seed in (42, 7):
        run = folder / "ingredients" / f"seed-{seed}"
        (run / "checkpoints").mkdir(parents=True)
        save_state_dict(state, run / "checkpoints" / "initial.safetensors")
        optimizer = torch.optim.Adam([next(model.parameters())], lr=1e-3)
        save_checkpoint(run / "checkpoints", 3, state, optimizer, extra={"seed": seed})
        (run / "train_log.jsonl").write_text('{"step": 3, "loss": 0.5}\n')
        (run / "ingredient.log").write_text("training seed\n")
        (run / "ingredient.json").write_text(json.dumps({"seed": seed}))
        runs.append(run)
    write_soup_checkpoint(runs, folder)
    (folder / "train_log.jsonl").write_text('{"step": 3}\n')
    (folder / ".export-abc123").mkdir()
    (folder / ".export-abc123" / "model.safetensors").write_bytes(b"half written")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "modeling.cpython-311.pyc").write_bytes(b"\0")


@pytest.fixture(scope="module")
def soup_release(tmp_path_factory) -> tuple[Path, list[str], list]:
    """A real export (tiny model, the committed results in its card) with a soup's training state beside it; the
    exported files (listed before the training state was added) and the card's model-index entries."""
    import dataclasses

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.hub.export import export_model
    from phrasezoo.pipeline import card_results
    from phrasezoo.zoo.registry import get_method

    folder = tmp_path_factory.mktemp("release") / ZOO_ROW["checkpoint"]
    recipe = load_recipe(ZOO_ROW["checkpoint"])
    doc = json.loads((ROOT / ZOO_ROW["runs"][0]).read_text())
    card = card_results(recipe, doc, [json.loads((ROOT / ZOO_ROW["backbone"]).read_text())])
    model = get_method(recipe.method).tiny_model()
    export_model(model, folder, recipe, {"steps": 3, "seed": 42}, card)
    exported = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    add_soup_training_state(folder, model)
    return folder, exported, [dataclasses.asdict(r) for r in card.model_index]


def test_ignore_patterns_match_at_any_depth_with_huggingface_hubs_filter():
    paths = ["config.json", "model.safetensors", "README.md", "1_Pooling/config.json", "train_log.jsonl",
             "checkpoints/latest", "checkpoints/step-000003/optimizer.safetensors",
             "ingredients/seed-42/checkpoints/step-000003/model.safetensors", "ingredients/seed-42/ingredient.log",
             "ingredients/seed-42/train_log.jsonl", "a/b/checkpoints/step-1/model.safetensors", "a/train_log.jsonl",
             "a/optimizer.pt", "x/trainer_state.json", "sub/run.log", ".export-1/model.safetensors",
             "sub/.pntm-9/pntm.json", "__pycache__/m.cpython-311.pyc", "sub/__pycache__/m.pyc", "sub/notes.txt~",
             ".git/HEAD", "sub/.DS_Store"]  # fmt: skip
    kept = list(filter_repo_objects(paths, ignore_patterns=IGNORE_PATTERNS))
    assert kept == ["config.json", "model.safetensors", "README.md", "1_Pooling/config.json"]


def test_plan_of_a_soup_release_is_the_export(soup_release):
    folder, exported, _ = soup_release
    plan = plan_push(folder)
    assert plan.kind.name == "transformers model"
    assert plan.files == exported
    assert any(f.startswith("ingredients/seed-7/checkpoints/") and "optimizer" in f for f in plan.ignored)
    assert {"checkpoints/latest", "train_log.jsonl", ".export-abc123/model.safetensors"} <= set(plan.ignored)


def test_push_one_commit_exact_files_eval_results_read_back_and_no_op_second_push(hub, soup_release, tmp_path):
    folder, exported, model_index = soup_release
    repo_id = f"phrasezoo-test/{folder.name}"
    start = len(hub.log)
    first = hub_python(hub, tmp_path / "hf1", PUSH, folder=str(folder), repo_id=repo_id)
    assert first["committed"] and first["deleted"] == []
    back = hub_python(hub, tmp_path / "hf2", READ_BACK, repo_id=repo_id)
    assert back["commits"] == ["Upload transformers model with phrasezoo", "initial commit"]  # one commit, newest first
    assert back["head"] == first["commit"]
    assert set(back["files"]) == {*exported, ".gitattributes"}  # exactly the export: no training state, no scratch
    assert {f: back["files"][f] for f in exported} == local_ids(folder, exported)  # with the exported contents
    uploaded = {path.split("/")[2] for method, path in hub.log[start:] if method == "PUT"}  # /lfs-objects/<oid>/..
    assert uploaded == {back["files"][f] for f in exported if f.endswith(".safetensors")}  # no training state sent
    assert model_index and back["card_eval"] == model_index  # the card's metadata reads back as the same results
    assert back["info_eval"] == model_index

    second = hub_python(hub, tmp_path / "hf3", PUSH, folder=str(folder), repo_id=repo_id)
    assert not second["committed"] and second["commit"] == first["commit"]
    assert len(hub.repos[repo_id].commits) == 2  # the server saw no commit at all, not even an empty one


def test_a_re_export_without_a_file_deletes_it_remotely(hub, tmp_path):
    folder = tmp_path / "st-model"
    folder.mkdir()
    for name in ("modules.json", "config_sentence_transformers.json", "config.json", "tokenizer.json"):
        (folder / name).write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights v1")
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    assert plan_push(folder).kind.name == "sentence-transformers model"
    repo_id = "phrasezoo-test/st-model"
    hub_python(hub, tmp_path / "hf", PUSH, folder=str(folder), repo_id=repo_id)
    (folder / "1_Pooling" / "config.json").unlink()
    (folder / "model.safetensors").write_bytes(b"weights v2")
    again = hub_python(hub, tmp_path / "hf", PUSH, folder=str(folder), repo_id=repo_id)
    assert again["committed"] and again["deleted"] == ["1_Pooling/config.json"]
    head = hub.repos[repo_id].head.files
    assert "1_Pooling/config.json" not in head and head["model.safetensors"].data == b"weights v2"
    assert len(hub.repos[repo_id].commits) == 3


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"notes.txt": "x"}, "is not an exported folder"),
        ({"config.json": "{}", "README.md": "card"}, "holds no weights"),
        ({"config.json": "{}", "model.safetensors": "w", "pytorch_model.bin": "p"}, "pickled"),
        ({"config.json": "{}", "model.safetensors": "w", "README.md": "---\nkey: [unclosed\n---\ntext"}, "metadata"),
        ({"checkpoints/step-000001/model.safetensors": "w", "config.json": "{}"}, "holds no weights"),
    ],
    ids=["not-an-export", "no-weights", "pickle", "bad-card", "weights-only-in-checkpoints"],
)
def test_plan_refuses_what_is_not_a_publishable_export(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    with pytest.raises((FileNotFoundError, ValueError), match=message):
        plan_push(tmp_path)


def test_cli_errors_and_dry_run(tmp_path, capsys, soup_release):
    from phrasezoo.cli import main

    assert main(["push", str(tmp_path), "--repo-id", "me/x"]) == 2
    assert "is not an exported folder" in capsys.readouterr().err
    folder, exported, _ = soup_release
    assert main(["push", str(folder), "--repo-id", "me/x", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{len(exported)} files" in out and "skip    ingredients/seed-42/checkpoints/" in out
    assert all(f"upload  {f}" in out for f in exported)


@pytest.mark.slow
def test_cli_pushes_and_reports(hub, soup_release, tmp_path):
    """``phrasezoo push`` itself (a child process, as a user runs it): the commit URL, then "up to date"."""
    folder, exported, _ = soup_release
    command = [sys.executable, "-m", "phrasezoo.cli", "push", str(folder), "--repo-id", "phrasezoo-test/cli"]
    env = hub_env(hub, tmp_path / "hf")
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"{hub.url}/phrasezoo-test/cli/commit/" in first.stdout
    no_token = subprocess.run(command, env={**env, "HF_TOKEN": "hf_wrong"}, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
    assert no_token.returncode == 2 and "HF_TOKEN" in no_token.stderr and "Traceback" not in no_token.stderr
