"""The GPU job's round trip on CPU (pack -> run in a fresh process without datasets/spaCy/faiss -> unpack into an
exported model), on the tiny recipe ``tests/gpu_job/device_tiny.yaml``; the same code path a GPU lease runs."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import load_file

from phrasezoo.core.recipes import load_recipe
from phrasezoo.gpu_job.calls import run_call, selftest
from phrasezoo.gpu_job.commands import main as device_main
from phrasezoo.gpu_job.pack import build_pack
from phrasezoo.gpu_job.travel import RETURN_FILE_MIB, RETURN_FILES, MiB, read_manifest
from phrasezoo.gpu_job.weights import untouched_row_factor
from phrasezoo.training.loop import RunOptions

REPO_ROOT = Path(__file__).resolve().parents[2]
RECIPE = Path(__file__).with_name("device_tiny.yaml")
CORPUS = REPO_ROOT / "tests" / "training" / "device_tiny_corpus.txt"  # 12 short documents, one a line
BLOCKER = """\
import atexit, json, os, sys
BLOCKED = ("datasets", "spacy", "faiss")
for name in BLOCKED:
    sys.modules[name] = None  # as on the GPU machine: import fails, find_spec returns None
atexit.register(lambda: open(os.environ["BLOCK_REPORT"], "w").write(
    json.dumps({n: sys.modules.get(n, "gone") is None for n in BLOCKED})))
"""


@pytest.fixture(scope="module")
def trip(tmp_path_factory, benchmarks_dir):
    """Pack the tiny recipe and run it on CPU in a subprocess where the data libraries cannot be imported."""
    root = tmp_path_factory.mktemp("device")
    overrides = [f"data.corpus={CORPUS}", f"data.benchmarks_dir={benchmarks_dir}"]
    cfg = load_recipe(RECIPE, overrides)
    extra = {"recipe_source": str(RECIPE), "device_minutes": 5.0}
    manifest = build_pack(cfg, overrides, root / "pack", row_cut="on", progress=False, extra=extra)

    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    report = root / "blocked.json"
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO_ROOT / 'src'}", "BLOCK_REPORT": str(report)}
    out = root / "out"
    command = [
        sys.executable,
        "-m",
        "phrasezoo.gpu_job",
        "run",
        str(root / "pack"),
        "--out",
        str(out),
        "--device",
        "cpu",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {"root": root, "manifest": manifest, "out": out, "blocked": json.loads(report.read_text()), "cfg": cfg}


def test_pack_records_what_was_packed(trip):
    manifest = read_manifest(trip["root"] / "pack")
    assert manifest["recipe_name"] == "device-tiny" and manifest["seeds"] == [1, 2]
    assert manifest["steps_per_seed"] == 6 and manifest["steps"] == 12 and len(manifest["data_fingerprint"]) == 64
    assert manifest["overrides"][0].startswith("data.corpus=") and "commit" in manifest
    cut = manifest["row_cut"]
    assert cut["rows"] < cut["of"] and "word_embeddings.weight" in cut["tensors"]
    assert not (trip["root"] / "pack" / "weights.safetensors").exists()  # it travels gzipped
    with gzip.open(trip["root"] / "pack" / "weights.safetensors.gz", "rb") as handle:
        weights = load_safetensors(handle.read())
    assert weights["word_embeddings.weight"].dtype == torch.float16
    assert weights["word_embeddings.weight"].shape[0] == cut["rows"]
    assert weights["word_probs"].dtype == torch.float32  # fp16 would flush p(w) of rare words to zero
    assert manifest["seed_weights"]["2"]["tensors"]  # seed 2 initialises its own facet maps


def test_run_needs_no_data_library_and_returns_what_fits(trip):
    assert trip["blocked"] == {"datasets": True, "spacy": True, "faiss": True}
    files = sorted(p for p in trip["out"].iterdir())
    assert len(files) + 1 <= RETURN_FILES  # + run.log of the tee in the lease's command
    assert all(p.stat().st_size <= RETURN_FILE_MIB * MiB and re.fullmatch(r"[A-Za-z0-9._-]+", p.name) for p in files)
    record = json.loads((trip["out"] / "run_manifest.json").read_text())
    assert record["device"] == "cpu" and record["problems"] == [] and record["recipe_steps"]
    assert [r["steps"] for r in record["runs"]] == [6, 6] and record["versions"]["torch"] == torch.__version__
    losses = json.loads((trip["out"] / "loss_log.json").read_text())
    assert [(r["seed"], r["step"]) for r in losses] == [(s, k) for s in (1, 2) for k in range(1, 7)]
    assert all(r["seconds"] >= 0 and "loss" in r and "lr" in r for r in losses)


def test_unpack_exports_a_model_that_loads_and_says_where_it_trained(trip, tmp_path, monkeypatch):
    from transformers import AutoModel

    from phrasezoo.train import train_and_export

    monkeypatch.chdir(tmp_path)
    assert device_main(["unpack", str(trip["out"]), "--no-eval", "--no-progress"]) == 0
    folder = tmp_path / "outputs" / "device-tiny"
    model = AutoModel.from_pretrained(str(folder), trust_remote_code=True)
    assert model.facets(["fresh cod", "solar cells"]).shape[:2] == (2, 3)
    card = (folder / "README.md").read_text()
    assert "by the GPU job (phrasezoo device run)" in card and "6 + 6 steps" in card
    assert "vocabulary rows" in card and (folder / "device_loss_log.json").exists()
    state = json.loads((folder / "checkpoints" / "step-000006" / "trainer_state.json").read_text())
    assert state["step"] == 6 and "soup" in state

    # the same recipe trained here by `phrasezoo train`: rows no batch reads end where the replayed weight decay
    # puts them, the trained rows where the CPU run puts them (up to the fp16 start and return)
    cfg = trip["cfg"]
    train_and_export(cfg, RunOptions(tmp_path / "cpu-run", progress=False), card=False)
    cpu = load_file(str(tmp_path / "cpu-run" / "model.safetensors"))
    gpu_job = load_file(str(folder / "model.safetensors"))
    rows = load_file(str(trip["root"] / "pack" / "rows.safetensors"))["rows"]
    untouched = torch.ones(cpu["word_embeddings.weight"].shape[0], dtype=torch.bool)
    untouched[rows] = False
    assert untouched.any()
    assert torch.allclose(gpu_job["word_embeddings.weight"][untouched], cpu["word_embeddings.weight"][untouched],
                          atol=1e-6)  # fmt: skip
    assert torch.allclose(gpu_job["word_embeddings.weight"][rows], cpu["word_embeddings.weight"][rows], atol=2e-2)
    for name in ("facet_maps.weight", "output_projection.weight"):
        assert torch.allclose(gpu_job[name], cpu[name], atol=2e-2), name
    assert untouched_row_factor(cfg.training, "word_embeddings.weight", 6, 6) < 1.0  # the decay is not a no-op

    # a checkpoint without optimizer state is a finished model: resuming it is refused with advice
    single = dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, soup_seeds=None))
    with pytest.raises(ValueError, match="not a run to resume"):
        train_and_export(single, RunOptions(progress=False), card=False)


def test_unpack_refuses_a_candidate_that_does_not_beat_its_recipe_on_dev(trip, tmp_path, monkeypatch):
    import phrasezoo.evaluation.dev.comparison as comparison

    monkeypatch.chdir(tmp_path)
    released = tmp_path / "outputs" / "device-tiny"
    released.mkdir(parents=True)
    (released / "config.json").write_text("{}")  # an earlier release of this recipe
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "device-tiny.json").write_text('{"released": true}')
    monkeypatch.setattr(comparison, "rule_scores", lambda cfg, progress=True: ("device-mini", [], {}, "results/"))
    monkeypatch.setattr(
        comparison, "compare_on_dev", lambda cfg, *a, **k: {"beats": False, "verdict": "0.1 vs 0.2: does not beat it"}
    )
    assert device_main(["unpack", str(trip["out"]), "--no-progress"]) == 3
    assert (released / "config.json").read_text() == "{}"  # the release is back in place, untouched
    assert (tmp_path / "results" / "device-tiny.json").read_text() == '{"released": true}'
    rejected = tmp_path / "outputs" / "device-tiny.rejected"
    assert (rejected / "model.safetensors").exists() and not (tmp_path / "outputs" / "device-tiny.previous").exists()


def test_a_failed_unpack_leaves_the_released_model_in_place(trip, tmp_path, monkeypatch):
    import phrasezoo.evaluation.dev.comparison as comparison

    monkeypatch.chdir(tmp_path)
    released = tmp_path / "outputs" / "device-tiny"
    released.mkdir(parents=True)
    (released / "config.json").write_text("{}")

    def missing(*args, **kwargs):
        raise FileNotFoundError("No dev scores of the CPU recipe")

    monkeypatch.setattr(comparison, "rule_scores", lambda cfg, progress=True: ("device-mini", [], {}, "results/"))
    monkeypatch.setattr(comparison, "compare_on_dev", missing)
    with pytest.raises(FileNotFoundError, match="No dev scores"):
        device_main(["unpack", str(trip["out"]), "--no-progress"])
    assert sorted(p.name for p in (tmp_path / "outputs").iterdir()) == ["device-tiny"]
    assert [p.name for p in released.iterdir()] == ["config.json"]


def test_unpack_checks_the_returned_files(trip, tmp_path):
    broken = tmp_path / "out"
    shutil.copytree(trip["out"], broken)
    shard = next(broken.glob("weights-*.safetensors"))
    shard.write_bytes(shard.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(ValueError, match="differs from the run manifest"):
        device_main(["unpack", str(broken), "--no-eval"])
    (broken / "run_manifest.json").unlink()
    with pytest.raises(FileNotFoundError, match="files_at"):
        device_main(["unpack", str(broken), "--no-eval"])


def test_the_self_test_trains_the_pack_with_the_data_libraries_forbidden(trip):
    """``pack`` and ``call`` run the pack for a few steps in a fresh ``python -m phrasezoo.gpu_job run
    --forbid-imports`` process on this CPU, with an empty data cache: what the lease runs, shortened."""
    test = selftest(trip["root"] / "pack", steps=2)
    assert test["steps per seed"] == 2 and test["cpu seconds per step"] > 0 and test["torch threads"] == 1


def test_run_refuses_more_steps_than_the_pack_planned(trip, tmp_path):
    with pytest.raises(SystemExit, match="1..6"):
        device_main(["run", str(trip["root"] / "pack"), "--out", str(tmp_path), "--device", "cpu", "--max-steps", "7"])


def test_the_run_call_fits_the_tool():
    call = run_call(".devicepack/some-recipe")
    assert len(call["command"]) <= 2000 and call["carry"] == [".devicepack/some-recipe"]
    assert (
        "--out $OUT" in call["command"] and "tee $OUT/run.log" in call["command"] and "--device cuda" in call["command"]
    )
    assert call["timeout_s"] <= 600 and "PYTHONPATH=src" in call["command"]


def test_gpu_recipes_train_10_to_20_times_their_cpu_recipes_steps():
    from phrasezoo.core.recipes import list_recipes

    gpu = [load_recipe(name) for name in list_recipes()]
    gpu = [cfg for cfg in gpu if cfg.eval.get("beat_on_dev")]
    assert len(gpu) >= 4
    for cfg in gpu:
        cpu = load_recipe(cfg.eval["beat_on_dev"]["recipe"])
        assert cpu.method == cfg.method and cpu.name != cfg.name
        assert 10 <= cfg.training.max_steps / cpu.training.max_steps <= 20, cfg.name


def test_the_docs_hold_each_gpu_recipes_call_and_the_lease_plan():
    from phrasezoo.core.recipes import list_recipes
    from phrasezoo.gpu_job.commands import PACKS_RECORD
    from phrasezoo.gpu_job.table import render_packs

    docs = (REPO_ROOT / "docs" / "gpu-job.md").read_text()
    gpu = sorted(name for name in list_recipes() if load_recipe(name).eval.get("beat_on_dev"))
    records = json.loads((REPO_ROOT / PACKS_RECORD).read_text())
    assert sorted(records) == gpu
    assert render_packs(records) in docs  # the block is the record's, regenerated
    for name in gpu:
        call = run_call(f".devicepack/{name}")
        assert json.dumps(call, indent=1) in docs and records[name]["call"] == call
        assert records[name]["pack_mib"] <= 55 and records[name]["pack_mib"] + records[name]["repository_mib"] <= 64
        # the prepared sequence, in order: pack and check here, the CPU recipe's dev scores, the call, unpack, table
        section = docs.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
        cpu = load_recipe(name).eval["beat_on_dev"]["recipe"]
        steps = [
            f"phrasezoo device pack {name}",
            f"phrasezoo device call .devicepack/{name}",
            f"phrasezoo dev-eval --model outputs/{cpu} ",
            json.dumps(call, indent=1),
            f"phrasezoo device unpack <files_at> --recipe {name} ",
            f"scripts/blocks.py --write {name}-results zoo",
        ]
        places = [section.find(step) for step in steps]
        assert -1 not in places and places == sorted(places), (name, places)
        assert f"<!-- {name}-results:start -->" in docs  # the block the last step writes, registered:
        assert f"--block {name}-results" in (REPO_ROOT / "docs" / "blocks.yaml").read_text()
    plan = docs.split("## The lease plan", 1)[1].split("\n## ", 1)[0]
    fired = re.findall(r"^\d+\. \*\*([a-z0-9-]+)\*\*", plan, flags=re.MULTILINE)
    assert sorted(fired) == gpu  # every GPU recipe has its place in the order the leases fire them
    assert "give_back" in plan
