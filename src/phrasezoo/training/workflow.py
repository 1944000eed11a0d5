"""The training workflow's front door: a recipe in, its final model out (trained, not exported).

The recipe is validated here, once; a recipe with ``training.soup_seeds`` is a soup of one run per seed
(:mod:`phrasezoo.training.soup`, side by side where the cores allow), any other one run (:mod:`phrasezoo.training.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from phrasezoo.core.recipes import Recipe
from phrasezoo.training.run import TrainedModel, run_training
from phrasezoo.training.soup import train_soup
from phrasezoo.zoo.registry import validate_recipe


def train_recipe(
    cfg: Recipe,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
    workers: int | None = None,
    spare: Callable[[], None] | None = None,
) -> TrainedModel:
    """Validate ``cfg`` and train it (resuming from the last checkpoints); ``workers``: soup ingredients trained at
    once (default :func:`phrasezoo.training.soup.soup_workers`). ``spare`` is called once, to start independent work
    beside the ingredients: with the first one's task build if they take every core, else when a core falls idle. The recipe's ``num_threads`` holds for
    its runs only: torch's thread count is restored afterwards, for what the caller does next."""
    method = validate_recipe(cfg)
    threads = torch.get_num_threads()
    try:
        if cfg.training.soup_seeds:
            return train_soup(cfg, method, output_dir, resume, stop_after_steps, progress, workers, spare)
        run = run_training(cfg, output_dir, resume, stop_after_steps, progress, method=method)
        return TrainedModel(run.result.model, run.output_dir, run.facts, run.is_main_process, run.stages)
    finally:
        torch.set_num_threads(threads)
