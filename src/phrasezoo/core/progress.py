"""One switch for progress bars (``--no-progress`` / ``TQDM_DISABLE=1`` / ``PHRASEZOO_NO_PROGRESS=1``) and the
stage clock of long jobs."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm.auto import tqdm


def progress_enabled(requested: bool = True) -> bool:
    """Whether to show a bar: the caller asked for one and the environment does not switch bars off."""
    return requested and not (os.environ.get("TQDM_DISABLE") or os.environ.get("PHRASEZOO_NO_PROGRESS"))


def row_bar(total: int, desc: str, enabled: bool = True, min_rows: int = 2000):
    """A tqdm bar over ``total`` rows (``update(n)`` per chunk), shown when bars are on and the work has at least
    ``min_rows`` rows: short work stays quiet."""
    return tqdm(total=total, desc=desc, unit="row", disable=not progress_enabled(enabled) or total < min_rows,
                leave=False)  # fmt: skip


class StageClock:
    """Wall-clock times of a job's stages, for the table a long job prints at the end (``phrasezoo pipeline``).

    Stages may overlap (soup ingredients training side by side): each row keeps its own start, so the table shows
    when a stage ran as well as how long. Times are ``time.time()`` values, comparable across processes.
    """

    def __init__(self, started: float | None = None) -> None:
        self.started = time.time() if started is None else started
        self.rows: list[tuple[str, float, float]] = []  # (stage, start, seconds)

    @classmethod
    def for_job(cls) -> StageClock:
        """A clock started now, or at the install when ``scripts/run_main.sh`` passes its time
        (``PHRASEZOO_INSTALL_SECONDS``), with that stage in it."""
        install = float(os.environ.get("PHRASEZOO_INSTALL_SECONDS") or 0)
        clock = cls(time.time() - install)
        if install:
            clock.add("install (scripts/bootstrap.sh)", clock.started, install)
        return clock

    def add(self, stage: str, start: float, seconds: float) -> None:
        self.rows.append((stage, start, seconds))

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name`` (recorded even when the block raises)."""
        start = time.time()
        try:
            yield
        finally:
            self.add(name, start, time.time() - start)

    def to_dict(self) -> dict:
        """The stages as data (``outputs/<name>-job-stages.json`` of the main job): each stage's start and length in minutes."""
        rows = sorted(self.rows, key=lambda row: row[1])
        return {
            "stages": [
                {
                    "stage": stage,
                    "starts_at_min": round((start - self.started) / 60, 2),
                    "minutes": round(seconds / 60, 2),
                }
                for stage, start, seconds in rows
            ],  # fmt: skip
            "total_min": round((time.time() - self.started) / 60, 2),
        }

    def table(self) -> str:
        """``stage | starts at (min) | minutes`` rows in start order, and the job's wall time."""
        width = max([44, *(len(stage) for stage, _start, _seconds in self.rows)])
        lines = [f"{'stage':{width}s} {'starts at (min)':>15s} {'minutes':>8s}"]
        for stage, start, seconds in sorted(self.rows, key=lambda row: row[1]):
            lines.append(f"{stage:{width}s} {(start - self.started) / 60:15.1f} {seconds / 60:8.1f}")
        lines.append(f"{'total (wall clock)':{width}s} {'':15s} {(time.time() - self.started) / 60:8.1f}")
        return "\n".join(lines)
