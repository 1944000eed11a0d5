"""Gradient accumulation on Phrase-BERT's task: its triplet loss is a mean over the batch, so 2 micro-batches of
B/2 accumulated must train exactly like one batch of B (``training.gradient_accumulation_steps``)."""

from __future__ import annotations

import pytest
import torch

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.methods.phrase_bert.task import PhraseBertTask
from phrasezoo.training.loop import RunOptions, train
from phrasezoo.zoo.registry import get_method

pytestmark = pytest.mark.usefixtures("one_thread")

PHRASES = ["new york times", "machine learning", "climate change", "public health", "united nations",
           "deep learning", "trade agreement", "political philosophy"]  # fmt: skip


def _phrase_bert():
    model = get_method("phrase_bert").tiny_model()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0  # dropout masks depend on the batch shape
    triples = [(p, p.title(), PHRASES[(i + 3) % 8]) for i, p in enumerate(PHRASES)]
    return model, PhraseBertTask(model, triples, [], normalize=True)


def test_two_micro_batches_of_half_train_like_one_batch(tmp_path, monkeypatch):
    """Phrase-BERT's triplet loss is a mean over the batch: 2 x B/2 accumulated equals 1 x B, step after step (the
    gradients each optimizer step sees, since Adam would hide a wrong scale, and the final weights)."""
    from phrasezoo.training import loop as trainer

    base = {
        "batch_size": 4,
        "max_steps": 3,
        "learning_rate": 1e-3,
        "seed": 1,
        "checkpoint_every": 10,
        "log_every": 1,
        "max_grad_norm": None,
    }  # clipping would hide a wrong scale too
    runs, gradients = {}, {1: [], 2: []}
    make_optimizer = trainer._make_optimizer
    for steps in (1, 2):

        def recording(cfg, params, seen=gradients[steps]):
            optimizer = make_optimizer(cfg, params)
            step = optimizer.step

            def step_and_record(*args, **kwargs):
                seen.append([p.grad.clone() for g in optimizer.param_groups for p in g["params"] if p.grad is not None])
                return step(*args, **kwargs)

            optimizer.step = step_and_record
            return optimizer

        monkeypatch.setattr(trainer, "_make_optimizer", recording)
        model, task = _phrase_bert()
        cfg = TrainingConfig(**base, gradient_accumulation_steps=steps)
        runs[steps] = train(model, task, cfg, RunOptions(tmp_path / str(steps), progress=False))
    assert len(gradients[1]) == len(gradients[2]) == 3
    for one_step, two_steps in zip(gradients[1], gradients[2]):
        assert len(one_step) == len(two_steps) > 0
        for a, b in zip(one_step, two_steps):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-7)
    one, two = (runs[s].model.state_dict() for s in (1, 2))
    assert runs[2].steps == 3 and runs[1].last_losses["loss"] > 0
    assert runs[2].last_losses["loss"] == pytest.approx(runs[1].last_losses["loss"], rel=1e-5)
    changed = [k for k in one if not torch.equal(one[k], get_method("phrase_bert").tiny_model().state_dict()[k])]
    assert changed  # the runs trained
    for key in one:
        torch.testing.assert_close(two[key], one[key], rtol=1e-5, atol=1e-6, msg=key)
