"""Gradient accumulation (``training.gradient_accumulation_steps``) and the fp16 guard of the training loop (the
equivalence of 2 x B/2 and 1 x B is tested on Phrase-BERT's triplet loss: ``tests/methods/phrase_bert/test_accumulation.py``)."""

from __future__ import annotations

import pytest
import torch

from phrasezoo.core.errors import InputError
from phrasezoo.core.recipes import TrainingConfig, recipe_from_dict
from phrasezoo.training.loop import RunOptions, effective_mixed_precision, plan_steps, train
from phrasezoo.zoo.registry import get_method

pytestmark = pytest.mark.usefixtures("one_thread")

tiny_model = get_method("pearl").tiny_model


def test_accumulation_splits_the_global_batch():
    cfg = TrainingConfig(batch_size=8, gradient_accumulation_steps=2)
    assert plan_steps(cfg, 32, 2) == (2, 4)  # 8 = 2 processes x 2 micro-batches x 2
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        plan_steps(TrainingConfig(batch_size=6, gradient_accumulation_steps=2), 32, 2)


@pytest.mark.parametrize(
    ("training", "message"),
    [
        ({"gradient_accumulation_steps": 0}, "must be at least 1"),
        ({"batch_size": 6, "gradient_accumulation_steps": 4}, "divisible by 'training.gradient_accumulation_steps'"),
        ({"gradient_accumulation_steps": 1.5}, "gradient_accumulation_steps' must be int"),
    ],
)
def test_the_recipe_schema_checks_accumulation(training, message):
    with pytest.raises(InputError, match=message):
        recipe_from_dict({"name": "x", "method": "pearl", "repo_id": "t/x", "training": training})


def test_fp16_is_refused_on_a_cpu(tmp_path, pearl_task):
    with pytest.raises(ValueError, match="fp16 is for GPUs"):
        effective_mixed_precision("fp16", torch.device("cpu"))
    model = tiny_model()
    task = pearl_task(model)
    with pytest.raises(ValueError, match="fp16 is for GPUs"):
        train(
            model,
            task,
            TrainingConfig(batch_size=4, max_steps=1, mixed_precision="fp16"),
            RunOptions(tmp_path, progress=False),
        )


def test_fp16_without_a_loss_scaler_is_refused(tmp_path, monkeypatch, pearl_task):
    """On a GPU, fp16 trains only through an Accelerator with a loss scaler (mixed_precision='fp16')."""
    from phrasezoo.training import loop

    monkeypatch.setattr(loop, "effective_mixed_precision", lambda precision, device: precision)
    model = tiny_model()
    task = pearl_task(model)
    cfg = TrainingConfig(batch_size=4, max_steps=1, mixed_precision="fp16")
    with pytest.raises(ValueError, match="needs a loss scaler"):
        train(model, task, cfg, RunOptions(tmp_path, progress=False))
