"""A check the methods' tests share: a real training task survives the GPU job's codec (same batches, same loss)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch

from phrasezoo.gpu_job.codec import read_task_state, write_task_state


def same(a, b) -> bool:
    """Deep equality of batches: tensors, lists, dicts and objects with attributes."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "__dict__") and not isinstance(a, type):
        return type(a) is type(b) and same(vars(a), vars(b))
    return a == b


def assert_task_survives_the_codec(task, model, folder: Path, batches: int = 3, batch_size: int = 2) -> None:
    """Write ``task`` as the GPU job packs it, read it back onto ``model``, and compare batches and losses."""
    write_task_state(task, model, folder)
    back = read_task_state(folder, model)
    assert type(back) is type(task) and back.num_examples() == task.num_examples()
    for step in range(batches):
        indices = [(step * batch_size + i) % task.num_examples() for i in range(batch_size)]
        torch.manual_seed(step)
        ours = task.make_batch(indices, random.Random(step))
        torch.manual_seed(step)
        theirs = back.make_batch(indices, random.Random(step))
        assert same(ours, theirs), f"batch {step} differs after the codec"
        model.eval()
        with torch.no_grad():
            loss, _ = task.compute_loss(model, ours)
            again, _ = back.compute_loss(model, theirs)
        assert torch.allclose(loss, again, atol=1e-6), (float(loss), float(again))
