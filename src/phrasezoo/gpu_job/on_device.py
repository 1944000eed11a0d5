"""There, on the GPU machine: train a pack (:mod:`.pack`) with the project's training loop, and write what comes
back: fp16 weight shards, the loss log and a run manifest (``phrasezoo device run``, i.e. ``python -m
phrasezoo.gpu_job run``).

Needs only torch, transformers, accelerate, safetensors, numpy, pyyaml and tqdm (and phrasezoo's source on
``PYTHONPATH``): the task comes from JSON and arrays, the model from its config and the pack's weights, and each
seed trains with :func:`phrasezoo.training.loop.train`, the loop of every CPU run. A soup recipe trains one run
per seed and averages them with :func:`phrasezoo.training.soup.write_soup_checkpoint`, as ``phrasezoo train`` does.

What comes back (at most 8 files of at most 16 MiB, the machine's limits):

* ``weights-0000N.safetensors``: the trained parameters of the last checkpoint (before any final weight averaging,
  which unpack applies, as a CPU export does), fp16, row-cut like the pack's, with the travelled row ids
  (``__rows__``); at most 15 MiB each;
* ``loss_log.json``: per seed, per logged step: the loss and its parts, the learning rate and seconds since start;
* ``run_manifest.json``: device, versions, steps and seconds per seed, the training facts, checks and file digests.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import accelerate
import torch
import transformers
from accelerate import Accelerator
from safetensors.torch import load as load_safetensors
from safetensors.torch import load_file
from transformers import AutoTokenizer

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.machine import cpu_name
from phrasezoo.core.recipes import Recipe, recipe_from_dict
from phrasezoo.gpu_job.ahead import BatchesAhead, batch_workers
from phrasezoo.gpu_job.codec import import_class, read_task_state
from phrasezoo.gpu_job.travel import (
    MANIFEST,
    RETURN_FILE_MIB,
    RETURN_FILES,
    RETURN_OTHER_FILES,
    SHARD_MIB,
    MiB,
    read_manifest,
    sha256_file,
    verify_files,
)
from phrasezoo.gpu_job.weights import (
    as_float32,
    check_cut_rows,
    cut_rows,
    expand_rows,
    travel_dtypes,
    write_shards,
)
from phrasezoo.training.checkpoint import latest_checkpoint
from phrasezoo.training.loop import RunOptions, seed_everything, train
from phrasezoo.training.one_run import training_facts
from phrasezoo.training.soup import write_soup_checkpoint

RUN_FORMAT = "phrasezoo-device-run/1"
RUN_MANIFEST = "run_manifest.json"
LOSS_LOG = "loss_log.json"
ROWS_KEY = "__rows__"


def device_name(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    return cpu_name()


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit(
            "--device cuda: torch sees no GPU here (torch.cuda.is_available() is False). Nothing was trained; on a "
            "machine without a GPU pass --device cpu."
        )
    return device


class _StepClock:
    """Wraps a task's ``make_batch`` to stamp the start of every step, and prints progress now and then."""

    def __init__(self, task, total: int, label: str):
        self.task, self.total, self.label = task, total, label
        self.stamps: list[float] = []
        self.every = max(1, total // 10)
        self.make_batch = task.make_batch
        task.make_batch = self

    def __call__(self, indices, rng):
        now = time.monotonic()
        self.stamps.append(now)
        done = len(self.stamps) - 1
        if done and done % self.every == 0:
            rate = (now - self.stamps[0]) / done
            print(f"   {self.label}: step {done}/{self.total}, {rate:.3f} s/step", flush=True)
        return self.make_batch(indices, rng)

    def median_step(self) -> float | None:
        """Median seconds between step starts (the first step, with its warm-up, left out)."""
        gaps = sorted(b - a for a, b in zip(self.stamps[1:], self.stamps[2:]))
        return round(gaps[len(gaps) // 2], 4) if gaps else None

    def seconds_at(self, step: int, end: float) -> float:
        """Seconds from the first step's start to the end of ``step`` (1-based)."""
        finish = self.stamps[step] if step < len(self.stamps) else end
        return finish - self.stamps[0]


def _load_weights(path: Path) -> dict[str, torch.Tensor]:
    """A safetensors file, read from its gzipped copy ``<path>.gz`` where the pack holds that (packs since 2026-11-28)."""
    packed = path.with_name(path.name + ".gz")
    if packed.exists():
        with gzip.open(packed, "rb") as handle:
            return load_safetensors(handle.read())
    return load_file(str(path))


def _load_seed_state(pack: Path, manifest: dict, seed: int, rows, vocab_size: int) -> dict[str, torch.Tensor]:
    state = _load_weights(pack / "weights.safetensors")
    extra = manifest["seed_weights"].get(str(seed))
    if extra:
        state.update(load_file(str(pack / extra["file"])))
    if rows is not None:
        state = expand_rows(state, manifest["row_cut"]["tensors"], rows, vocab_size)
    return as_float32(state)


def _loss_rows(log_path: Path, clock: _StepClock, end: float, seed: int) -> list[dict[str, Any]]:
    rows = []
    if not log_path.exists():
        return rows
    for line in log_path.read_text().splitlines():
        record = json.loads(line)
        if "loss" not in record:
            continue
        rows.append({"seed": seed, **record, "seconds": round(clock.seconds_at(record["step"], end), 3)})
    return rows


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(torch.nan_to_num(a.float()), torch.nan_to_num(b.float()))


@dataclasses.dataclass
class _Job:
    """What every seed's run reads from the pack: the recipe, the model's class, config and tokenizer, the row cut,
    and the steps and safety budget the run was asked for."""

    pack: Path
    manifest: dict[str, Any]
    device: str
    device_name: str
    cfg: Recipe
    seeds: list[int]
    planned: int
    steps: int
    budget: float | None
    model_class: type
    config: Any
    tokenizer: Any
    vocab_size: int
    rows: torch.Tensor | None
    row_names: list[str]
    trainable: list[str]


def run_pack(
    pack: Path,
    out: Path,
    device: str = "auto",
    max_steps: int | None = None,
    budget_minutes: float | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Train the pack in ``pack`` and write the returned files to ``out``; returns the run manifest.

    ``max_steps`` (at most the planned steps) shortens every seed's run, for checks: such a run is not the
    recipe's, and says so. ``budget_minutes`` is a safety stop over all seeds (the loop checkpoints and stops; the
    manifest and card say so); default: the pack's ``device_minutes``.
    """
    started = time.monotonic()
    out = Path(out)
    job = _open_job(Path(pack), device, max_steps, budget_minutes)
    manifest = job.manifest
    print(
        f">> {manifest['recipe_name']}: {len(job.seeds)} run(s) x {job.steps} steps on {job.device} "
        f"({job.device_name}); pack {manifest['commit'] or '?'}{' (dirty)' if manifest.get('dirty') else ''}",
        flush=True,
    )

    losses: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="phrasezoo-device-") as scratch:
        run_dirs = []
        for i, seed in enumerate(job.seeds):
            run_dir = Path(scratch) / f"seed-{seed}"
            run, seed_losses, averaged_prefixes = _train_seed(job, i, seed, run_dir, started, problems, progress)
            runs.append(run)
            losses += seed_losses
            run_dirs.append(run_dir)
        trained, soup_facts, souped, runs = _soup(job, run_dirs, Path(scratch) / "soup", runs)
    trained = _check_trained(job, trained, problems)
    files = _write_returned(job, trained, losses, out, problems)
    seconds = round(time.monotonic() - started, 1)
    outcome = {"runs": runs, "soup": soup_facts, "souped": souped, "averaged_prefixes": averaged_prefixes}
    record = _run_record(job, outcome, problems, files, seconds)
    atomic_write_text(out / RUN_MANIFEST, json.dumps(record, indent=1, default=str) + "\n")
    print(
        f">> wrote {len(files) - 1} shard(s), {LOSS_LOG} and {RUN_MANIFEST} to {out} ({seconds / 60:.1f} min in all)",
        flush=True,
    )
    if problems:
        raise SystemExit("the run finished with problems:\n  " + "\n  ".join(problems))
    return record


def _run_record(job: _Job, outcome: dict[str, Any], problems: list[str], files: list[Path], seconds: float) -> dict:
    """The run manifest: what was packed and trained where, with which versions, per seed and in all (``outcome``:
    the runs' records, the soup's facts, whether it was made, the task's averaged prefixes), the problems found and
    the returned files' digests."""
    manifest, runs = job.manifest, outcome["runs"]
    stopped = any(r["stopped_by_time_budget"] for r in runs)
    return {
        "format": RUN_FORMAT,
        "recipe_name": manifest["recipe_name"],
        "pack": {
            k: manifest.get(k)
            for k in ("commit", "dirty", "created", "data_fingerprint", "overrides", "recipe_source", "steps")
        },
        "pack_manifest_sha256": sha256_file(job.pack / MANIFEST),
        "recipe": manifest["recipe"],
        "model_class": manifest["model_class"],
        "row_cut": manifest["row_cut"],
        "trainable_tensors": job.trainable,
        "averaged_prefixes": outcome["averaged_prefixes"],
        "device": job.device,
        "device_name": job.device_name,
        "host": {"cpu_cores": os.cpu_count(), "platform": platform.platform()},
        "versions": _versions(),
        "seeds": job.seeds,
        "steps_per_seed": job.steps,
        "planned_steps_per_seed": job.planned,
        "recipe_steps": job.steps == job.planned,
        # the recipe's run: every planned step of every seed, and the soup made
        "recipe_run": job.steps == job.planned and outcome["souped"] and not stopped,
        "runs": runs,
        "soup": outcome["soup"],
        "training_seconds": round(sum(r["seconds"] for r in runs), 1),
        "seconds": seconds,
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "problems": problems,
        "files": {p.name: {"bytes": p.stat().st_size, "sha256": sha256_file(p)} for p in files},
    }


def _open_job(pack: Path, device: str, max_steps: int | None, budget_minutes: float | None) -> _Job:
    """Check the pack against its manifest and the options against the pack, then load what every run needs: a bad
    carry or option is refused before any training, so it costs no GPU time."""
    manifest = read_manifest(pack)
    verify_files(pack, manifest)
    device = resolve_device(device)
    planned = manifest["steps_per_seed"]
    if max_steps is not None and not 0 < max_steps <= planned:
        raise SystemExit(f"--max-steps must be in 1..{planned} (the pack's planned steps: its rows cover no more).")
    cfg = recipe_from_dict(manifest["recipe"])
    model_class = import_class(manifest["model_class"])
    return _Job(
        pack=pack,
        manifest=manifest,
        device=device,
        cfg=cfg,
        seeds=manifest["seeds"],
        planned=planned,
        steps=max_steps or planned,
        budget=manifest.get("device_minutes") if budget_minutes is None else budget_minutes,  # 0: no safety stop
        model_class=model_class,
        tokenizer=AutoTokenizer.from_pretrained(str(pack / "tokenizer")),
        config=model_class.config_class.from_pretrained(str(pack / "model")),
        vocab_size=manifest["vocabulary_size"],
        rows=load_file(str(pack / "rows.safetensors"))["rows"] if manifest["row_cut"] else None,
        row_names=manifest["row_cut"]["tensors"] if manifest["row_cut"] else [],
        trainable=manifest["trainable_tensors"],
        device_name=device_name(device),
    )


def _train_seed(job: _Job, i: int, seed: int, run_dir: Path, started: float, problems: list[str], progress: bool):
    """Train seed ``seed`` (the ``i``-th run) from the pack's start into ``run_dir`` with the project's loop, with its
    share of the safety budget left; returns ``(run record, loss rows, the task's averaged prefixes)`` and appends to
    ``problems`` when the task's prepare stage moved the starting weights (the pack would then not be the start)."""
    seed_everything(seed)
    initial = _load_seed_state(job.pack, job.manifest, seed, job.rows, job.vocab_size)
    model = job.model_class(job.config)
    model.load_state_dict(initial, strict=True)
    model.set_tokenizer(job.tokenizer)
    task = read_task_state(job.pack, model)
    left = None
    if job.budget:
        spent = (time.monotonic() - started) / 60
        left = round(max(0.5, (job.budget - spent) / (len(job.seeds) - i)), 2)
    training = dataclasses.replace(
        job.cfg.training,
        seed=seed,
        soup_seeds=None,
        max_steps=job.steps,
        checkpoint_every=10**9,  # only the last step (and a stop) is checkpointed: checkpoints cost time
        keep_checkpoints=1,
        time_budget_minutes=left,
        num_threads=job.cfg.training.num_threads if job.device == "cpu" else None,
    )
    workers = batch_workers(task, job.device)
    ahead = BatchesAhead(task, workers) if workers else None
    clock = _StepClock(task, job.steps, f"seed {seed}")
    accelerator = Accelerator(cpu=job.device == "cpu")
    limit = f"safety budget {left:.1f} min" if left else "no time budget"
    print(f">> run {i + 1}/{len(job.seeds)}: seed {seed}, {job.steps} steps, {limit}", flush=True)
    result = train(model, task, training, RunOptions(run_dir, resume=False, progress=progress), accelerator)
    end = time.monotonic()
    task.make_batch = clock.make_batch
    if ahead is not None:
        ahead.close()
        task.make_batch, task.prefetch = ahead.make_batch, ahead.inner_prefetch
    facts = training_facts(dataclasses.replace(job.cfg, training=training), result, accelerator, task)
    losses = _loss_rows(run_dir / "train_log.jsonl", clock, end, seed)
    start_state = load_file(str(run_dir / "checkpoints" / "initial.safetensors"))
    moved = sorted(k for k, v in start_state.items() if not _same(v, initial[k]))
    if moved:
        problems.append(f"seed {seed}: the task's prepare stage changed starting weights {moved[:5]}")
    run = {
        "seed": seed,
        "steps": result.steps,
        "planned_steps": job.planned,
        "seconds": round(result.seconds, 1),
        "seconds_per_step": round(result.seconds / max(result.steps, 1), 4),
        "seconds_per_step_median": clock.median_step(),
        "stopped_by_time_budget": result.stopped_early,
        "batch_workers": workers,
        "last_losses": {k: round(v, 4) for k, v in result.last_losses.items()},
        "facts": facts,
    }
    print(f">> seed {seed}: {result.steps} steps in {result.seconds / 60:.2f} min", flush=True)
    averaged_prefixes = list(task.averaged_prefixes)
    del model, task, result
    if job.device == "cuda":
        torch.cuda.empty_cache()
    return run, losses, averaged_prefixes


def _soup(job: _Job, run_dirs: list[Path], soup_dir: Path, runs: list[dict[str, Any]]):
    """The trained state: the soup of the seeds' runs, as ``phrasezoo train`` makes it, or the only run's last
    checkpoint. Runs the time budget stopped at different steps make no soup: the first run's weights come back
    and only its record stays. Returns ``(state, soup facts, souped, runs)``."""
    trained, soup_facts, souped = None, {}, len(run_dirs) == 1
    if len(run_dirs) > 1:
        try:
            trained, soup_facts = write_soup_checkpoint(run_dirs, soup_dir)
            souped = True
            soup_facts["soup ingredients"] = [f"seed {seed} ({job.device_name})" for seed in job.seeds]
        except ValueError as error:  # runs stopped by the time budget at different steps
            soup_facts = {"model soup": f"not made ({error}): the first run's weights"}
            runs = runs[:1]
    if trained is None:
        trained = load_file(str(latest_checkpoint(run_dirs[0] / "checkpoints") / "model.safetensors"))
    return trained, soup_facts, souped, runs


def _check_trained(job: _Job, trained: dict[str, torch.Tensor], problems: list[str]) -> dict[str, torch.Tensor]:
    """The trained parameters, in the pack's order; appends to ``problems`` what makes them unfit to come back:
    missing parameters, moved rows that no batch read (a broken row cut), non-finite values (divergence)."""
    missing = sorted(set(job.trainable) - set(trained))
    if missing:
        problems.append(f"the trained state lacks parameters {missing[:5]}")
    trained = {k: trained[k] for k in job.trainable if k in trained}
    if job.rows is not None:
        problems += check_cut_rows(trained, [n for n in job.row_names if n in trained], job.rows)
    nonfinite = sorted(k for k, v in trained.items() if k not in job.row_names and not torch.isfinite(v).all())
    if nonfinite:
        problems.append(f"training diverged: non-finite values in {nonfinite[:5]}")
    return trained


def _write_returned(
    job: _Job, trained: dict[str, torch.Tensor], losses: list[dict[str, Any]], out: Path, problems: list[str]
) -> list[Path]:
    """Write the weight shards (fp16, row-cut, with the row ids) and the loss log to ``out``; returns the files, and
    appends to ``problems`` what would not come back within the machine's file limits."""
    back = travel_dtypes(trained, job.trainable)
    if job.rows is not None:
        back = cut_rows(back, job.row_names, job.rows)
        back[ROWS_KEY] = job.rows
    out.mkdir(parents=True, exist_ok=True)
    shards = write_shards(back, out, "weights", int(SHARD_MIB * MiB))
    if len(shards) > RETURN_FILES - RETURN_OTHER_FILES:
        problems.append(f"{len(shards)} weight shards: more than the {RETURN_FILES - RETURN_OTHER_FILES} that fit")
    atomic_write_text(out / LOSS_LOG, json.dumps(losses) + "\n")
    files = [*shards, out / LOSS_LOG]
    too_big = [p.name for p in files if p.stat().st_size > RETURN_FILE_MIB * MiB]
    if too_big:
        problems.append(f"files over {RETURN_FILE_MIB:g} MiB will not come back: {too_big}")
    return files


def _versions() -> dict[str, str]:
    """The versions of what trained: Python, torch, CUDA, transformers and accelerate."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "transformers": transformers.__version__,
        "accelerate": accelerate.__version__,
    }


def run_command(args: argparse.Namespace) -> int:
    """``phrasezoo device run``: train the pack ``args.pack`` here and write what comes back to ``args.out``."""
    run_pack(Path(args.pack), Path(args.out), device=args.device, max_steps=args.max_steps,
             budget_minutes=args.budget_minutes, progress=args.progress)  # fmt: skip
    return 0
