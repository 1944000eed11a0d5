"""The training entry point, train -> export: ``phrasezoo train``, ``train.py`` and ``python -m phrasezoo.cli train``
(under ``accelerate launch``, one process per device). Light on purpose: every accelerate process imports it, so it
imports neither the evaluation workflow nor the main job (:mod:`phrasezoo.pipeline`).

A bad recipe or argument (an unknown recipe name, a key the method does not take, a precision or batch size this
machine and launch cannot train, found before any data is built) is one ``error:`` line and exit status 2, as
everywhere in ``phrasezoo``: under a launcher every process finds it, and only the first one says it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from phrasezoo.core.errors import InputError
from phrasezoo.core.recipes import Recipe, load_recipe
from phrasezoo.hub import export as hub_export
from phrasezoo.training.finalize import finalize_model
from phrasezoo.training.loop import RunOptions, first_process
from phrasezoo.training.recipe import TrainedModel, train_recipe

#: seconds a process other than the first waits before it reports a bad recipe (:func:`train_command`)
OTHER_PROCESS_WAIT_S = 10.0
#: the values ``accelerate launch`` warns about when they are not given (two processes on one machine, the
#: precision left to the recipe): the documented command passes them
LAUNCH_FLAGS = "--multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no --dynamo_backend no"


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


def train_command(args: argparse.Namespace) -> int:
    """``phrasezoo train`` and ``train.py``: train and export as :func:`add_train_arguments`'s ``args`` say; the exit
    status. A bad recipe or argument is one ``error:`` line on stderr (the first process's, under a launcher) and 2,
    never a traceback: what ``phrasezoo``'s other commands print (:func:`phrasezoo.core.errors.run_command`)."""
    try:
        train_from_args(args)
    except (InputError, FileNotFoundError) as err:
        if not first_process():
            # the launcher ends every process once one fails: were this one the first to exit, it would end the
            # first process before that one said why. So it waits; if it is still running then, the first process
            # did not fail (a file missing on this machine only), and it speaks for itself
            time.sleep(OTHER_PROCESS_WAIT_S)
            print(f"error (process {os.environ.get('RANK')}): {err}", file=sys.stderr, flush=True)
            return 2
        print(f"error: {err}", file=sys.stderr, flush=True)
        return 2
    return 0


def main(argv: list[str] | None = None) -> None:
    """``train.py``: train a recipe and export it (:func:`train_command`; exits with its status when it fails)."""
    parser = argparse.ArgumentParser(
        description="Train a phrasezoo model from its recipe, e.g. `python train.py pearl-mini` (one process) or "
        f"`accelerate launch {LAUNCH_FLAGS} train.py hub_configs/pearl-mini.yaml` (several). Resumes from the last "
        "checkpoint in outputs/<name>/checkpoints unless --no-resume; exports outputs/<name>/ as a Hub-ready folder "
        "at the end.",
    )
    add_train_arguments(parser)
    status = train_command(parser.parse_args(argv))
    if status:
        raise SystemExit(status)
