"""Pack a recipe's training run for a machine that has a GPU but no data caches, data builders or network.

:func:`build_pack` builds the recipe's real model and training task exactly as ``phrasezoo train`` does (one per
soup seed), then writes into one folder (``.devicepack/<recipe>/`` by default):

* ``manifest.json``: the resolved recipe, its overrides, the git commit, the data fingerprint (digest of the task
  state), the planned steps per seed, the classes to rebuild, the cuts made to fit, file sizes and digests;
* ``model/config.json`` and ``tokenizer/``: the model's config and tokenizer;
* ``weights.safetensors.gz``: the first seed's initial weights in fp16 (:mod:`.weights`), gzipped, and
  ``weights-seed-<s>.safetensors`` with the tensors another seed initialises differently (a soup's heads);
* ``rows.safetensors``: the vocabulary rows that travelled, when the weights were row-cut to fit;
* ``task.json.gz`` + ``task.npz``: the task's examples and state (:mod:`.codec`; no pickle).

Everything must fit ``max_mib`` (the machine receives at most 64 MiB, the repository included, :mod:`.travel`): the
pack refuses with a clear message otherwise. ``phrasezoo device pack`` (:func:`pack_command`) then self-tests the pack
and prints and records its run call (:mod:`.calls`).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from accelerate import Accelerator
from safetensors.torch import save_file

from phrasezoo.core.files import REPO_ROOT, atomic_write_text, current_umask
from phrasezoo.core.recipes import Recipe, load_recipe
from phrasezoo.gpu_job.calls import print_call, record_pack, selftest
from phrasezoo.gpu_job.codec import task_fingerprint, write_task_state
from phrasezoo.gpu_job.teachers import pack_teacher_rows
from phrasezoo.gpu_job.travel import (
    DEFAULT_MAX_MIB,
    MANIFEST,
    PACK_FORMAT,
    RETURN_FILES,
    RETURN_OTHER_FILES,
    SHARD_MIB,
    MiB,
    PackTooLarge,
    check_fits,
    file_records,
    folder_size,
)
from phrasezoo.gpu_job.weights import (
    cut_rows,
    row_cut_allowed,
    state_bytes,
    token_ids,
    travel_dtypes,
    vocabulary_tensors,
)
from phrasezoo.training.loop import RunOptions, plan_steps, seed_everything, train
from phrasezoo.zoo.registry import create_model, validate_recipe

#: where packs go, in the repository root (git-ignored): ``.devicepack/<recipe>/``
PACK_ROOT = Path(".devicepack")


def device_seeds(training) -> list[int]:
    """The seeds a recipe trains: one per soup ingredient, else its seed."""
    return list(training.soup_seeds) if training.soup_seeds else [training.seed]


def git_commit(repo: Path) -> dict[str, Any]:
    """The checkout's commit and whether its code or recipes (``src/``, ``hub_configs/``) differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src", "hub_configs"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


# --------------------------------------------------------------------------------------------- the command
def pack_command(args: argparse.Namespace) -> int:
    """``phrasezoo device pack``: pack the recipe into ``.devicepack/<name>/`` (or ``--to``), self-test the pack,
    print its run call and add it to the packs record; 2 when it does not fit."""
    cfg = load_recipe(args.config, args.overrides)
    out = Path(args.to) if args.to else REPO_ROOT / PACK_ROOT / cfg.name
    extra = {"recipe_source": args.config, "device_minutes": args.device_minutes}
    try:
        manifest = build_pack(cfg, args.overrides, out, row_cut=args.row_cut, max_mib=args.max_mib, repo=REPO_ROOT,
                              progress=not args.no_progress, extra=extra)  # fmt: skip
    except PackTooLarge as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f">> packed {cfg.name}: {manifest['pack_mib']} MiB ({manifest['training_examples']} training examples, "
        f"{len(manifest['seeds'])} run(s) x {manifest['steps_per_seed']} steps; weights back: "
        f"{manifest['returned_weights_mib']} MiB){'; ' + manifest['row_cut']['note'] if manifest['row_cut'] else ''}",
        flush=True,
    )
    test = None if args.no_selftest else selftest(out)
    print_call(out, args.timeout_s)
    if args.record:
        record_pack(Path(args.record), out, manifest, test, args.timeout_s)
    return 0


# --------------------------------------------------------------------------------------------- the row scan
class _RowScan:
    """A task that only makes the real task's batches and records the token ids in them (see :func:`scan_rows`)."""

    averaged_prefixes: tuple[str, ...] = ()
    lora_modules_to_save: list[str] = []

    def __init__(self, task, vocab_size: int):
        self.task = task
        self.vocab_size = vocab_size
        self.ids: set[int] = set()

    def num_examples(self) -> int:
        return self.task.num_examples()

    def make_batch(self, indices, rng):
        token_ids(self.task.make_batch(indices, rng), self.vocab_size, self.ids)
        return {}

    def prefetch(self, steps) -> None:
        """The real task's look-ahead (its teacher rows are embedded now, and noted when a teacher records)."""
        prefetch = getattr(self.task, "prefetch", None)
        if prefetch is not None:
            prefetch(steps)

    def compute_loss(self, model, batch):
        return model.weight.sum() * 0.0, {}

    def prepare(self, model, accelerator) -> None:
        """Nothing: the scan trains no model."""

    def facts(self) -> dict[str, Any]:
        return {}


def scan_rows(task, training, seeds: list[int], vocab_size: int, progress: bool = True) -> set[int]:
    """Token ids that the batches of the planned run read, over every seed.

    The schedule is the real loop's (:func:`phrasezoo.training.loop.train` on a one-weight stand-in model):
    the same indices, per-step random generators and torch seeds, so the ids are those the run will read.
    """
    scan = _RowScan(task, vocab_size)
    accelerator = Accelerator(cpu=True)
    for seed in seeds:
        cfg = dataclasses.replace(
            training,
            seed=seed,
            soup_seeds=None,
            lora=None,
            weight_average=0.0,
            mixed_precision="no",
            checkpoint_every=10**9,
            log_every=10**9,
            time_budget_minutes=None,
            num_threads=None,
        )
        with tempfile.TemporaryDirectory() as scratch:
            train(torch.nn.Linear(1, 1), scan, cfg, RunOptions(scratch, resume=False, progress=progress), accelerator)
    return scan.ids


# ----------------------------------------------------------------------------------------------------- build
def build_models_and_tasks(cfg: Recipe, progress: bool = True):
    """``[(seed, model, task)]`` per seed, built as :func:`phrasezoo.training.one_run.train_one_run` builds them."""
    method = validate_recipe(cfg)
    accelerator = Accelerator(cpu=True)
    built = []
    for seed in device_seeds(cfg.training):
        seeded = dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, seed=seed, soup_seeds=None))
        seed_everything(seed)
        model = create_model(seeded, accelerator)
        seed_everything(seed)
        task = method.build_task(seeded, model, accelerator)
        built.append((seed, model, task))
        if progress:
            print(f">> built seed {seed}: {task.num_examples()} training examples", flush=True)
    return built


def _prepare_for_the_machine(built) -> None:
    """Run, per seed, the work a task does before training that needs this machine's data (a task's
    ``pack_prepare(model)``, e.g. PEARL's character-encoder pretraining on word vectors): its result travels in the
    weights, and the task no longer needs the data on the machine."""
    for seed, model, task in built:
        pack_prepare = getattr(task, "pack_prepare", None)
        if pack_prepare is not None:
            seed_everything(seed)
            pack_prepare(model)


@dataclasses.dataclass
class _Weights:
    """The first seed's weights as they travel: trainable names, travel dtypes, and the vocabulary-row cut."""

    parameters: list[str]
    state: dict[str, torch.Tensor]
    row_names: list[str]
    rows: torch.Tensor | None = None


def build_pack(
    cfg: Recipe,
    overrides: list[str],
    out: Path,
    row_cut: str = "auto",
    max_mib: float = DEFAULT_MAX_MIB,
    repo: Path | None = None,
    progress: bool = True,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build ``cfg``'s models and task and write the pack to ``out`` (replaced); returns its manifest.

    ``row_cut``: ``"auto"`` cuts vocabulary rows only when the pack would not fit ``max_mib`` otherwise; ``"on"``
    always; ``"off"`` never. Raises :class:`PackTooLarge` when it does not fit anyway, or when the trained weights
    would not come back in the run's files.
    """
    _check_pack_options(cfg, row_cut)
    started = time.monotonic()
    built = build_models_and_tasks(cfg, progress)
    _prepare_for_the_machine(built)
    _, model, task = built[0]
    _, total_steps = plan_steps(cfg.training, task.num_examples(), 1)

    vocab_size = len(model.tokenizer)
    seeds = device_seeds(cfg.training)
    scanned, teacher_rows = pack_teacher_rows(  # the machine has no teacher encoder: its rows travel as arrays
        built, lambda task: scan_rows(task, cfg.training, seeds, vocab_size, progress)
    )

    out = _empty_folder(Path(out))
    state_info = _write_task(cfg, built, out)
    weights = _write_model(model, out)
    if _wants_row_cut(cfg, weights, out, row_cut, max_mib):
        if scanned is None:
            print(f">> scanning the planned run's batches for the vocabulary rows they read ({weights.row_names})",
                  flush=True)  # fmt: skip
            scanned = scan_rows(task, cfg.training, seeds, vocab_size, progress)
        _cut_weights(weights, scanned, out)
    save_file(weights.state, str(out / "weights.safetensors"), metadata={"format": "pt"})
    gzip_file(out / "weights.safetensors")  # fp16 weights shrink by ~8%: a few MiB of the 64 that travel
    seed_files = _write_seed_weights(built, weights, out)
    returned = _check_weights_come_back(cfg, weights)
    _make_plain_data(out)
    commit = git_commit(repo or Path.cwd())
    files = file_records(out)
    manifest = {
        "format": PACK_FORMAT,
        "recipe_name": cfg.name,
        "recipe": cfg.to_dict(),
        "overrides": list(overrides),
        **commit,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "data_fingerprint": state_info["digest"],
        "task_class": f"{type(task).__module__}:{type(task).__qualname__}",
        "model_class": f"{type(model).__module__}:{type(model).__qualname__}",
        "training_examples": task.num_examples(),
        "seeds": seeds,
        "steps_per_seed": total_steps,
        "steps": total_steps * len(built),
        "trainable_tensors": weights.parameters,
        "vocabulary_size": vocab_size,
        "row_cut": _row_cut_record(weights, vocab_size),
        "teacher_rows": teacher_rows,
        "seed_weights": seed_files,
        "halved_task_tensors": state_info["halved"],
        "returned_weights_mib": round(returned / MiB, 2),
        "pack_mib": round(sum(f["bytes"] for f in files.values()) / MiB, 2),
        "pack_seconds": round(time.monotonic() - started),
        "files": files,
        **(extra or {}),
    }
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    _check_pack_fits(out, max_mib, repo, teacher_rows)
    return manifest


def _check_pack_options(cfg: Recipe, row_cut: str) -> None:
    """Refuse what the GPU job cannot do before anything is built (building a recipe's data takes minutes)."""
    if row_cut not in ("auto", "on", "off"):
        raise ValueError(f"row_cut must be auto, on or off, got {row_cut!r}.")
    if cfg.training.lora:
        raise ValueError(f"{cfg.name}: LoRA recipes are not supported by the GPU job (its weights come back whole).")


def _empty_folder(out: Path) -> Path:
    """``out``, emptied: a pack is always written whole, so no file of an older pack survives into it."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return out


def _write_task(cfg: Recipe, built, out: Path) -> dict[str, Any]:
    """Write the first seed's task state; refuse when another seed's task differs, as one task travels for all."""
    seed0, model, task = built[0]
    state_info = write_task_state(task, model, out)
    for seed, other_model, other_task in built[1:]:
        if task_fingerprint(other_task, other_model) != state_info["digest"]:
            raise ValueError(
                f"{cfg.name}: the task of seed {seed} differs from seed {seed0}'s; the GPU job ships one task for "
                "every soup seed, so data builds must not depend on the training seed."
            )
    return state_info


def _write_model(model, out: Path) -> _Weights:
    """Write the model's config and tokenizer; return its starting weights in the dtypes they travel in."""
    parameters = [name for name, p in model.named_parameters() if p.requires_grad]
    travelling = travel_dtypes(model.state_dict(), parameters)
    row_names = vocabulary_tensors(travelling, len(model.tokenizer))
    model.config.save_pretrained(out / "model")
    model.tokenizer.save_pretrained(out / "tokenizer")  # beside no config.json: loading it runs no remote code
    return _Weights(parameters, travelling, row_names)


def _wants_row_cut(cfg: Recipe, weights: _Weights, out: Path, row_cut: str, max_mib: float) -> bool:
    """Whether vocabulary rows are cut (``row_cut``, or ``auto`` and the uncut pack over ``max_mib``); raises
    :class:`PackTooLarge` when a cut is needed but the recipe's training rules it out."""
    uncut = folder_size(out) + state_bytes(weights.state)
    cut_reason = row_cut_allowed(cfg.training)
    want_cut = row_cut == "on" or (row_cut == "auto" and uncut > max_mib * MiB)
    if not (want_cut and weights.row_names):
        return False
    if cut_reason:
        raise PackTooLarge(f"{cfg.name}: a vocabulary-row cut is needed to fit, but {cut_reason}.")
    return True


def _cut_weights(weights: _Weights, ids: set[int], out: Path) -> None:
    """Keep only the vocabulary rows ``ids`` (those the planned run reads) and write their ids beside the weights."""
    weights.rows = torch.tensor(sorted(ids), dtype=torch.int64)
    weights.state = cut_rows(weights.state, weights.row_names, weights.rows)
    save_file({"rows": weights.rows}, str(out / "rows.safetensors"))


def _write_seed_weights(built, weights: _Weights, out: Path) -> dict[str, dict[str, Any]]:
    """Write, per seed after the first, only the tensors it initialises differently (a soup's heads): the rest of
    its start is the first seed's. Returns ``{seed: {file, tensors}}`` for the manifest."""
    seed_files = {}
    for seed, other_model, _ in built[1:]:
        other = travel_dtypes(other_model.state_dict(), weights.parameters)
        if weights.rows is not None:
            other = cut_rows(other, weights.row_names, weights.rows)
        differing = {k: v for k, v in other.items() if not torch.equal(v, weights.state[k])}
        name = f"weights-seed-{seed}.safetensors"
        save_file(differing, str(out / name), metadata={"format": "pt"})
        seed_files[str(seed)] = {"file": name, "tensors": sorted(differing)}
    return seed_files


def _check_weights_come_back(cfg: Recipe, weights: _Weights) -> int:
    """Bytes of the trained weights the run sends back; raises :class:`PackTooLarge` when they would not fit the
    shards a run may return (better to learn it here than after the GPU time is spent)."""
    returned = state_bytes({k: weights.state[k] for k in weights.parameters})
    shards_allowed = RETURN_FILES - RETURN_OTHER_FILES
    if returned > shards_allowed * SHARD_MIB * MiB:
        raise PackTooLarge(
            f"{cfg.name}: the trained weights ({returned / MiB:.1f} MiB in fp16) would not come back in "
            f"{shards_allowed} shards of {SHARD_MIB:g} MiB; cut rows (--row-cut on) or train a smaller model."
        )
    return returned


def gzip_file(path: Path) -> Path:
    """Replace ``path`` by ``path.gz`` (gzip level 6, no timestamp: the same file gives the same bytes)."""
    target = path.with_name(path.name + ".gz")
    with open(path, "rb") as raw, open(target, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6,
                                                                          mtime=0) as packed:  # fmt: skip
        shutil.copyfileobj(raw, packed, 1 << 20)
    path.unlink()
    return target


def _make_plain_data(out: Path) -> None:
    """Give the pack's files the umask's permissions: safetensors writes owner-only files, and a pack is plain data."""
    for path in out.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~current_umask())


def _row_cut_record(weights: _Weights, vocab_size: int) -> dict[str, Any] | None:
    """The manifest's account of the vocabulary-row cut (None: no cut), with a note a reader understands."""
    if weights.rows is None:
        return None
    rows = len(weights.rows)
    return {
        "tensors": weights.row_names,
        "rows": rows,
        "of": vocab_size,
        "note": f"{rows:,} of {vocab_size:,} vocabulary rows travel: those the planned run's batches read; "
        "the others keep their starting values (no batch reads them), replayed with the recipe's weight decay",
    }


def _check_pack_fits(out: Path, max_mib: float, repo: Path | None, teacher_rows: list[dict[str, Any]]) -> None:
    """:func:`check_fits`, and when teacher rows travel, say how many and how to carry fewer."""
    try:
        check_fits(out, max_mib, repo)
    except PackTooLarge as error:
        if not teacher_rows:
            raise
        rows = sum(t["rows"] for t in teacher_rows)
        raise PackTooLarge(f"{error} It carries {rows:,} teacher rows, those the planned run draws: fewer steps or "
                           "smaller batches carry fewer.") from None  # fmt: skip
