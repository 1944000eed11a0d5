"""Pick torch's CPU thread count for encoding by measured throughput.

Why: on a small shared machine (2 cores, other jobs running), torch's OpenMP threads spin-wait for each other; when
another process holds a core, 2 threads run up to 5x slower than 1, while on an idle machine 2 threads are ~1.6x
faster. The tuner times every batch (per padded token), keeps a moving average per setting, uses the faster one
and re-tries the other now and then, so a run adapts when the load changes. Results do not depend on it (the
thread count only changes summation order, well below the float32 noise of the embeddings).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import torch


class ThreadTuner:
    """Chooses between 1 and the default number of torch threads per batch (a tiny two-armed bandit)."""

    def __init__(self, explore_every: int = 40, smoothing: float = 0.3) -> None:
        self.default = torch.get_num_threads()
        self.options = sorted({1, self.default})
        self.rate: dict[int, float | None] = dict.fromkeys(self.options)
        self.explore_every = explore_every
        self.smoothing = smoothing
        self.steps = 0

    def choose(self) -> int:
        if len(self.options) == 1:
            return self.options[0]
        untried = [o for o in self.options if self.rate[o] is None]
        if untried:
            return untried[-1]  # the default (most threads) first
        self.steps += 1
        best = max(self.options, key=lambda o: self.rate[o] or 0.0)
        if self.steps % self.explore_every == 0:
            return next(o for o in self.options if o != best)
        return best

    def update(self, threads: int, units: float, seconds: float) -> None:
        rate = units / max(seconds, 1e-6)
        old = self.rate[threads]
        self.rate[threads] = rate if old is None else (1 - self.smoothing) * old + self.smoothing * rate

    @contextmanager
    def batch(self, units: float) -> Iterator[int]:
        """Run one batch of ``units`` work (e.g. padded tokens) with the chosen thread count, then restore it."""
        threads = self.choose()
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        started = time.perf_counter()
        try:
            yield threads
        finally:
            self.update(threads, units, time.perf_counter() - started)
            torch.set_num_threads(previous)
