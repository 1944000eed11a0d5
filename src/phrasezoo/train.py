"""The training entry point, train -> export: ``phrasezoo train`` and ``train.py`` (``accelerate launch train.py
<recipe>``, one process per device). Light on purpose: every accelerate process imports it, so it imports neither
the evaluation workflow nor the main job (:mod:`phrasezoo.pipeline`)."""

from __future__ import annotations

import argparse
import os

from phrasezoo.core.recipes import Recipe, load_recipe
from phrasezoo.hub import export as hub_export
from phrasezoo.training.finalize import finalize_model
from phrasezoo.training.loop import RunOptions
from phrasezoo.training.recipe import TrainedModel, train_recipe


def train_and_export(cfg: Recipe, options: RunOptions, card: bool = True) -> TrainedModel:
    """Train ``cfg`` as ``options`` say (resuming; a soup with ``training.soup_seeds``) and export its folder once
    (main process)."""
    trained = train_recipe(cfg, options)
    if trained.is_main_process:
        facts = {**trained.facts, **finalize_model(cfg, trained.model)}
        hub_export.export_model(trained.model, trained.output_dir, cfg, facts=facts, card=card)
        print(f">> exported {trained.output_dir} ({trained.facts.get('training time (min)')} min of training)")
    return trained


def train_from_args(args: argparse.Namespace) -> TrainedModel:
    """``phrasezoo train`` / ``train.py``: the arguments of :func:`add_train_arguments`."""
    if args.no_progress:
        os.environ["TQDM_DISABLE"] = "1"  # every tqdm bar, including those of datasets and stage helpers
    cfg = load_recipe(args.config, args.overrides)
    options = RunOptions(args.output_dir, not args.no_resume, args.stop_after_steps, not args.no_progress)
    return train_and_export(cfg, options)


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``phrasezoo train`` and ``train.py``."""
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


def main(argv: list[str] | None = None) -> None:
    """``train.py``: train a recipe and export it."""
    parser = argparse.ArgumentParser(
        description="Train a phrasezoo model from its recipe, e.g. `accelerate launch train.py "
        "hub_configs/pearl-mini.yaml`. Resumes from the last checkpoint in outputs/<name>/checkpoints unless "
        "--no-resume; exports outputs/<name>/ as a Hub-ready folder at the end.",
    )
    add_train_arguments(parser)
    train_from_args(parser.parse_args(argv))
