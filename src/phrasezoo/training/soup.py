"""Model soups: one recipe trained with several seeds, its runs' weights averaged into one model.

A uniform soup (Wortsman et al., 2022, "Model soups: averaging weights of multiple fine-tuned models improves
accuracy without increasing inference time") averages models fine-tuned from the *same* pretrained weights: they stay
in one basin, so their mean is a good model, often better than each of them. Only tensors that every run started
from identically can be averaged, so the soup averages exactly the tensors of ``checkpoints/initial.safetensors``
(the pretrained phrase encoder) and checks that every run has the same ones. Modules that each seed initialises at
random (PEARL's character encoder and type head) have no shared start: averaging them would mix unrelated units, so
the soup keeps the first run's.

Each seed is a run of its own in ``<output>/ingredients/seed-<s>/`` (resumable; a finished one is reused). When the
recipe pins its threads (``training.num_threads``) and the machine has room for two runs, the seeds train side by
side: the main process trains the first seed itself and, once its data is built and the teacher rows of every
seed's draws are embedded (one prefetch: the seeds draw many of the same rows, and a one-thread run embeds them in
a pool of forked workers, :mod:`phrasezoo.objectives.teacher_rows`), starts the other seeds in processes of their
own (:mod:`phrasezoo.training.ingredient`), which find their data and rows cached, all at once when there are at most
twice as many seeds as runs fit (3 seeds on 2 cores: three runs sharing two cores end after 1.5 run-times, where two
then one end after 2, with a core idle for the last). Independent work handed to ``spare`` starts with the first
seed's task build when the seeds will take every core (that build runs mostly in one process: with cold caches it
builds the data and the teacher's rows for many minutes, and the other cores would idle), so no core falls idle at
the start or at the end. A run's weights are a function of its recipe and seed alone (the trainer's
per-step seeding and the pinned thread count), so the soup has the same bits as when the seeds train one after
another (``tests/training/test_soup.py``). No more seeds train at once than the free memory holds, when the
recipe gives a run's measured peak (``training.run_memory_gb``); ``PHRASEZOO_SOUP_WORKERS=1`` trains them one after
another.

The soup is written as a checkpoint folder of the output run (``checkpoints/step-NNNNNN/model.safetensors`` with
``trainer_state.json`` naming the ingredients, and the shared ``initial.safetensors``), so the dev-suite selection
(:func:`phrasezoo.training.selection.select_on_dev`) and ``phrasezoo export --from-checkpoint`` read it like any run.
It has no optimizer state: a soup is a finished model, not a run to resume.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.machine import available_memory, env_count, usable_cores
from phrasezoo.core.recipes import Recipe
from phrasezoo.objectives.weight_averaging import soup_state_dicts
from phrasezoo.training.checkpoint import (
    SOUP_KEY,
    STATE_FILE,
    blend_with_initial,
    latest_checkpoint,
    save_state_dict,
)
from phrasezoo.training.ingredient import INGREDIENT_FILE, ingredient_command
from phrasezoo.training.run import TrainedModel, TrainedRun, run_training
from phrasezoo.zoo.registry import Method

__all__ = ["SOUP_KEY", "soup_workers", "train_soup", "write_soup_checkpoint"]


def soup_workers(cfg: Recipe, seeds: int) -> int:
    """How many ingredients train at once: every seed when the cores hold at least two runs
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
        print(f">> soup: {held} run(s) at a time, not {workers}: {free:.1f} GB of memory is free and a run takes "
              f"about {cfg.training.run_memory_gb:g} GB (training.run_memory_gb). PHRASEZOO_SOUP_WORKERS=<n> "
              "overrides it.", flush=True)  # fmt: skip
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
    if not threads or torch.cuda.is_available() or int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return 1
    return max(1, usable_cores() // threads)


def train_soup(
    cfg: Recipe,
    method: Method,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
    workers: int | None = None,
    spare: Callable[[], None] | None = None,
) -> TrainedModel:
    """Train one run per ``cfg.training.soup_seeds`` seed (``workers`` at a time, default :func:`soup_workers`) and
    return the soup of their last checkpoints (written to ``<output>/checkpoints/``), not exported. ``spare`` is
    called once: before the first ingredient's task build, if the ingredients will take every core (the work it
    starts uses the cores that build leaves free, then shares them, and none falls idle at the end), else when a
    worker finds no seed left while others still train."""
    seeds = list(cfg.training.soup_seeds or [])
    if len(set(seeds)) != len(seeds) or len(seeds) < 2:
        raise ValueError(f"training.soup_seeds needs at least two different seeds, got {seeds}.")
    output = Path(output_dir or cfg.output_dir)
    workers = soup_workers(cfg, len(seeds)) if workers is None else max(1, min(workers, len(seeds)))
    ingredients = _Ingredients(cfg, method, output, resume, stop_after_steps, progress, workers, spare)
    ingredients.cores_taken = workers >= runs_on_cores(cfg)
    runs = ingredients.train(seeds)
    first = runs[0]
    if not first.is_main_process:
        return TrainedModel(first.result.model, output, {}, False, ingredients.stages)
    soup, soup_facts = write_soup_checkpoint([output / "ingredients" / f"seed-{s}" for s in seeds], output)
    if cfg.training.weight_average:  # the same final blend as a single run's
        initial = load_file(output / "checkpoints" / "initial.safetensors")
        soup = blend_with_initial(soup, initial, cfg.training.weight_average)
    model = first.result.model
    model.load_state_dict(soup)
    minutes = round(sum(_seconds(run) for run in runs) / 60, 1)
    facts = {**first.facts, "seed": seeds, "training time (min)": minutes, **soup_facts}
    if not facts.get("last losses"):  # a finished ingredient reused from disk logs no new step
        facts.pop("last losses", None)
    return TrainedModel(model, output, facts, True, ingredients.stages)


def _seconds(run: TrainedRun | dict) -> float:
    return run.result.seconds if isinstance(run, TrainedRun) else float(run["seconds"])


class _Ingredients:
    """Trains a soup's seeds: the first in this process, the others here or in worker processes, as they free up."""

    def __init__(self, cfg, method, output: Path, resume, stop_after_steps, progress, workers: int, spare) -> None:
        self.cfg, self.method, self.output, self.resume = cfg, method, output, resume
        self.stop_after_steps, self.progress, self.workers, self.spare = stop_after_steps, progress, workers, spare
        self.pending: deque[tuple[int, int]] = deque()
        self.results: dict[int, TrainedRun | dict] = {}
        self.stages: list[tuple[str, float, float]] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.processes: list[subprocess.Popen] = []
        self.stopping = False
        self.total = 0
        self.cores_taken = False  # the workers take every core: ``spare`` starts before them, with the first build

    def train(self, seeds: Sequence[int]) -> list[TrainedRun | dict]:
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

    def _folder(self, seed: int) -> Path:
        return self.output / "ingredients" / f"seed-{seed}"

    def _here(self, i: int, seed: int, ready=None, draws_of=()) -> TrainedRun:
        """One ingredient in this process (the first always: the soup model is its model with the soup loaded)."""
        ingredient = copy.deepcopy(self.cfg)
        ingredient.training.seed, ingredient.training.soup_seeds = seed, None
        print(f">> soup ingredient {i + 1}/{self.total}: seed {seed}", flush=True)
        folder, stop = self._folder(seed), self.stop_after_steps
        run = run_training(ingredient, folder, self.resume, stop, self.progress, self.method, ready, draws_of)
        self.stages.extend(run.stages)
        return run

    def _start_workers(self) -> None:
        """Called before the first ingredient's first step (its data and every seed's teacher rows are on disk)."""
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
        core, else when a core finds no seed left while other ingredients still train."""
        with self.lock:
            spare, self.spare = self.spare, None
            if self.stopping or len(self.results) >= self.total:
                spare = None
        if spare is not None:
            spare()

    def _elsewhere(self, i: int, seed: int) -> dict[str, Any]:
        """One ingredient in a worker process (same recipe, same seed, same weights; its output goes to a log)."""
        folder = self._folder(seed)
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "ingredient.log"
        command = ingredient_command(self.cfg, seed, folder, self.resume, self.stop_after_steps)
        print(f">> soup ingredient {i + 1}/{self.total}: seed {seed}, in a process of its own (log: {log})", flush=True)
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
        summary = json.loads((folder / INGREDIENT_FILE).read_text())
        self.stages.extend(tuple(stage) for stage in summary["stages"])
        print(f">> soup ingredient seed {seed} done ({summary['seconds'] / 60:.1f} min of training)", flush=True)
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


def write_soup_checkpoint(
    run_dirs: Sequence[str | Path], output_dir: str | Path
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Average the last checkpoints of ``run_dirs`` (runs of one recipe, different seeds) into
    ``output_dir/checkpoints/``; returns ``(soup state dict, facts for the model card)``.

    Raises ``ValueError`` when the runs did not start from the same weights or stopped at different steps.
    """
    run_dirs = [Path(r) for r in run_dirs]
    if len(run_dirs) < 2:
        raise ValueError(f"A soup needs at least two runs, got {len(run_dirs)}.")
    found, initials = [], []
    for run in run_dirs:
        checkpoint = latest_checkpoint(run / "checkpoints")
        initial = run / "checkpoints" / "initial.safetensors"
        if checkpoint is None or not initial.exists():
            raise FileNotFoundError(f"{run}/checkpoints has no finished checkpoint and initial.safetensors to soup.")
        found.append(checkpoint)
        initials.append(initial)
    steps = [json.loads((c / STATE_FILE).read_text())["step"] for c in found]
    if len(set(steps)) != 1:
        raise ValueError(f"Soup ingredients stopped at different steps {steps}: finish every run first.")
    start = load_file(initials[0])
    for path in initials[1:]:
        other = load_file(path)
        if set(other) != set(start) or any(not _same_start(other[k], start[k]) for k in start):
            raise ValueError(f"{path} differs from {initials[0]}: soup ingredients must start from the same weights.")
    soup = soup_state_dicts([load_file(c / "model.safetensors") for c in found], list(start))

    ckpt_dir = Path(output_dir) / "checkpoints"
    target = ckpt_dir / found[0].name
    target.mkdir(parents=True, exist_ok=True)
    save_state_dict(start, ckpt_dir / "initial.safetensors")
    save_state_dict(soup, target / "model.safetensors")
    ingredients = [str(c) for c in found]
    atomic_write_text(target / STATE_FILE, json.dumps({"step": steps[0], SOUP_KEY: ingredients}, indent=1) + "\n")
    atomic_write_text(ckpt_dir / "latest", target.name)
    return soup, {
        "model soup": f"uniform mean of {len(found)} runs' phrase encoders (step {steps[0]}); "
        "randomly initialised modules from the first run",
        "soup ingredients": ingredients,
    }


def _same_start(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal tensors, NaN in the same places counting as equal (the GPU job marks rows that did not travel NaN)."""
    return torch.equal(a, b) or (
        a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())
    )
