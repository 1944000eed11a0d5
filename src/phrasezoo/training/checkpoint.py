"""Training checkpoints: safetensors only, written atomically, resumable.

A checkpoint is a folder ``checkpoints/step-000200/`` with ``model.safetensors`` (the training model's state),
``optimizer.safetensors`` (the optimizer's tensors, flattened) and ``trainer_state.json`` (step, optimizer
hyper-parameters and non-tensor state). It is written into a temporary folder and renamed into place, and the
``latest`` pointer file is replaced atomically afterwards, so an interruption at any moment leaves either the old
or the new checkpoint, never half of one. Nothing is pickled.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from phrasezoo.core.files import atomic_write_text, current_umask, readable_replace

STATE_FILE = "trainer_state.json"
SOUP_KEY = "soup"  # trainer_state.json key that marks a soup checkpoint (phrasezoo.training.soup)


def save_state_dict(state: dict[str, torch.Tensor], path: Path) -> None:
    """Save tensors as safetensors atomically (shared storage is cloned, as safetensors requires)."""
    tensors = {key: value.detach().to("cpu").contiguous().clone() for key, value in state.items()}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    save_file(tensors, tmp)
    readable_replace(tmp, path)


def optimizer_to_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state dict into safetensors-able tensors and JSON-able metadata."""
    state = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, Any] = {}
    for param_id, entries in state["state"].items():
        for key, value in entries.items():
            if torch.is_tensor(value):
                tensors[f"{param_id}.{key}"] = value
            else:
                scalars[f"{param_id}.{key}"] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def optimizer_from_tensors(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for flat, value in list(tensors.items()) + list(meta["scalars"].items()):
        param_id, key = flat.split(".", 1)
        state.setdefault(int(param_id), {})[key] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def save_checkpoint(
    directory: Path,
    step: int,
    model_state: dict[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    extra: dict[str, Any] | None = None,
    keep: int = 2,
) -> Path:
    """Write ``directory/step-XXXXXX`` atomically, point ``latest`` at it and prune all but ``keep`` checkpoints."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"step-{step:06d}"
    tmp = Path(tempfile.mkdtemp(dir=directory, prefix=".tmp-"))
    tmp.chmod(0o777 & ~current_umask())  # mkdtemp makes owner-only folders
    try:
        save_state_dict(model_state, tmp / "model.safetensors")
        opt_tensors, opt_meta = optimizer_to_tensors(optimizer)
        save_state_dict(opt_tensors, tmp / "optimizer.safetensors")
        state = {"step": step, "optimizer": opt_meta, **(extra or {})}
        atomic_write_text(tmp / STATE_FILE, json.dumps(state, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    atomic_write_text(directory / "latest", final.name)
    for old in sorted(directory.glob("step-*"))[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(directory: Path) -> Path | None:
    """The newest complete checkpoint in ``directory`` (the ``latest`` pointer, else the last complete folder)."""
    pointer = directory / "latest"
    if pointer.exists():
        candidate = directory / pointer.read_text().strip()
        if (candidate / STATE_FILE).exists():
            return candidate
    complete = [p for p in sorted(directory.glob("step-*")) if (p / STATE_FILE).exists()]
    return complete[-1] if complete else None


def load_checkpoint(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any], dict[str, Any]]:
    """Return ``(model_state, optimizer_state_dict, trainer_state)`` of a checkpoint folder (an empty optimizer
    state for a checkpoint that has none, e.g. a model soup: :mod:`phrasezoo.training.soup`)."""
    state = json.loads((path / STATE_FILE).read_text())
    optimizer_file = path / "optimizer.safetensors"
    optimizer_state = (
        optimizer_from_tensors(load_file(optimizer_file), state["optimizer"]) if optimizer_file.exists() else {}
    )
    return load_file(path / "model.safetensors"), optimizer_state, state


def blend_with_initial(
    state: dict[str, torch.Tensor], initial: dict[str, torch.Tensor], weight: float
) -> dict[str, torch.Tensor]:
    """``(1 - weight) * state + weight * initial`` for the floating tensors saved at the start (weight averaging,
    computed out of place from a checkpoint); other tensors are returned unchanged."""
    return {
        k: (1.0 - weight) * v + weight * initial[k] if k in initial and v.is_floating_point() else v
        for k, v in state.items()
    }
