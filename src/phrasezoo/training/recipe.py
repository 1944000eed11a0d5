"""A recipe in, its trained model out (not exported): the training workflow's front door.

The recipe is validated here, once. A recipe trains one run (:mod:`phrasezoo.training.one_run`), or with
``training.soup_seeds`` one run per seed, whose weights the soup averages (:mod:`phrasezoo.training.soup`).

A soup's seeds train side by side where the machine has room: when the recipe pins its threads
(``training.num_threads``) and the cores hold two runs, this process trains the first seed itself and, once its data
is built and the teacher rows of every seed's draws are embedded (one prefetch: the seeds draw many of the same rows,
and a one-thread run embeds them in a pool of forked workers, :mod:`phrasezoo.objectives.teacher_rows`), starts the
other seeds in processes of their own (``python -m phrasezoo.training.one_run``), which find their data and rows
cached, all at once when there are at most twice as many seeds as runs fit (3 seeds on 2 cores: three runs sharing
two cores end after 1.5 run-times, where two then one end after 2, with a core idle for the last). Independent work
handed to ``spare`` starts with the first seed's task build when the seeds will take every core (that build runs
mostly in one process: with cold caches it builds the data and the teacher's rows for many minutes, and the other
cores would idle), so no core falls idle at the start or at the end. A run's weights are a function of its recipe
and seed alone (the loop's per-step seeding and the pinned thread count), so the soup has the same bits as when the
seeds train one after another (``tests/training/test_soup.py``). No more seeds train at once than the free memory
holds, when the recipe gives a run's measured peak (``training.run_memory_gb``); ``PHRASEZOO_SOUP_WORKERS=1`` trains
them one after another. Each seed is a run of its own in ``<output>/ingredients/seed-<s>/`` (resumable; a finished
one is reused).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from phrasezoo.core.errors import InputError
from phrasezoo.core.machine import available_memory, env_count, usable_cores
from phrasezoo.core.recipes import Recipe
from phrasezoo.training.checkpoint import blend_with_initial
from phrasezoo.training.loop import RunOptions, check_before_work, first_process, launched_processes
from phrasezoo.training.one_run import RUN_SUMMARY, TrainedRun, seed_command, train_one_run
from phrasezoo.training.soup import write_soup_checkpoint
from phrasezoo.zoo.registry import Method, validate_recipe


@dataclass
class TrainedModel:
    """A recipe's final model, trained (one run or a soup) but not exported: what the pipeline selects and exports.

    ``facts`` are the card's training facts; ``stages`` the wall-clock ``(stage, start, seconds)`` of its runs.
    """

    model: Any
    output_dir: Path
    facts: dict[str, Any]
    is_main_process: bool = True
    stages: list[tuple[str, float, float]] = field(default_factory=list)


def train_recipe(cfg: Recipe, options: RunOptions) -> TrainedModel:
    """Validate ``cfg`` and train it as ``options`` say (:class:`~phrasezoo.training.loop.RunOptions`; by default
    into ``outputs/<name>/``, resuming from the last checkpoints): one run, or a soup of one run per seed. The
    recipe's ``num_threads`` holds for its runs only: torch's thread count is restored afterwards, for what the
    caller does next. The recipe and what this machine and launch can train are checked before any data is built
    (:func:`~phrasezoo.training.loop.check_before_work`)."""
    method = validate_recipe(cfg)
    check_before_work(cfg.training, launched_processes(), cfg.source_path or cfg.name)
    if cfg.training.soup_seeds:
        _check_seeds(cfg)
    threads = torch.get_num_threads()
    try:
        if cfg.training.soup_seeds:
            return _train_soup(cfg, method, options)
        run = train_one_run(cfg, options, method=method)
        return TrainedModel(run.result.model, run.output_dir, run.facts, run.is_main_process, run.stages)
    finally:
        torch.set_num_threads(threads)


def soup_workers(cfg: Recipe, seeds: int) -> int:
    """How many seeds train at once: every seed when the cores hold at least two runs
    (:func:`runs_on_cores`) and the seeds are at most twice that, else that many; 1 when the recipe does not pin its
    threads, on a GPU or under several processes; never more than the free memory holds (:func:`runs_in_memory`).
    ``PHRASEZOO_SOUP_WORKERS`` overrides it."""
    forced = env_count("PHRASEZOO_SOUP_WORKERS")
    if forced:
        return min(seeds, forced)
    fit = runs_on_cores(cfg)
    workers = 1 if fit < 2 else seeds if seeds <= 2 * fit else fit
    held = runs_in_memory(cfg)
    if held < workers:
        free = (available_memory() or 0) / 2**30
        say(f">> soup: {held} run(s) at a time, not {workers}: {free:.1f} GB of memory is free and a run takes "
              f"about {cfg.training.run_memory_gb:g} GB (training.run_memory_gb). PHRASEZOO_SOUP_WORKERS=<n> "
              "overrides it.")  # fmt: skip
        return held
    return workers


def runs_in_memory(cfg: Recipe) -> int:
    """Runs of ``training.run_memory_gb`` (the recipe's measured peak) the free memory holds, at least 1; unbounded
    when the recipe gives no peak or the free memory is unknown."""
    need, free = cfg.training.run_memory_gb, available_memory()
    if not need or free is None:
        return sys.maxsize
    return max(1, int(free // (need * 2**30)))


def runs_on_cores(cfg: Recipe) -> int:
    """Runs of ``training.num_threads`` threads the machine's cores hold at once (1 when threads are not pinned, on a
    GPU or under several processes)."""
    threads = cfg.training.num_threads
    if not threads or torch.cuda.is_available() or launched_processes() > 1:
        return 1
    return max(1, usable_cores() // threads)


def _train_soup(cfg: Recipe, method: Method, options: RunOptions) -> TrainedModel:
    """Train one run per ``cfg.training.soup_seeds`` seed (``options.workers`` at a time, default
    :func:`soup_workers`) and return the soup of their last checkpoints (written to ``<output>/checkpoints/``).
    ``options.spare`` is called once: before the first seed's task build, if the seeds will take every core (the
    work it starts uses the cores that build leaves free, then shares them, and none falls idle at the end), else
    when a worker finds no seed left while others still train."""
    seeds = _check_seeds(cfg)
    output = Path(options.output_dir or cfg.output_dir)
    workers = soup_workers(cfg, len(seeds)) if options.workers is None else max(1, min(options.workers, len(seeds)))
    trainer = _Seeds(cfg, method, dataclasses.replace(options, output_dir=output, workers=workers))
    runs = trainer.train(seeds)
    first = runs[0]
    if not first.is_main_process:
        return TrainedModel(first.result.model, output, {}, False, trainer.stages)
    soup, soup_facts = write_soup_checkpoint([trainer.folder(s) for s in seeds], output)
    if cfg.training.weight_average:  # the same final blend as a single run's
        initial = load_file(output / "checkpoints" / "initial.safetensors")
        soup = blend_with_initial(soup, initial, cfg.training.weight_average)
    model = first.result.model
    model.load_state_dict(soup)
    minutes = round(sum(_seconds(run) for run in runs) / 60, 1)
    facts = {**first.facts, "seed": seeds, "training time (min)": minutes, **soup_facts}
    if not facts.get("last losses"):  # a finished seed reused from disk logs no new step
        facts.pop("last losses", None)
    return TrainedModel(model, output, facts, True, trainer.stages)


def _check_seeds(cfg: Recipe) -> list[int]:
    """The soup's seeds: at least two, all different (an :class:`InputError` naming the recipe otherwise)."""
    seeds = list(cfg.training.soup_seeds or [])
    if len(set(seeds)) != len(seeds) or len(seeds) < 2:
        raise InputError(
            f"{cfg.source_path or cfg.name}: training.soup_seeds needs at least two different seeds, got {seeds}."
        )
    return seeds


def say(message: str) -> None:
    """Print a progress line from the first process only: under ``accelerate launch`` every process trains the
    soup's seeds in turn, and one of them speaks for all."""
    if first_process():
        print(message, flush=True)


def _seconds(run: TrainedRun | dict) -> float:
    """Training seconds of a seed's run: trained here (a :class:`TrainedRun`) or in a process of its own (its
    summary)."""
    return run.result.seconds if isinstance(run, TrainedRun) else float(run["seconds"])


class _Seeds:
    """Trains a soup's seeds: the first in this process, the others here or in worker processes, as they free up.
    ``options`` are the soup's (its output folder and ``workers`` resolved); each seed's run gets them with its own
    folder."""

    def __init__(self, cfg: Recipe, method: Method, options: RunOptions) -> None:
        self.cfg, self.method, self.options = cfg, method, options
        self.workers, self.spare = options.workers or 1, options.spare
        # the workers take every core: ``spare`` starts before them, with the first build
        self.cores_taken = self.workers >= runs_on_cores(cfg)
        self.pending: deque[tuple[int, int]] = deque()
        self.results: dict[int, TrainedRun | dict] = {}
        self.stages: list[tuple[str, float, float]] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.processes: list[subprocess.Popen] = []
        self.stopping = False
        self.total = 0

    def train(self, seeds: Sequence[int]) -> list[TrainedRun | dict]:
        """Train every seed; the runs in the seeds' order (a :class:`TrainedRun`, or a worker process's summary)."""
        self.total = len(seeds)
        self.pending.extend(enumerate(seeds))
        try:
            if self.workers > 1 and self.cores_taken:
                self._idle()  # the first seed's task build leaves cores free (an hour of it with cold caches)
            first = self._next()
            start_others = self._start_workers if self.workers > 1 else None
            draws_of = [seed for _, seed in self.pending] if self.workers > 1 else []
            self.results[first[0]] = self._here(*first, ready=start_others, draws_of=draws_of)
            while (item := self._next()) is not None:
                self.results[item[0]] = self._here(*item)
            if any(thread.is_alive() for thread in self.threads):
                self._idle()
            for thread in self.threads:
                thread.join()
        except BaseException:
            self._stop()
            raise
        if self.errors:
            raise self.errors[0]
        return [self.results[i] for i in range(len(seeds))]

    def _next(self) -> tuple[int, int] | None:
        with self.lock:
            return None if self.stopping or not self.pending else self.pending.popleft()

    def folder(self, seed: int) -> Path:
        """The run folder of ``seed``: ``<output>/ingredients/seed-<s>/``."""
        return Path(self.options.output_dir) / "ingredients" / f"seed-{seed}"

    def _here(self, i: int, seed: int, ready=None, draws_of=()) -> TrainedRun:
        """One seed in this process (the first always: the soup model is its model with the soup loaded)."""
        seeded = copy.deepcopy(self.cfg)
        seeded.training.seed, seeded.training.soup_seeds = seed, None
        say(f">> soup ingredient {i + 1}/{self.total}: seed {seed}")
        options = dataclasses.replace(self.options, output_dir=self.folder(seed), ready=ready, draws_of=draws_of)
        run = train_one_run(seeded, options, self.method)
        self.stages.extend(run.stages)
        return run

    def _start_workers(self) -> None:
        """Called before the first seed's first step (its data and every seed's teacher rows are on disk)."""
        for _ in range(self.workers - 1):
            thread = threading.Thread(target=self._work, daemon=True)
            thread.start()
            self.threads.append(thread)

    def _work(self) -> None:
        while (item := self._next()) is not None:
            try:
                self.results[item[0]] = self._elsewhere(*item)
            except BaseException as err:  # noqa: BLE001 - raised again in the main thread
                self.errors.append(err)
                with self.lock:
                    self.stopping = True
                return
        self._idle()

    def _idle(self) -> None:
        """Hand ``spare`` its share of the cores, once: before the first task build if the workers will take every
        core, else when a core finds no seed left while other seeds still train."""
        with self.lock:
            spare, self.spare = self.spare, None
            if self.stopping or len(self.results) >= self.total:
                spare = None
        if spare is not None:
            spare()

    def _elsewhere(self, i: int, seed: int) -> dict[str, Any]:
        """One seed in a worker process (same recipe, same seed, same weights; its output goes to a log)."""
        folder = self.folder(seed)
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "ingredient.log"
        command = seed_command(self.cfg, seed, dataclasses.replace(self.options, output_dir=folder))
        say(f">> soup ingredient {i + 1}/{self.total}: seed {seed}, in a process of its own (log: {log})")
        with open(log, "w") as handle:
            process = subprocess.Popen(
                [sys.executable, *command],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env={**os.environ, "TQDM_DISABLE": "1"},
            )
            with self.lock:
                self.processes.append(process)
            code = process.wait()
        if code != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise RuntimeError(f"Soup ingredient seed {seed} failed (exit code {code}); the end of {log}:\n{tail}")
        summary = json.loads((folder / RUN_SUMMARY).read_text())
        self.stages.extend(tuple(stage) for stage in summary["stages"])
        say(f">> soup ingredient seed {seed} done ({summary['seconds'] / 60:.1f} min of training)")
        return summary

    def _stop(self) -> None:
        """The main process failed or was interrupted: end the worker processes and wait for their threads."""
        with self.lock:
            self.stopping = True
            for process in self.processes:
                if process.poll() is None:
                    process.terminate()
        deadline = time.monotonic() + 60
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
