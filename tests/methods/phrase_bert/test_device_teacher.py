"""Phrase-BERT with its teacher term through the GPU job: the lazy teacher's rows that the planned run draws travel
as arrays, and the run trains with them on a machine that has no teacher encoder (pack -> run in a fresh process
where ``phrasezoo.encoders`` and the data libraries cannot be imported)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import phrasezoo.gpu_job.pack as pack_module
from phrasezoo.core.recipes import load_recipe
from phrasezoo.gpu_job.codec import read_task_state
from phrasezoo.gpu_job.pack import build_pack
from phrasezoo.methods.phrase_bert.task import PhraseBertTask
from phrasezoo.objectives.teacher import teacher_embeddings
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.training.loop import seed_everything
from tests.methods.phrase_bert.test_model import CONTEXTS, PARAPHRASES, tiny_model

REPO_ROOT = Path(__file__).resolve().parents[3]
NEVER_DRAWN = ["a phrase no batch draws", "another phrase no batch draws"]  # in the teacher's set, not in a triple
OVERRIDES = [
    "training.max_steps=3",
    "training.batch_size=2",
    "training.soup_seeds=[1, 2]",
    "training.mixed_precision='no'",
    "training.warmup_ratio=0.0",
    "training.checkpoint_every=100",
    "training.log_every=1",
    "training.method_args.lexicon_weight=0.0",
    "training.method_args.teacher=minilm-l6",
]
BLOCKER = """\
import sys
for name in ("phrasezoo.encoders", "sentence_transformers"):
    sys.modules[name] = None  # no teacher encoder on the GPU machine: loading one fails here
"""


def _phrases() -> list[str]:
    return sorted({t for triple in PARAPHRASES for t in triple} | {t[0] for t in CONTEXTS} | set(NEVER_DRAWN))


def _built(cfg):
    """``[(seed, model, task)]`` as ``build_models_and_tasks`` returns them, on the tiny model and a lazy teacher
    (the embedded MiniLM, rows embedded when first used), without the data builders (spaCy, GloVe)."""
    built = []
    for seed in cfg.training.soup_seeds:
        seed_everything(seed)
        model = tiny_model()
        teacher = teacher_embeddings(_phrases(), "minilm-l6", progress=False)
        assert teacher.lazy
        task = PhraseBertTask(model, PARAPHRASES, CONTEXTS, terms=TeacherTerms(distill_weight=50.0, teacher=teacher))
        built.append((seed, model, task))
    return built


@pytest.fixture(scope="module")
def trip(tmp_path_factory):
    root = tmp_path_factory.mktemp("device-teacher")
    patch = pytest.MonkeyPatch()
    patch.setenv("PHRASEZOO_CACHE", str(root / "cache"))
    patch.setattr(pack_module, "build_models_and_tasks", lambda cfg, progress=True: _built(cfg))
    try:
        cfg = load_recipe("phrase-bert-mini", OVERRIDES)
        manifest = build_pack(cfg, OVERRIDES, root / "pack", progress=False, extra={"device_minutes": 5.0})
        lazy = _built(cfg)[0][2]  # the task a CPU run trains: its rows from the teacher cache, by content
    finally:
        patch.undo()
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {
        **os.environ,
        "PYTHONPATH": f"{site}{os.pathsep}{REPO_ROOT / 'src'}",
        "PHRASEZOO_CACHE": str(root / "empty-cache"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [sys.executable, "-m", "phrasezoo.gpu_job", "run", str(root / "pack"), "--out", str(root / "out")]
    done = subprocess.run([*command, "--device", "cpu", "--forbid-imports"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"root": root, "manifest": manifest, "lazy": lazy}


def test_the_drawn_teacher_rows_travel_and_no_others(trip):
    (facts,) = trip["manifest"]["teacher_rows"]
    assert facts["attribute"] == "terms.teacher" and facts["teacher"] == "minilm-l6" and facts["of"] == len(_phrases())
    assert 0 < facts["rows"] <= len(_phrases()) - len(NEVER_DRAWN)
    back = read_task_state(trip["root"] / "pack", tiny_model())
    assert not back.terms.teacher.lazy and len(back.terms.teacher) == len(
        _phrases()
    )  # the whole index: batches unchanged
    with pytest.raises(LookupError, match="not carried"):
        back.terms.teacher.lookup(NEVER_DRAWN)


def test_the_packed_task_trains_as_the_lazy_one(trip):
    """Every step of the planned run: the same batches, the same teacher rows and the same loss, bit for bit."""
    lazy = trip["lazy"]
    model = lazy.model
    back = read_task_state(trip["root"] / "pack", model)
    model.eval()
    for step in range(trip["manifest"]["steps_per_seed"]):
        indices = [(2 * step + i) % lazy.num_examples() for i in range(2)]
        ours, theirs = lazy.make_batch(indices, random.Random(step)), back.make_batch(indices, random.Random(step))
        assert ours["phrases"] == theirs["phrases"]
        rows, found = lazy.terms.teacher.lookup(ours["phrases"])
        again, found_again = back.terms.teacher.lookup(theirs["phrases"])
        assert torch.equal(found, found_again) and torch.equal(rows, again)
        with torch.no_grad():
            assert torch.equal(lazy.compute_loss(model, ours)[0], back.compute_loss(model, theirs)[0])


def test_the_run_distills_without_the_teacher_encoder(trip):
    out = trip["root"] / "out"
    record = json.loads((out / "run_manifest.json").read_text())
    assert record["problems"] == [] and [r["steps"] for r in record["runs"]] == [3, 3]
    losses = json.loads((out / "loss_log.json").read_text())
    assert len(losses) == 6 and all(r["distill"] > 0 for r in losses)
    assert not (trip["root"] / "empty-cache" / "teacher").exists()  # nothing embedded there


def test_a_pack_too_large_says_how_many_teacher_rows_it_carries(tmp_path, monkeypatch):
    from phrasezoo.gpu_job.travel import PackTooLarge

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pack_module, "build_models_and_tasks", lambda cfg, progress=True: _built(cfg))
    cfg = load_recipe("phrase-bert-mini", OVERRIDES)
    with pytest.raises(PackTooLarge, match="teacher rows, those the planned run draws"):
        build_pack(cfg, OVERRIDES, tmp_path / "pack", row_cut="off", max_mib=0.01, progress=False)
