"""Batches made ahead in worker processes (the GPU job, a task with ``batches_ahead``) are the loop's own batches."""

from __future__ import annotations

import random

import pytest
import torch

from phrasezoo.gpu_job.ahead import BatchesAhead, batch_workers


class RngTask:
    batches_ahead = True

    def __init__(self):
        self.seen = []

    def make_batch(self, indices, rng):
        return {
            "indices": list(indices),
            "draw": torch.tensor([rng.random() for _ in indices]),
            "word": rng.choice("abc"),
        }

    def prefetch(self, steps):
        self.seen = [rng.random() for _, rng in steps]  # a look-ahead that draws from the generators it is shown


def steps(n):
    return [([3 * k, 3 * k + 1], random.Random(100 + k)) for k in range(n)]


def test_made_ahead_in_a_worker_equals_made_in_the_loop():
    direct = RngTask()
    expected = [direct.make_batch(indices, rng) for indices, rng in steps(6)]
    task = RngTask()
    ahead = BatchesAhead(task, workers=batch_workers(task, "cpu"))
    task.prefetch(iter(steps(6)))
    assert len(task.seen) == 6  # the task's own look-ahead still ran
    for (indices, rng), want in zip(steps(6), expected):
        got = task.make_batch(indices, rng)
        assert got["indices"] == want["indices"] and got["word"] == want["word"]
        assert torch.equal(got["draw"], want["draw"])
    ahead.close()


def test_a_batch_from_other_indices_is_refused():
    task = RngTask()
    BatchesAhead(task, workers=1)
    task.prefetch(iter(steps(2)))
    with pytest.raises(RuntimeError, match="other indices"):
        task.make_batch([99], random.Random(0))


def test_only_tasks_that_opt_in_get_workers():
    class Plain:
        pass

    assert batch_workers(Plain(), "cuda") == 0 and batch_workers(RngTask(), "cpu") == 1
    assert 1 <= batch_workers(RngTask(), "cuda") <= 8
