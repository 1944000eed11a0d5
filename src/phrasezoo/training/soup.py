"""Model soups: the runs of one recipe trained with several seeds, their weights averaged into one model.

A uniform soup (Wortsman et al., 2022, "Model soups: averaging weights of multiple fine-tuned models improves
accuracy without increasing inference time") averages models fine-tuned from the *same* pretrained weights: they stay
in one basin, so their mean is a good model, often better than each of them. Only tensors that every run started
from identically can be averaged, so the soup averages exactly the tensors of ``checkpoints/initial.safetensors``
(the pretrained phrase encoder) and checks that every run has the same ones. Modules that each seed initialises at
random (PEARL's character encoder and type head) have no shared start: averaging them would mix unrelated units, so
the soup keeps the first run's. Training the seeds (side by side where the cores allow) is
:func:`phrasezoo.training.recipe.train_recipe`'s; the GPU job soups its runs here too.

The soup is written as a checkpoint folder of the output run (``checkpoints/step-NNNNNN/model.safetensors`` with
``trainer_state.json`` naming the ingredients, and the shared ``initial.safetensors``), so the dev-suite selection
(:func:`phrasezoo.training.selection.select_on_dev`) and ``phrasezoo export --from-checkpoint`` read it like any run.
It has no optimizer state: a soup is a finished model, not a run to resume.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from phrasezoo.core.files import atomic_write_text
from phrasezoo.objectives.weight_averaging import soup_state_dicts
from phrasezoo.training.checkpoint import SOUP_KEY, STATE_FILE, latest_checkpoint, save_state_dict


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
