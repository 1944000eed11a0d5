"""Train a zoo model from its recipe: build the model and task of its method, run the loop, collect the card facts.

Export is not done here (the training workflow does not know the hub workflow): :mod:`phrasezoo.pipeline` runs
train -> export (``train.py``, ``phrasezoo train``) and train -> export -> evaluate -> card (``phrasezoo pipeline``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from phrasezoo.recipes import Recipe
from phrasezoo.registry import create_model, validate_recipe
from phrasezoo.resources import backbone_hub_id
from phrasezoo.training.recipe_guard import check_and_record_recipe
from phrasezoo.training.trainer import TrainResult, effective_mixed_precision, seed_everything, train


@dataclass
class TrainedRun:
    """A finished training run: the loop's result, the facts for the card, and whether this is the main process."""

    result: TrainResult
    output_dir: Path
    is_main_process: bool = True
    facts: dict[str, Any] = field(default_factory=dict)


def run_training(
    cfg: Recipe,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
) -> TrainedRun:
    """Build the model and task of ``cfg.method`` and train it (resuming from the last checkpoint)."""
    from accelerate import Accelerator

    # several processes (torchrun / accelerate launch --multi_gpu) on a machine without CUDA: Accelerate only
    # forms the gloo process group (MULTI_CPU) when asked for the CPU explicitly; otherwise each process would
    # believe it is alone and train the same batches
    multi_process_cpu = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not torch.cuda.is_available()
    accelerator = Accelerator(cpu=multi_process_cpu)
    if accelerator.device.type == "cpu" and accelerator.num_processes > 1:
        # several CPU processes share the cores: one thread pool per process, not one per core each
        torch.set_num_threads(max(1, (os.cpu_count() or 2) // accelerator.num_processes))
    if cfg.training.num_threads:
        torch.set_num_threads(cfg.training.num_threads)
    output_dir = Path(output_dir or cfg.output_dir)
    method = validate_recipe(cfg)
    if accelerator.is_main_process:  # before the data build: a changed recipe fails at once, not after minutes
        check_and_record_recipe(cfg, output_dir, resume)
    accelerator.wait_for_everyone()
    accelerator.print(
        f">> {cfg.name}: {method.description}; backbone {cfg.backbone or 'none (built from the recipe)'}; "
        f"output {output_dir}; {accelerator.num_processes} process(es), {accelerator.distributed_type}"
    )
    # same recipe + seed -> same weights: fresh modules are initialised from the seeded generator (not torch's
    # per-process random seed), and the data build starts from the same state whether or not its cache was warm
    seed_everything(cfg.training.seed)
    model = create_model(cfg, accelerator)
    seed_everything(cfg.training.seed)
    task = method.build_task(cfg, model, accelerator)
    result = train(
        model,
        task,
        cfg.training,
        output_dir,
        accelerator=accelerator,
        resume=resume,
        stop_after_steps=stop_after_steps,
        progress=progress,
    )
    facts = training_facts(cfg, result, accelerator, task) if accelerator.is_main_process else {}
    return TrainedRun(result, output_dir, accelerator.is_main_process, facts)


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
