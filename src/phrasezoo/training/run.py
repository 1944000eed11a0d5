"""Train one run of a recipe: build the model and task of its method, run the loop, collect the card facts.

A recipe with ``training.soup_seeds`` is several such runs (:mod:`phrasezoo.training.soup`);
:func:`phrasezoo.training.workflow.train_recipe` validates a recipe once and trains it either way. Export is not done
here (the training workflow does not know the hub workflow): :mod:`phrasezoo.pipeline` runs train -> export
(``train.py``, ``phrasezoo train``) and train -> select -> export -> evaluate -> card (``phrasezoo pipeline``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from phrasezoo.core.recipes import Recipe
from phrasezoo.resources import backbone_hub_id
from phrasezoo.training.recipe_guard import check_and_record_recipe
from phrasezoo.training.trainer import TrainResult, effective_mixed_precision, seed_everything, train
from phrasezoo.zoo.registry import Method, create_model, validate_recipe


@dataclass
class TrainedRun:
    """A finished training run: the loop's result, the facts for the card, whether this is the main process, and
    the wall-clock times of its stages (``(stage, start, seconds)``, for the main job's table)."""

    result: TrainResult
    output_dir: Path
    is_main_process: bool = True
    facts: dict[str, Any] = field(default_factory=dict)
    stages: list[tuple[str, float, float]] = field(default_factory=list)


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


def run_training(
    cfg: Recipe,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
    method: Method | None = None,
    ready: Callable[[], None] | None = None,
    draws_of: Sequence[int] = (),
) -> TrainedRun:
    """Build the model and task of ``cfg.method`` and train it (resuming from the last checkpoint).

    ``method``: the recipe's method when the caller validated the recipe already (it is validated here otherwise).
    ``ready`` is called once the task is built and the teacher rows of the run's draws are embedded, before its
    first step, i.e. once the caches hold what this recipe needs (the soup starts its other ingredients' processes
    then); ``draws_of``: seeds of other runs of the recipe whose teacher rows this run embeds with its own then (a
    soup's ingredients draw many of the same rows: one prefetch embeds them once, see :func:`train`).
    """
    from phrasezoo.objectives import teacher

    accelerator = _accelerator(cfg)
    output_dir = Path(output_dir or cfg.output_dir)
    method = method or validate_recipe(cfg)
    if accelerator.is_main_process:  # before the data build: a changed recipe fails at once, not after minutes
        check_and_record_recipe(cfg, output_dir, resume)
    accelerator.wait_for_everyone()
    accelerator.print(
        f">> {cfg.name}: {method.description}; backbone {cfg.backbone or 'none (built from the recipe)'}; "
        f"output {output_dir}; {accelerator.num_processes} process(es), {accelerator.distributed_type}"
    )
    started, teacher_before = time.time(), teacher.seconds_spent()
    # same recipe + seed -> same weights: fresh modules are initialised from the seeded generator (not torch's
    # per-process random seed), and the data build starts from the same state whether or not its cache was warm
    seed_everything(cfg.training.seed)
    model = create_model(cfg, accelerator, method=method)
    seed_everything(cfg.training.seed)
    task = method.build_task(cfg, model, accelerator)
    built, teacher_built = time.time(), teacher.seconds_spent()
    result = train(
        model, task, cfg.training, output_dir, accelerator, resume, stop_after_steps, progress, ready, draws_of
    )
    stages = _stages(cfg.training.seed, started, built, time.time(), teacher_built - teacher_before,
                     teacher.seconds_spent() - teacher_built, draws_of)  # fmt: skip
    facts = training_facts(cfg, result, accelerator, task) if accelerator.is_main_process else {}
    return TrainedRun(result, output_dir, accelerator.is_main_process, facts, stages)


def _stages(seed: int, started: float, built: float, finished: float, teacher_build: float, teacher_run: float,
            draws_of: Sequence[int] = ()):  # fmt: skip
    """The run's ``(stage, start, seconds)`` rows: the data build and the teacher rows embedded with it (the lexicon,
    the table's plan) come before ``built``; the teacher rows of the run's draws (and ``draws_of``'s), then its
    steps, after it."""
    seeds = [seed, *(s for s in draws_of if s != seed)]
    draws = f"seed {seed} draws" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))} draw"
    return [
        (f"data build + model (seed {seed})", started, built - started - teacher_build),
        (f"teacher: rows the data build needs (seed {seed})", built - teacher_build, teacher_build),
        (f"teacher: rows {draws}, before seed {seed}'s first step", built, teacher_run),
        (f"training run seed {seed}", built + teacher_run, finished - built - teacher_run),
    ]


def _accelerator(cfg: Recipe):
    """The run's Accelerator (and one thread pool per process when several share a CPU)."""
    from accelerate import Accelerator

    # several processes (torchrun / accelerate launch --multi_gpu) on a machine without CUDA: Accelerate only
    # forms the gloo process group (MULTI_CPU) when asked for the CPU explicitly; otherwise each process would
    # believe it is alone and train the same batches
    multi_process_cpu = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.cuda.is_available()
    # fp16 on a GPU trains with Accelerate's loss scaler (the trainer refuses fp16 without one, and on a CPU)
    fp16 = cfg.training.mixed_precision == "fp16" and torch.cuda.is_available()
    accelerator = Accelerator(cpu=multi_process_cpu, **({"mixed_precision": "fp16"} if fp16 else {}))
    if accelerator.device.type == "cpu" and accelerator.num_processes > 1:
        # several CPU processes share the cores: one thread pool per process, not one per core each
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // accelerator.num_processes))
    # the recipe's training.num_threads is set by the trainer, for the run itself: the data build and the teacher
    # before it use the cores they have (encoders give the same bits whatever the thread count, see
    # phrasezoo.objectives.teacher_rows), which on a 2-core machine halves the build while no other ingredient runs yet
    return accelerator


def training_facts(cfg: Recipe, result: TrainResult, accelerator, task) -> dict:
    """What the model card reports about the run."""
    t = cfg.training
    facts = {
        "method": cfg.method,
        "backbone": backbone_hub_id(cfg.backbone) if cfg.backbone else "none",
        "steps": result.steps,
        "planned steps": result.total_steps,
        "stopped by time budget": result.stopped_early,
        "time budget (min)": t.time_budget_minutes or "none",
        "seed": t.seed,
        "torch threads": torch.get_num_threads(),
        "training time (min)": round(result.seconds / 60, 1),
        "global batch size": t.batch_size,
        "learning rate": t.learning_rate,
        "weight averaging with the starting weights": t.weight_average,
        "LoRA": bool(t.lora),
        "precision": effective_mixed_precision(t.mixed_precision, accelerator.device),
        "processes": accelerator.num_processes,
        "device": f"{accelerator.device.type} ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)",
        "torch": torch.__version__,
        "trained on": dt.date.today().isoformat(),
        "last losses": {k: round(v, 4) for k, v in result.last_losses.items()},
    }
    facts.update(task.facts())
    return facts


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="recipe name (pearl-mini) or path (hub_configs/pearl-mini.yaml)")
    parser.add_argument("--output-dir", help="where checkpoints and the exported model go (default outputs/<name>)")
    parser.add_argument("--no-resume", action="store_true", help="ignore existing checkpoints and start over")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a hub-config value, e.g. --set training.max_steps=20 (repeatable)",
    )
    parser.add_argument("--stop-after-steps", type=int, help=argparse.SUPPRESS)  # simulated crash, for tests
    parser.add_argument("--no-progress", action="store_true", help="no progress bars (logs only)")
