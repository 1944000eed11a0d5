"""Refuse to resume a run under a changed recipe: the checkpoints would mix two recipes in one set of weights.

Each run records what it computes from (``checkpoints/recipe.json``: the recipe without its names, card text,
evaluation section and bookkeeping). A resumed run must match it; a changed recipe is an error that says which keys
changed and how to go on (another name, or ``--no-resume``). A finished single run of the same recipe and seed may
stand in for a soup ingredient, since ``soup_seeds`` is not part of what a run computes from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import Recipe
from phrasezoo.training.checkpoint import latest_checkpoint
from phrasezoo.zoo.registry import get_method

RECIPE_FILE = "recipe.json"
#: recipe sections that name, describe or evaluate a run without changing its weights
_NOT_COMPUTED = ("name", "repo_id", "version", "description", "eval")
#: training keys that only schedule bookkeeping or processes, stop early as a safety, or apply after the last step (a
#: method's own after-training arguments are declared on its schema: registry.Arg.after_training)
_NOT_COMPUTED_TRAINING = (
    "soup_seeds",
    "run_memory_gb",
    "time_budget_minutes",
    "checkpoint_every",
    "keep_checkpoints",
    "log_every",
    "weight_average",
)

#: training keys added after runs were recorded, left out of the record at their default value
_NEWER_DEFAULTS = {"gradient_accumulation_steps": 1}


def after_training_args(method: str) -> tuple[str, ...]:
    """The method's ``training.method_args`` that act after the last step (:attr:`Arg.after_training`)."""
    schema = get_method(method).args.get("task") or {}
    return tuple(name for name, arg in schema.items() if arg.after_training)


def _drop_after_training(recipe: dict[str, Any]) -> dict[str, Any]:
    method_args = recipe.get("training", {}).get("method_args") or {}
    for key in after_training_args(recipe["method"]) if method_args else ():
        method_args.pop(key, None)
    return recipe


def training_recipe(cfg: Recipe) -> dict[str, Any]:
    """The part of ``cfg`` a run's checkpoints depend on, as plain JSON values."""
    recipe = _drop_after_training(cfg.to_dict())
    for key in _NOT_COMPUTED:
        recipe.pop(key, None)
    for key in _NOT_COMPUTED_TRAINING:
        recipe["training"].pop(key, None)
    for key, default in _NEWER_DEFAULTS.items():  # runs recorded before the key existed resume unchanged
        if recipe["training"].get(key) == default:
            recipe["training"].pop(key)
    return json.loads(json.dumps(recipe, sort_keys=True, default=str))


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): value}


def changed_keys(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Dotted keys whose values differ between two recipes (present in one only included)."""
    a, b = _flatten(recorded), _flatten(current)
    return sorted(k for k in set(a) | set(b) if a.get(k, "<unset>") != b.get(k, "<unset>"))


def check_and_record_recipe(cfg: Recipe, output_dir: str | Path, resume: bool) -> None:
    """Raise ``ValueError`` when ``output_dir`` holds checkpoints of another recipe and ``resume`` would continue
    them; otherwise record this run's recipe there. Runs from before the record existed resume unchecked."""
    ckpt_dir = Path(output_dir) / "checkpoints"
    path = ckpt_dir / RECIPE_FILE
    current = training_recipe(cfg)
    if resume and path.exists() and latest_checkpoint(ckpt_dir) is not None:
        recorded = _drop_after_training(json.loads(path.read_text()))  # records kept such keys before
        changed = changed_keys(recorded, current)
        if changed:
            shown = ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else "")
            raise ValueError(
                f"{output_dir} holds checkpoints of another recipe (it differs in: {shown}); resuming would mix two "
                "recipes in one set of weights. Train under another name (--set name=...) or start this one over "
                "with --no-resume."
            )
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(current, indent=2, sort_keys=True) + "\n")
