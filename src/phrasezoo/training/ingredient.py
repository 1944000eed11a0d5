"""One soup ingredient in a process of its own, so that a soup's seeds train side by side (one per core).

:mod:`phrasezoo.training.soup` starts ``python -m phrasezoo.training.ingredient <recipe as JSON> --seed S
--output-dir D`` with the recipe it validated; the run is the one the soup would train in its own process (same
recipe, seed and thread count, so the same weights), and ``D/ingredient.json`` tells the soup how long it took.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import Recipe, recipe_from_dict
from phrasezoo.training.run import run_training
from phrasezoo.zoo.registry import get_method

INGREDIENT_FILE = "ingredient.json"


def ingredient_command(
    cfg: Recipe, seed: int, output_dir: Path, resume: bool, stop_after_steps: int | None
) -> list[str]:
    """The arguments after ``python`` that train seed ``seed`` of the soup recipe ``cfg`` into ``output_dir``."""
    command = ["-m", __name__, json.dumps(cfg.to_dict()), "--seed", str(seed), "--output-dir", str(output_dir)]
    if not resume:
        command.append("--no-resume")
    if stop_after_steps is not None:
        command += ["--stop-after-steps", str(stop_after_steps)]
    return command


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recipe", help="the soup's recipe as JSON (validated by the soup)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--no-resume", action="store_true")
    parser.add_argument("--stop-after-steps", type=int)
    args = parser.parse_args(argv)
    cfg = recipe_from_dict(json.loads(args.recipe))
    cfg.training.seed, cfg.training.soup_seeds = args.seed, None
    run = run_training(
        cfg,
        args.output_dir,
        resume=not args.no_resume,
        stop_after_steps=args.stop_after_steps,
        progress=False,
        method=get_method(cfg.method),  # validated once, by the soup that started this process
    )
    summary = {"seed": args.seed, "steps": run.result.steps, "seconds": run.result.seconds, "stages": run.stages}
    atomic_write_text(Path(args.output_dir) / INGREDIENT_FILE, json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
