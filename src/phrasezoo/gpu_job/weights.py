"""Weights that travel: fp16 state dicts, vocabulary-row cuts, size-limited safetensors shards, and reassembly.

**fp16.** Parameters travel as float16 (half the bytes of float32; a training run upcasts them to float32 master
weights). Buffers travel as float16 only where that loses nothing that matters (no value flushed to zero, none
overflowing), else as float32 (e.g. word probabilities of 1e-9).

**Vocabulary-row cut.** Tensors whose first dimension is the vocabulary (input embeddings, a frozen target matrix)
are the bulk of a small model. A training run reads only the rows of the token ids its batches hold, so only those
rows need to travel (:func:`cut_rows`). There the other rows are filled with NaN (:func:`expand_rows`): a run that
reads one anyway gets NaN losses and weights, which :func:`check_cut_rows` reports, instead of silently training
on made-up values. A row that no batch reads gets a zero gradient, so Adam(W) leaves it where it started apart from
decoupled weight decay, which :func:`untouched_row_factor` replays exactly when the rows are put back here.

**Shards.** :func:`write_shards` splits a state dict into safetensors files of at most ``max_bytes`` each (a tensor
larger than that is split by rows, keys ``name#first_row``); :func:`read_shards` joins them again.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from phrasezoo.core.files import current_umask
from phrasezoo.training.loop import learning_rate_factor

FP16_MAX = 65504.0
CHUNK_SEPARATOR = "#"


def travel_dtypes(state: dict[str, torch.Tensor], parameters: Iterable[str]) -> dict[str, torch.Tensor]:
    """``state`` as it travels: floating parameters in float16; floating buffers in float16 where exact enough."""
    parameters = set(parameters)
    out = {}
    for name, tensor in state.items():
        tensor = tensor.detach().cpu()
        if tensor.is_floating_point():
            half = tensor.to(torch.float16)
            tensor = half if name in parameters or _fp16_holds(tensor, half) else tensor.to(torch.float32)
        out[name] = tensor.contiguous()
    return out


#: a buffer stays float32 when more than this share of its non-zero values would become zero in float16
FP16_FLUSH_LIMIT = 1e-3


def _fp16_holds(tensor: torch.Tensor, half: torch.Tensor) -> bool:
    """No value overflows float16, and at most a stray few (:data:`FP16_FLUSH_LIMIT`) non-zero values become zero
    (a word vector's 1e-9 component may; a table of 1e-9 probabilities may not)."""
    if not torch.isfinite(half).all() and torch.isfinite(tensor).all():
        return False
    nonzero = int((tensor != 0).sum())
    flushed = int(((tensor != 0) & (half == 0)).sum())
    return flushed <= FP16_FLUSH_LIMIT * nonzero


def as_float32(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Floating tensors in float32 (how training holds its master weights)."""
    return {k: v.float() if v.is_floating_point() else v for k, v in state.items()}


# ------------------------------------------------------------------------------------------------ row cuts
def vocabulary_tensors(state: dict[str, torch.Tensor], vocab_size: int) -> list[str]:
    """Names of the tensors with one row per vocabulary entry."""
    return [name for name, t in state.items() if t.dim() >= 1 and t.shape[0] == vocab_size]


def token_ids(value, vocab_size: int, into: set[int]) -> None:
    """Add every integer in ``value`` (a batch: tensors, lists, dicts, objects with tensor attributes) that could
    be a token id (``0 <= id < vocab_size``) to ``into``. Over-counting (masks, positions) only keeps rows."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() and value.dtype != torch.bool and value.numel():
            ids = value.detach().reshape(-1).unique()
            into.update(ids[(ids >= 0) & (ids < vocab_size)].tolist())
    elif isinstance(value, dict):
        for item in value.values():
            token_ids(item, vocab_size, into)
    elif isinstance(value, (list, tuple)):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            into.update(v for v in value if 0 <= v < vocab_size)
        else:
            for item in value:
                token_ids(item, vocab_size, into)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for item in vars(value).values():
            token_ids(item, vocab_size, into)


def cut_rows(state: dict[str, torch.Tensor], names: Iterable[str], rows: torch.Tensor) -> dict[str, torch.Tensor]:
    """``state`` with the ``names`` tensors reduced to ``rows`` (sorted int64 row indices)."""
    names = set(names)
    return {k: (v.index_select(0, rows).contiguous() if k in names else v) for k, v in state.items()}


def expand_rows(
    state: dict[str, torch.Tensor], names: Iterable[str], rows: torch.Tensor, vocab_size: int
) -> dict[str, torch.Tensor]:
    """Full-size tensors from cut ones: the travelled rows in place, every other row NaN (see the module doc)."""
    out = dict(state)
    for name in names:
        cut = state[name]
        full = torch.full((vocab_size, *cut.shape[1:]), float("nan"), dtype=cut.dtype)
        full[rows] = cut
        out[name] = full
    return out


def check_cut_rows(state: dict[str, torch.Tensor], names: Iterable[str], rows: torch.Tensor) -> list[str]:
    """Problems of a trained state whose ``names`` tensors were expanded with NaN rows: a travelled row that is
    not finite (the run read a row that did not travel, or diverged), or a NaN row that changed."""
    problems = []
    for name in names:
        tensor = state[name].detach().float().cpu()
        kept = tensor.index_select(0, rows)
        if not torch.isfinite(kept).all():
            problems.append(f"{name}: travelled rows are not finite")
        mask = torch.ones(tensor.shape[0], dtype=torch.bool)
        mask[rows] = False
        if not torch.isnan(tensor[mask]).all():
            problems.append(f"{name}: rows that did not travel changed")
    return problems


def untouched_row_factor(cfg, parameter: str, steps: int, total_steps: int) -> float:
    """What ``steps`` optimizer steps multiply a row by when its gradient is always zero.

    Adam/AdamW moments stay zero, so the update is zero; AdamW's decoupled weight decay still multiplies every
    row by ``1 - lr_t * weight_decay`` per step (``lr_t`` the parameter group's rate under the schedule). Adam's
    coupled decay would put a non-zero gradient on such rows, so a row cut refuses it (:func:`row_cut_allowed`).
    """
    if not cfg.weight_decay or cfg.optimizer != "adamw":
        return 1.0
    heads = dict(cfg.head_learning_rates or {})
    base = next((rate for prefix, rate in heads.items() if parameter.startswith(prefix)), cfg.learning_rate)
    log_factor = sum(
        math.log1p(-base * learning_rate_factor(cfg, step, total_steps) * cfg.weight_decay) for step in range(steps)
    )
    return math.exp(log_factor)


def row_cut_allowed(cfg) -> str | None:
    """Why the recipe's optimizer rules a row cut out, or None."""
    if cfg.weight_decay and cfg.optimizer != "adamw":
        return (
            f"optimizer {cfg.optimizer} with weight_decay {cfg.weight_decay} puts a gradient on every row, so rows "
            "that no batch reads still move; use --row-cut off"
        )
    if cfg.lora:
        return "LoRA wraps the embeddings; use --row-cut off"
    return None


# ---------------------------------------------------------------------------------------------------- shards
def write_shards(state: dict[str, torch.Tensor], folder: Path, prefix: str, max_bytes: int) -> list[Path]:
    """Write ``state`` as ``prefix-00001.safetensors``... of at most ``max_bytes`` each (header included)."""
    pieces: list[tuple[str, torch.Tensor]] = []
    budget = max_bytes - (1 << 16)  # room for the JSON header
    for name in sorted(state):
        if CHUNK_SEPARATOR in name:
            raise ValueError(f"tensor name {name!r} contains {CHUNK_SEPARATOR!r}: it cannot be sharded.")
        tensor = state[name].contiguous()
        size = tensor.numel() * tensor.element_size()
        if size <= budget or tensor.dim() == 0:
            pieces.append((name, tensor))
            continue
        row_bytes = max(1, size // tensor.shape[0])
        per_chunk = max(1, budget // row_bytes)
        for start in range(0, tensor.shape[0], per_chunk):
            pieces.append((f"{name}{CHUNK_SEPARATOR}{start}", tensor[start : start + per_chunk].clone()))
    shards: list[dict[str, torch.Tensor]] = []
    used: list[int] = []
    for key, tensor in pieces:  # first fit, in name order
        size = tensor.numel() * tensor.element_size()
        for i, shard in enumerate(shards):
            if used[i] + size <= budget:
                shard[key] = tensor
                used[i] += size
                break
        else:
            shards.append({key: tensor})
            used.append(size)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, shard in enumerate(shards, start=1):
        path = folder / f"{prefix}-{i:05d}.safetensors"
        save_file(shard, str(path), metadata={"format": "pt", "shard": f"{i}/{len(shards)}"})
        path.chmod(0o666 & ~current_umask())
        paths.append(path)
    return paths


def read_shards(paths: Iterable[Path]) -> dict[str, torch.Tensor]:
    """Join shards written by :func:`write_shards` into one state dict."""
    chunks: dict[str, list[tuple[int, torch.Tensor]]] = defaultdict(list)
    state: dict[str, torch.Tensor] = {}
    for path in paths:
        for key, tensor in load_file(str(path)).items():
            if CHUNK_SEPARATOR in key:
                name, start = key.rsplit(CHUNK_SEPARATOR, 1)
                chunks[name].append((int(start), tensor))
            else:
                state[key] = tensor
    for name, parts in chunks.items():
        parts.sort(key=lambda part: part[0])
        state[name] = torch.cat([tensor for _, tensor in parts])
    return state


def state_bytes(state: dict[str, torch.Tensor]) -> int:
    """Bytes of the tensors of ``state``."""
    return sum(t.numel() * t.element_size() for t in state.values())
