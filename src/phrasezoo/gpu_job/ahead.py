"""Batches made ahead in worker processes while the GPU trains: for a task whose batches are made on the CPU in
Python (PEARL: augmentation, tokenising, the character encoder's inputs for ~1,000 phrases a step), so that a step
costs the GPU's time, not the CPU's plus the GPU's.

A task opts in with ``batches_ahead = True``: its ``make_batch(indices, rng)`` draws from ``rng`` only (not from
torch's generator), so a batch made in another process from a step's indices and a generator in the same state is
the batch the loop would make. The loop shows its steps before the first one (``prefetch(steps)``: the indices and
seeded generators of every step, :func:`phrasezoo.training.loop._look_ahead`); :class:`BatchesAhead` then makes
them, in order, in ``workers`` forked processes (a ``torch.utils.data.DataLoader``), and each ``make_batch`` call takes
the next one after checking that it was made from the step's indices.
"""

from __future__ import annotations

import os
import random
from typing import Any

import torch


def _as_is(item):
    return item


class _StepBatches(torch.utils.data.Dataset):
    """Item ``k``: ``(indices, batch)`` of the ``k``-th step, made from its indices and its generator's state."""

    def __init__(self, make_batch, steps: list[tuple[list[int], Any]]):
        self.make_batch, self.steps = make_batch, steps

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, k: int):
        indices, state = self.steps[k]
        rng = random.Random()
        rng.setstate(state)
        return indices, self.make_batch(indices, rng)


class BatchesAhead:
    """Wraps ``task.make_batch`` and ``task.prefetch`` (see the module docstring); ``close()`` stops the workers."""

    def __init__(self, task, workers: int, ahead: int = 4):
        self.task, self.workers, self.ahead = task, workers, ahead
        self.make_batch = task.make_batch
        self.inner_prefetch = getattr(task, "prefetch", None)
        self.batches = None
        self.made = 0
        task.make_batch = self
        task.prefetch = self.prefetch

    def prefetch(self, steps) -> None:
        steps = [(list(indices), rng) for indices, rng in steps]
        planned = [(indices, rng.getstate()) for indices, rng in steps]  # before the task's own look-ahead draws
        if self.inner_prefetch is not None:
            self.inner_prefetch(iter(steps))
        loader = torch.utils.data.DataLoader(
            _StepBatches(self.make_batch, planned),
            batch_size=None,
            shuffle=False,
            num_workers=self.workers,
            collate_fn=_as_is,
            prefetch_factor=self.ahead,
            multiprocessing_context="fork",
        )
        self.batches = iter(loader)

    def __call__(self, indices, rng) -> dict[str, Any]:
        if self.batches is None:  # no look-ahead was shown: make it here
            return self.make_batch(indices, rng)
        made_from, batch = next(self.batches)
        self.made += 1
        if made_from != list(indices):
            raise RuntimeError(
                f"batch {self.made} was made ahead from other indices than the loop's step: the task's batches are "
                "not a function of the steps the loop showed (batches_ahead must be off for it)."
            )
        return batch

    def close(self) -> None:
        self.batches = None  # the DataLoader's iterator stops its workers when dropped


def batch_workers(task, device: str) -> int:
    """Worker processes for ``task`` on ``device``: none unless the task opts in; on a GPU machine up to 8, leaving
    two cores to the loop; on a CPU (the self-test) one, to exercise the same path."""
    if not getattr(type(task), "batches_ahead", False):
        return 0
    if device == "cpu":
        return 1
    return max(1, min(8, (os.cpu_count() or 4) - 2))
