"""One run of a recipe: build the model and task of its method, run the loop, collect the card facts.

A recipe with ``training.soup_seeds`` is one such run per seed (:func:`phrasezoo.training.recipe.train_recipe`
trains it either way); a soup trains some of its seeds side by side, each in a process of its own:
``python -m phrasezoo.training.one_run <recipe as JSON> --seed S --output-dir D`` (:func:`seed_command`), the run the
soup would train itself (same recipe, seed and thread count, so the same weights), which writes ``D/ingredient.json``
to tell the soup how long it took. Export is not done here (the training workflow does not know the hub workflow):
:mod:`phrasezoo.train` runs train -> export and :mod:`phrasezoo.pipeline` the main job.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from accelerate import Accelerator

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import Recipe, recipe_from_dict
from phrasezoo.objectives import teacher
from phrasezoo.resources import backbone_hub_id
from phrasezoo.training.loop import (
    RunOptions,
    TrainResult,
    effective_mixed_precision,
    launched_processes,
    seed_everything,
    train,
)
from phrasezoo.training.recipe_guard import check_and_record_recipe
from phrasezoo.zoo.registry import Method, create_model, get_method, validate_recipe

#: what a seed's process leaves in its output folder for the soup: seed, steps, seconds and stages
RUN_SUMMARY = "ingredient.json"


@dataclass
class TrainedRun:
    """A finished training run: the loop's result, the facts for the card, whether this is the main process, and
    the wall-clock times of its stages (``(stage, start, seconds)``, for the main job's table)."""

    result: TrainResult
    output_dir: Path
    is_main_process: bool = True
    facts: dict[str, Any] = field(default_factory=dict)
    stages: list[tuple[str, float, float]] = field(default_factory=list)


def train_one_run(cfg: Recipe, options: RunOptions, method: Method | None = None) -> TrainedRun:
    """Build the model and task of ``cfg.method`` and train it as ``options`` say (resuming from the last checkpoint
    unless ``options.resume`` is off; the recipe's ``outputs/<name>/`` unless ``options.output_dir``).

    ``method``: the recipe's method when the caller validated the recipe already (it is validated here otherwise).
    A soup's first seed gets ``options.ready`` (called once the task is built and the teacher rows of the run's
    draws are embedded, before its first step, i.e. once the caches hold what this recipe needs: the soup starts
    its other seeds' processes then) and ``options.draws_of`` (the other seeds, whose teacher rows this run embeds
    with its own: one prefetch embeds the rows they share once, see :func:`phrasezoo.training.loop.train`).
    """
    accelerator = _accelerator(cfg)
    options = dataclasses.replace(options, output_dir=Path(options.output_dir or cfg.output_dir))
    method = method or validate_recipe(cfg)
    if accelerator.is_main_process:  # before the data build: a changed recipe fails at once, not after minutes
        check_and_record_recipe(cfg, options.output_dir, options.resume)
    accelerator.wait_for_everyone()
    accelerator.print(
        f">> {cfg.name}: {method.description}; backbone {cfg.backbone or 'none (built from the recipe)'}; "
        f"output {options.output_dir}; {accelerator.num_processes} process(es), {accelerator.distributed_type}"
    )
    started, teacher_before = time.time(), teacher.seconds_spent()
    # same recipe + seed -> same weights: fresh modules are initialised from the seeded generator (not torch's
    # per-process random seed), and the data build starts from the same state whether or not its cache was warm
    seed_everything(cfg.training.seed)
    model = create_model(cfg, accelerator, method=method)
    seed_everything(cfg.training.seed)
    task = method.build_task(cfg, model, accelerator)
    built, teacher_built = time.time(), teacher.seconds_spent()
    result = train(model, task, cfg.training, options, accelerator)
    stages = _stages(cfg.training.seed, started, built, time.time(), teacher_built - teacher_before,
                     teacher.seconds_spent() - teacher_built, options.draws_of)  # fmt: skip
    facts = training_facts(cfg, result, accelerator, task) if accelerator.is_main_process else {}
    return TrainedRun(result, options.output_dir, accelerator.is_main_process, facts, stages)


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
    # several processes (torchrun / accelerate launch --multi_gpu) on a machine without CUDA: Accelerate only
    # forms the gloo process group (MULTI_CPU) when asked for the CPU explicitly; otherwise each process would
    # believe it is alone and train the same batches
    multi_process_cpu = launched_processes() > 1 and not torch.cuda.is_available()
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


def seed_command(cfg: Recipe, seed: int, options: RunOptions) -> list[str]:
    """The arguments after ``python`` that train seed ``seed`` of the soup recipe ``cfg`` into
    ``options.output_dir`` in a process of its own (:func:`main`), resuming and stopping as ``options`` say."""
    command = ["-m", __name__, json.dumps(cfg.to_dict()), "--seed", str(seed), "--output-dir", str(options.output_dir)]
    if not options.resume:
        command.append("--no-resume")
    if options.stop_after_steps is not None:
        command += ["--stop-after-steps", str(options.stop_after_steps)]
    return command


def main(argv: list[str] | None = None) -> None:
    """One seed of a soup in this process (see the module docstring); the soup validated the recipe."""
    parser = argparse.ArgumentParser(description="Train one seed of a soup recipe in a process of its own.")
    parser.add_argument("recipe", help="the soup's recipe as JSON (validated by the soup)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--no-resume", action="store_true")
    parser.add_argument("--stop-after-steps", type=int)
    args = parser.parse_args(argv)
    cfg = recipe_from_dict(json.loads(args.recipe))
    cfg.training.seed, cfg.training.soup_seeds = args.seed, None
    options = RunOptions(args.output_dir, not args.no_resume, args.stop_after_steps, progress=False)
    run = train_one_run(cfg, options, method=get_method(cfg.method))  # validated once, by the soup
    summary = {"seed": args.seed, "steps": run.result.steps, "seconds": run.result.seconds, "stages": run.stages}
    atomic_write_text(Path(args.output_dir) / RUN_SUMMARY, json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
