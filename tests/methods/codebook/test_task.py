"""Codebook training task: batches, the NNSC loss through the shared trainer, learning, and exact resume."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.methods.codebook import data as cb
from phrasezoo.methods.codebook.build import build_model
from phrasezoo.methods.codebook.task import CodebookTask
from phrasezoo.training.loop import RunOptions, TrainingInterrupted, train

from .test_data import CORPUS, GUARDED

TINY = dict(d_model=16, n_heads=2, ffn_dim=32, encoder_layers=1, decoder_layers=1, n_facets=3, dropout=0.0,
            input_dropout=0.0, positional_dropout=0.0)  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory, benchmarks_dir):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf8")
    return cb.build_codebook_data("sentence", corpus=str(path), benchmarks_dir=str(benchmarks_dir),
                                  guard_benchmarks=GUARDED, valid_percent=0.0, cache=False, progress=False)  # fmt: skip


def fresh_model(built):
    return build_model(built.vocabulary, "glove-6b-50d", "sentence", seed=0, **TINY)


def test_batch_holds_tokens_and_target_rows(built):
    model = fresh_model(built)
    task = CodebookTask(model, built.split("train"))
    batch = task.make_batch([0, 1, 2], random.Random(0))
    assert batch["input_ids"].shape[0] == 3 and batch["target_mask"].dtype == torch.bool
    index = model.target_word_index()
    words = {w for w, i in index.items()}
    for row in range(3):
        ids = batch["target_ids"][row][batch["target_mask"][row]].tolist()
        assert ids == [index[w] for w in task.targets[row] if w in words]
        assert (batch["target_ids"][row][~batch["target_mask"][row]] == 0).all()
    # every input ends with <eos> at its last real position
    last = batch["attention_mask"].sum(1) - 1
    assert (batch["input_ids"][torch.arange(3), last] == model.config.eos_token_id).all()


def test_empty_training_split_is_a_clear_error(built):
    with pytest.raises(ValueError, match="training split is empty"):
        CodebookTask(fresh_model(built), built.examples.select([]))


def test_training_lowers_the_loss_and_resumes_exactly(built, tmp_path: Path):
    cfg = TrainingConfig(batch_size=8, max_steps=40, learning_rate=3e-3, optimizer="adamw", scheduler="constant",
                         checkpoint_every=20, log_every=1, seed=3)  # fmt: skip
    model = fresh_model(built)
    task = CodebookTask(model, built.split("train"))
    result = train(model, task, cfg, RunOptions(tmp_path / "a", progress=False))
    logs = [__import__("json").loads(line) for line in (tmp_path / "a" / "train_log.jsonl").read_text().splitlines()]
    first, last = sum(r["loss_pos"] for r in logs[:5]) / 5, sum(r["loss_pos"] for r in logs[-5:]) / 5
    assert last < first - 0.05  # the own co-occurring words get reconstructed better
    assert all(r["loss_pos"] <= 1.0 + 1e-6 for r in logs)  # an exact E-step never does worse than M = 0

    short = TrainingConfig(**{**cfg.__dict__, "max_steps": 6, "checkpoint_every": 3})
    whole = fresh_model(built)
    train(whole, CodebookTask(whole, built.split("train")), short, RunOptions(tmp_path / "b", progress=False))
    broken = fresh_model(built)
    with pytest.raises(TrainingInterrupted):
        train(broken, CodebookTask(broken, built.split("train")), short, RunOptions(tmp_path / "c", stop_after_steps=4, progress=False))  # fmt: skip
    resumed = fresh_model(built)
    out = train(resumed, CodebookTask(resumed, built.split("train")), short, RunOptions(tmp_path / "c", progress=False))
    assert out.resumed_from == 3
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, msg=name)
    assert result.steps == 40
