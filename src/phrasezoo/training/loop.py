"""One training loop for every method: Accelerate for devices and processes, resumable and reproducible.

The loop is deliberately small. A method supplies a :class:`TrainingTask` (how to make a batch from dataset
indices, how to compute the loss); the loop supplies everything else:

* the same script runs on a CPU, one GPU or many processes (``accelerate launch``): the global batch is split
  across processes (rank r takes the r-th slice) and DDP averages the gradients; losses that compare the examples
  of a batch gather them from every process (:mod:`phrasezoo.objectives.distributed`), so N processes with B/N
  examples each train like one process with B;
* gradient accumulation (``gradient_accumulation_steps``, through ``accelerator.accumulate``): the global batch of
  a step is split further into that many micro-batches per process, whose gradients add up before the optimizer
  step (no DDP sync until the last one). In-batch negatives then come from a micro-batch only;
* every step's batch and random state are a pure function of ``(seed, step, rank)``: the data order comes from a
  seeded permutation per epoch, augmentations from ``random.Random`` seeded per step, dropout from a per-step
  ``torch.manual_seed``. Resuming from a checkpoint therefore reproduces an uninterrupted run exactly;
* safetensors checkpoints every ``checkpoint_every`` steps (atomic, see :mod:`.checkpoint`), also on Ctrl-C and
  when the time budget is spent;
* optional bf16/fp16 autocast of the forward pass (``mixed_precision``), fp32 master weights; fp16 only on a GPU
  and with Accelerate's loss scaler (the Accelerator made with ``mixed_precision="fp16"``), refused otherwise;
* learning-rate schedules as a function of the step (PEARL's exponential decay, or warm-up + linear decay);
* optional LoRA through peft (merged into the weights at the end);
* weight averaging with the starting weights at the end (PEARL's remedy for catastrophic forgetting).
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from accelerate import Accelerator
from safetensors.torch import load_file
from tqdm.auto import tqdm

from phrasezoo.core.errors import InputError
from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.machine import has_fast_bf16
from phrasezoo.core.progress import progress_enabled
from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.training.checkpoint import (
    SOUP_KEY,
    latest_checkpoint,
    load_checkpoint,
    save_checkpoint,
    save_state_dict,
)


class TrainingTask(Protocol):
    """What a method provides to the loop."""

    #: parameter-name prefixes that weight averaging blends with their starting values (e.g. ``("backbone.",)``)
    averaged_prefixes: tuple[str, ...]
    #: modules trained in full (not through LoRA adapters) when LoRA is on
    lora_modules_to_save: list[str]

    def num_examples(self) -> int: ...

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]: ...

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]: ...

    def prepare(self, model, accelerator) -> None:
        """Optional stage before the main loop (e.g. pretraining a sub-module); not rerun on resume."""

    def facts(self) -> dict[str, Any]:
        """Training-data facts for the model card."""

    # optional: ``prefetch(steps)`` sees the ``(indices, rng)`` of every step to come before the first one, e.g. to
    # embed the teacher rows they will look up in large batches (it must leave the task as it found it)


class TrainingInterrupted(RuntimeError):
    """Raised when a run stops before its last step (simulated crash in tests, or Ctrl-C after checkpointing)."""


@dataclass(frozen=True)
class RunOptions:
    """How a recipe is trained, as opposed to what (the recipe): one object from the entry points (``phrasezoo
    train``, the main job, a soup seed's process) down to the loop, each layer reading the fields that are its own.

    The loop reads ``output_dir`` (checkpoints and ``train_log.jsonl``; the recipe's ``outputs/<name>/`` when None,
    which :func:`phrasezoo.training.one_run.train_one_run` fills in), ``resume``, ``stop_after_steps`` (a simulated
    crash after that step, for resume tests), ``progress``, and the two a soup sets for its first seed: ``ready``
    (called before the first step, once the caches hold what the recipe needs) and ``draws_of`` (other seeds whose
    teacher rows this run embeds with its own). The soup reads ``workers`` (seeds trained at once; default
    :func:`phrasezoo.training.recipe.soup_workers`) and ``spare`` (independent work started beside its seeds, once).
    """

    output_dir: str | Path | None = None
    resume: bool = True
    stop_after_steps: int | None = None
    progress: bool = True
    workers: int | None = None
    spare: Callable[[], None] | None = None
    ready: Callable[[], None] | None = None
    draws_of: Sequence[int] = ()


@dataclass
class TrainResult:
    model: Any
    steps: int
    total_steps: int
    seconds: float
    stopped_early: bool
    resumed_from: int | None
    last_losses: dict[str, float] = field(default_factory=dict)
    log_path: Path | None = None


#: the loop's learning-rate schedules (:func:`learning_rate_factor`), optimizers and precisions
SCHEDULERS = ("exponential", "linear", "constant")
OPTIMIZERS = ("adam", "adamw")
PRECISIONS = ("no", "fp32", "bf16", "fp16")


def launched_processes() -> int:
    """The processes a launcher (``accelerate launch``, torchrun) started for this run, known before any Accelerator
    exists (1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def first_process() -> bool:
    """Whether this process speaks for the launch: rank 0, or the only process. The others train in silence."""
    return int(os.environ.get("RANK", "0")) == 0


def check_before_work(cfg: TrainingConfig, processes: int, where: str = "recipe") -> None:
    """Refuse, before any data is built or downloaded, what the loop would refuse only once it starts (after minutes
    warm, an hour cold): a precision this machine cannot train in, a global batch the processes and micro-batches do
    not divide, an unknown optimizer or schedule, step counts below 1, a blend outside [0, 1], LoRA without peft.
    One :class:`~phrasezoo.core.errors.InputError` names every problem found (``where``: the recipe's file)."""
    problems = [*_precision_problems(cfg.mixed_precision)]
    split = processes * max(1, cfg.gradient_accumulation_steps)
    if cfg.batch_size % split:
        problems.append(
            f"training.batch_size {cfg.batch_size} is the global batch of a step and must be divisible by the "
            f"processes ({processes}) times training.gradient_accumulation_steps "
            f"({cfg.gradient_accumulation_steps}); use a batch size that is a multiple of {split}, or other --num_processes"
        )
    if cfg.optimizer not in OPTIMIZERS:
        problems.append(f"training.optimizer {cfg.optimizer!r} is not one of {', '.join(OPTIMIZERS)}")
    if cfg.scheduler not in SCHEDULERS:
        problems.append(f"training.scheduler {cfg.scheduler!r} is not one of {', '.join(SCHEDULERS)}")
    for key in ("batch_size", "epochs", "max_steps", "checkpoint_every", "log_every", "gradient_accumulation_steps"):
        value = getattr(cfg, key)
        if value is not None and value < 1:
            problems.append(f"training.{key} must be at least 1, got {value}")
    if not 0.0 <= (cfg.weight_average or 0.0) <= 1.0:
        problems.append(f"training.weight_average must be in [0, 1], got {cfg.weight_average}")
    if cfg.lora and importlib.util.find_spec("peft") is None:
        problems.append("training.lora needs peft, which is not installed (pip install peft)")
    if problems:
        raise InputError(f"{where}: " + "; ".join(problems) + ".")


def _precision_problems(mixed_precision: str | None) -> list[str]:
    """What is wrong with ``training.mixed_precision`` on this machine: unknown, fp16 without a GPU (it needs the
    GPU's loss scaler), bf16 on a GPU that has none. bf16 on a CPU without native bf16 is no problem: the run falls
    back to fp32 and says so."""
    precision = mixed_precision or "no"
    if precision not in PRECISIONS:
        return [f"training.mixed_precision must be no, bf16 or fp16, got {precision!r}"]
    if precision == "fp16" and not torch.cuda.is_available():
        return [
            "training.mixed_precision fp16 is for GPUs (with a loss scaler) and this machine has none: use bf16 "
            "(native on AVX-512 BF16/AMX CPUs, fp32 elsewhere) or no, e.g. --set training.mixed_precision=bf16"
        ]
    if precision == "bf16" and torch.cuda.is_available() and not torch.cuda.is_bf16_supported():
        return ["training.mixed_precision bf16 needs a GPU with bf16 and this one has none: use fp16 or no"]
    return []


def learning_rate_factor(cfg: TrainingConfig, step: int, total_steps: int) -> float:
    """Multiplier of the base learning rate at ``step``."""
    warmup = int(cfg.warmup_ratio * total_steps)
    if warmup and step < warmup:
        return (step + 1) / warmup
    if cfg.scheduler == "exponential":
        return cfg.decay_rate ** (step // max(1, cfg.decay_every))
    if cfg.scheduler == "linear":
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))
    if cfg.scheduler == "constant":
        return 1.0
    raise ValueError(f"Unknown scheduler '{cfg.scheduler}': use exponential, linear or constant.")


def step_seed(seed: int, step: int, rank: int) -> int:
    return (seed * 1_000_003 + step * 9_176 + rank * 101) % (2**31 - 1)


def micro_seed(seed: int, step: int, micro: int, rank: int) -> int:
    """The seed of micro-batch ``micro`` of a step (``step_seed`` itself for the first, so a run without
    accumulation draws what it always drew)."""
    return step_seed(seed if micro == 0 else seed + 7_919 * micro, step, rank)


def plan_steps(cfg: TrainingConfig, num_examples: int, world_size: int) -> tuple[int, int]:
    """``(per_process_micro_batch, total_steps)``; ``batch_size`` is global (one optimizer step) and split across
    processes and ``gradient_accumulation_steps`` micro-batches."""
    accumulation = cfg.gradient_accumulation_steps
    if cfg.batch_size % (world_size * accumulation):
        raise ValueError(
            f"batch_size {cfg.batch_size} must be divisible by the number of processes ({world_size}) times "
            f"gradient_accumulation_steps ({accumulation})."
        )
    steps_per_epoch = num_examples // cfg.batch_size
    if steps_per_epoch == 0:
        raise ValueError(f"The dataset has {num_examples} examples, fewer than one batch of {cfg.batch_size}.")
    total = cfg.max_steps if cfg.max_steps is not None else cfg.epochs * steps_per_epoch
    return cfg.batch_size // (world_size * accumulation), total


@dataclass
class _Run:
    """The state of one training run that its steps share (see :func:`train`)."""

    model: Any
    task: TrainingTask
    cfg: TrainingConfig
    accelerator: Any
    output_dir: Path
    local_batch: int
    total_steps: int
    found: Path | None = None  # the checkpoint resumed from
    initial: dict[str, torch.Tensor] = field(default_factory=dict)
    optimizer: Any = None
    params: list = field(default_factory=list)
    step: int = 0
    start_step: int = 0
    elapsed_before: float = 0.0
    started: float = 0.0
    losses: dict[str, float] = field(default_factory=dict)
    stopped_early: bool = False

    @property
    def ckpt_dir(self) -> Path:
        return self.output_dir / "checkpoints"

    @property
    def log_path(self) -> Path:
        return self.output_dir / "train_log.jsonl"

    def seconds(self) -> float:
        return self.elapsed_before + time.monotonic() - self.started


def train(model, task: TrainingTask, cfg: TrainingConfig, options: RunOptions, accelerator=None) -> TrainResult:
    """Train ``model`` on ``task`` with the hyper-parameters ``cfg`` as ``options`` say (:class:`RunOptions`: the
    output folder, resume, progress, ...); checkpoints and the log go to ``output_dir/checkpoints`` and
    ``train_log.jsonl``.

    The steps, in order: :func:`_plan_run` (devices, threads, step plan), :func:`_start_or_resume_state` (the
    ``prepare`` stage and the starting weights, or the checkpoint to resume), :func:`_build_optimizer` (LoRA,
    parameter groups, the resumed optimizer state), :func:`_run_loop` (the steps, checkpoints, budget and Ctrl-C)
    and :func:`_finish` (last checkpoint, LoRA merge, weight averaging).

    Before the first step a task with a ``prefetch`` sees the batches of the steps to come, and those of the runs of
    the seeds ``options.draws_of`` too (a soup's other seeds, which then find the teacher rows they draw cached);
    ``options.ready`` is called after that, before the first step.
    """
    if options.output_dir is None:
        raise ValueError("the loop needs RunOptions.output_dir: the folder of the run's checkpoints and log.")
    run = _plan_run(model, task, cfg, Path(options.output_dir), accelerator)
    _start_or_resume_state(run, options.resume)
    _build_optimizer(run)
    _run_loop(run, options)
    return _finish(run)


def _plan_run(model, task: TrainingTask, cfg: TrainingConfig, output_dir: Path, accelerator) -> _Run:
    """Accelerator, torch threads and the step plan; warns when the recipe's precision is not available here."""
    accelerator = accelerator or Accelerator()
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    local_batch, total_steps = plan_steps(cfg, task.num_examples(), accelerator.num_processes)
    precision = effective_mixed_precision(cfg.mixed_precision, accelerator.device)
    if precision == "fp16" and getattr(accelerator, "scaler", None) is None:
        raise ValueError(
            "mixed_precision fp16 needs a loss scaler (fp16 gradients underflow without one): make the Accelerator "
            "with mixed_precision='fp16' (phrasezoo's train.py does when the recipe says fp16 and a GPU is present), "
            "or use bf16."
        )
    # accelerator.accumulate counts micro-batches from here; backward divides each loss by this number
    accelerator.gradient_accumulation_steps = cfg.gradient_accumulation_steps
    accelerator.step = 0
    if precision != (cfg.mixed_precision or "no"):
        accelerator.print(
            f">> mixed_precision {cfg.mixed_precision} requested, but this CPU has no native bf16: training in fp32 "
            "(emulated bf16 is many times slower). The card records the precision used."
        )
    return _Run(model, task, cfg, accelerator, output_dir, local_batch, total_steps)


def _start_or_resume_state(run: _Run, resume: bool) -> None:
    """A fresh run: the task's ``prepare`` stage (seeded), then the starting weights saved as
    ``checkpoints/initial.safetensors``. A resumed run finds its last checkpoint instead (``prepare`` is not rerun).
    The starting weights are read back when the run averages with them at the end."""
    accelerator, task = run.accelerator, run.task
    run.found = latest_checkpoint(run.ckpt_dir) if resume else None
    if run.found is None:
        with _seeded(run.cfg.seed):
            task.prepare(run.model, accelerator)
        state = run.model.state_dict()
        initial = {k: v.detach().clone() for k, v in state.items() if k.startswith(task.averaged_prefixes)}
        if accelerator.is_main_process:
            run.ckpt_dir.mkdir(parents=True, exist_ok=True)
            save_state_dict(initial, run.ckpt_dir / "initial.safetensors")
    accelerator.wait_for_everyone()
    run.initial = load_file(run.ckpt_dir / "initial.safetensors") if run.cfg.weight_average else {}


def _build_optimizer(run: _Run) -> None:
    """LoRA adapters (if any), the optimizer's parameter groups, the resumed weights and optimizer state, and the
    model and optimizer prepared for the accelerator's devices and processes."""
    cfg, accelerator = run.cfg, run.accelerator
    if cfg.lora:
        run.model = _apply_lora(run.model, cfg.lora, run.task.lora_modules_to_save)
    run.params = [p for p in run.model.parameters() if p.requires_grad]
    run.optimizer = _make_optimizer(cfg, _parameter_groups(run.model, cfg))
    if run.found is not None:
        _restore_checkpoint(run)
    run.model, run.optimizer = accelerator.prepare(run.model, run.optimizer)
    run.model.train()


def _restore_checkpoint(run: _Run) -> None:
    """Load the weights, optimizer state and step of ``run.found`` (a soup is a finished model, never resumed)."""
    model_state, optimizer_state, state = load_checkpoint(run.found)
    if SOUP_KEY in state:
        raise ValueError(
            f"{run.found} is a model soup (an average of other runs), not a run to resume: train under another "
            "name (--set name=...) or retrain from scratch with --no-resume."
        )
    if not optimizer_state:
        raise ValueError(
            f"{run.found} holds a finished model without optimizer state (unpacked from a GPU run), not a run to "
            "resume: train under another name (--set name=...) or retrain from scratch with --no-resume."
        )
    run.model.load_state_dict(model_state)
    configured = [group["base_lr"] for group in run.optimizer.param_groups]
    run.optimizer.load_state_dict(optimizer_state)
    for group, base_lr in zip(run.optimizer.param_groups, configured, strict=True):
        group.setdefault("base_lr", base_lr)  # checkpoints from before per-group learning rates lack it
    run.start_step, run.elapsed_before = state["step"], state.get("elapsed_seconds", 0.0)
    run.accelerator.print(f">> resuming from {run.found} (step {run.start_step}/{run.total_steps})")


def _checkpoint(run: _Run) -> None:
    """Save the current step (the main process writes; every process waits for it)."""
    if run.accelerator.is_main_process:
        save_checkpoint(
            run.ckpt_dir,
            run.step,
            run.accelerator.unwrap_model(run.model).state_dict(),
            run.optimizer,
            extra={"elapsed_seconds": run.seconds(), "total_steps": run.total_steps},
            keep=run.cfg.keep_checkpoints,
        )
    run.accelerator.wait_for_everyone()


def _run_loop(run: _Run, options: RunOptions) -> None:
    """Train from ``run.start_step`` to the planned steps: checkpoints every ``checkpoint_every`` steps, on Ctrl-C
    and when the safety time budget fires (which ends the run early, logged)."""
    cfg, accelerator, stop_after_steps = run.cfg, run.accelerator, options.stop_after_steps
    if accelerator.is_main_process:
        _truncate_log(run.log_path, run.start_step)  # the log describes this run: no lines of an abandoned one
    run.step = run.start_step
    batches = _batch_plan(run)
    _look_ahead(run, batches, [seed for seed in options.draws_of if seed != cfg.seed])
    if options.ready is not None:
        options.ready()
    run.started = time.monotonic()
    budget = cfg.time_budget_minutes * 60 if cfg.time_budget_minutes else None
    bar = tqdm(
        total=run.total_steps,
        initial=run.start_step,
        desc="training",
        disable=not progress_enabled(options.progress and accelerator.is_main_process),
    )
    try:
        while run.step < run.total_steps:
            _train_step(run, batches)
            bar.update(1)
            bar.set_postfix({k: f"{v:.3f}" for k, v in run.losses.items()})
            if run.step == stop_after_steps and run.step < run.total_steps:
                raise TrainingInterrupted(f"simulated interruption after step {run.step}")
            if run.step % cfg.checkpoint_every == 0 and run.step < run.total_steps:
                _checkpoint(run)
            if budget is not None and time.monotonic() - run.started > budget and run.step < run.total_steps:
                _stop_for_time_budget(run)
                break
    except KeyboardInterrupt:
        accelerator.print(f">> interrupted at step {run.step}: saving a checkpoint to resume from")
        _checkpoint(run)
        raise
    finally:
        bar.close()


def _batch_plan(run: _Run, seed: int | None = None):
    """``indices(step, micro)``: this process's dataset indices at a step's micro-batch, from a seeded permutation
    per epoch (a pure function of seed, step, micro-batch and rank, so a resumed run draws what an uninterrupted one
    would). A step's global batch is ``batch_size`` consecutive indices: micro-batch k's share of it, then rank r's
    slice of that. ``seed``: another run's seed (default: this run's)."""
    cfg, n = run.cfg, run.task.num_examples()
    seed = cfg.seed if seed is None else seed
    steps_per_epoch = n // cfg.batch_size
    rank = run.accelerator.process_index
    permutations: dict[int, np.ndarray] = {}

    micro_size = cfg.batch_size // cfg.gradient_accumulation_steps

    def indices(step: int, micro: int = 0) -> list[int]:
        epoch, position = divmod(step, steps_per_epoch)
        if epoch not in permutations:
            permutations.clear()
            permutations[epoch] = np.random.default_rng(seed + epoch).permutation(n)
        first = position * cfg.batch_size + micro * micro_size + rank * run.local_batch
        return permutations[epoch][first : first + run.local_batch].tolist()

    return indices


def _look_ahead(run: _Run, indices, other_seeds: Sequence[int] = ()) -> None:
    """Show a task with a ``prefetch`` the batches of the steps to come (their indices and seeded generators, the
    ones the steps will use), then every step of the runs of ``other_seeds`` (one prefetch: their teacher rows are
    embedded together, many sharing a batch), before the first step and outside the time budget."""
    prefetch = getattr(run.task, "prefetch", None)
    if prefetch is None or (run.step >= run.total_steps and not other_seeds):
        return
    rank, micros = run.accelerator.process_index, range(run.cfg.gradient_accumulation_steps)
    plans = [(run.cfg.seed, indices, range(run.step, run.total_steps))]
    plans += [(seed, _batch_plan(run, seed), range(run.total_steps)) for seed in other_seeds]
    prefetch(
        (plan(step, micro), random.Random(micro_seed(seed, step, micro, rank)))
        for seed, plan, steps in plans
        for step in steps
        for micro in micros
    )


def _train_step(run: _Run, indices) -> None:
    """One optimizer step: the learning rate of the step, then per micro-batch (one without accumulation) the seeded
    batch, forward (autocast) and backward (``accelerator.accumulate``: gradients add up, synced on the last one);
    then clip and step. The logged losses are the micro-batches' means."""
    cfg, accelerator, optimizer = run.cfg, run.accelerator, run.optimizer
    factor = learning_rate_factor(cfg, run.step, run.total_steps)
    for group in optimizer.param_groups:
        group["lr"] = group["base_lr"] * factor
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for micro in range(cfg.gradient_accumulation_steps):
        seed = micro_seed(cfg.seed, run.step, micro, accelerator.process_index)
        torch.manual_seed(seed)
        batch = run.task.make_batch(indices(run.step, micro), random.Random(seed))
        with accelerator.accumulate(run.model):
            with _autocast(cfg.mixed_precision, accelerator.device):
                loss, logs = run.task.compute_loss(run.model, batch)
            accelerator.backward(loss)
        for key, value in {"loss": float(loss.detach()), **logs}.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    if cfg.max_grad_norm:
        accelerator.clip_grad_norm_(run.params, cfg.max_grad_norm)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    run.step += 1
    run.losses = {key: total if counts[key] == 1 else total / counts[key] for key, total in sums.items()}
    if accelerator.is_main_process and (run.step % cfg.log_every == 0 or run.step == run.total_steps):
        _append_log(run.log_path, {"step": run.step, "lr": optimizer.param_groups[0]["lr"], **run.losses})


def _stop_for_time_budget(run: _Run) -> None:
    """The safety budget fired: say so, log it and checkpoint; a rerun resumes to the planned steps."""
    run.accelerator.print(
        f">> WARNING: the safety time budget of {run.cfg.time_budget_minutes} min fired at step "
        f"{run.step}/{run.total_steps}: this model is NOT the recipe's run (the card says so). Rerun the same "
        "command to resume to the planned steps."
    )
    if run.accelerator.is_main_process:
        record = {"step": run.step, "stopped_by_time_budget": True, "planned_steps": run.total_steps}
        _append_log(run.log_path, record)
    _checkpoint(run)
    run.stopped_early = True


def _finish(run: _Run) -> TrainResult:
    """The last checkpoint (un-averaged weights), then the final model: LoRA merged, weights averaged."""
    _checkpoint(run)
    final = run.accelerator.unwrap_model(run.model)
    if run.cfg.lora:
        final = final.merge_and_unload()
    if run.cfg.weight_average:
        _average_weights(final, run.initial, run.cfg.weight_average)
    return TrainResult(
        model=final,
        steps=run.step,
        total_steps=run.total_steps,
        seconds=run.seconds(),
        stopped_early=run.stopped_early,
        resumed_from=None if run.found is None else run.start_step,
        last_losses=run.losses,
        log_path=run.log_path,
    )


def _parameter_groups(model, cfg: TrainingConfig) -> list[dict[str, Any]]:
    """One group at ``learning_rate``, plus one per ``head_learning_rates`` prefix (e.g. freshly initialised heads).

    ``head_learning_rates`` maps parameter-name prefixes to learning rates; names are matched after any wrapper
    prefix (peft's ``base_model.model.``), so the same recipe works with and without LoRA.
    """
    heads = dict(cfg.head_learning_rates or {})
    groups: dict[float, list] = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        plain = name.removeprefix("base_model.model.")
        lr = next((rate for prefix, rate in heads.items() if plain.startswith(prefix)), cfg.learning_rate)
        groups.setdefault(lr, []).append(param)
    return [{"params": params, "lr": lr, "base_lr": lr} for lr, params in groups.items()]


def _make_optimizer(cfg: TrainingConfig, params) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    raise ValueError(f"Unknown optimizer '{cfg.optimizer}': use adam or adamw.")


def _apply_lora(model, lora: dict[str, Any], modules_to_save: list[str]):
    """``model`` wrapped with LoRA adapters (peft), the recipe's ``lora`` options over these defaults."""
    from peft import LoraConfig, get_peft_model  # lazy: peft is optional, for LoRA recipes only

    options = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.05, "target_modules": ["query", "value"], **lora}
    options.setdefault("modules_to_save", modules_to_save)
    return get_peft_model(model, LoraConfig(**options))


@torch.no_grad()
def _average_weights(model, initial: dict[str, torch.Tensor], weight: float) -> None:
    """``param = (1 - weight) * param + weight * initial`` for every parameter saved at the start."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight_average must be in [0, 1], got {weight}.")
    state = model.state_dict()
    for key, start in initial.items():
        if key in state and state[key].is_floating_point():
            state[key].mul_(1.0 - weight).add_(start.to(state[key].device, state[key].dtype), alpha=weight)


def _truncate_log(path: Path, keep_through_step: int) -> None:
    """Drop the log lines after ``keep_through_step`` (all of them for a fresh run): a run started over, or resumed
    from an earlier checkpoint than the log reached, must not mix its lines with the abandoned steps'."""
    if not path.exists():
        return
    kept = []
    for line in path.read_text(encoding="utf8").splitlines():
        try:
            step = json.loads(line).get("step", 0)
        except (json.JSONDecodeError, AttributeError):
            continue
        if keep_through_step and step <= keep_through_step:
            kept.append(line)
    atomic_write_text(path, "".join(f"{line}\n" for line in kept))


def _append_log(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        handle.write(json.dumps({k: (round(v, 6) if isinstance(v, float) else v) for k, v in record.items()}) + "\n")


def effective_mixed_precision(mixed_precision: str | None, device: torch.device) -> str:
    """The precision a run really uses: a recipe's ``bf16`` falls back to ``no`` on a CPU without native bf16."""
    if mixed_precision in (None, "no", "fp32"):
        return "no"
    if mixed_precision not in ("bf16", "fp16"):
        raise ValueError(f"mixed_precision must be no, bf16 or fp16, got {mixed_precision!r}.")
    if mixed_precision == "fp16" and device.type == "cpu":
        raise ValueError(
            "mixed_precision fp16 is for GPUs (with a loss scaler); on a CPU use bf16 (native on AVX-512 BF16/AMX "
            "CPUs, fp32 elsewhere) or no."
        )
    if device.type == "cpu" and mixed_precision == "bf16" and not has_fast_bf16(device):
        return "no"
    return mixed_precision


def _autocast(mixed_precision: str, device: torch.device):
    """Autocast context of the forward pass: bf16/fp16 activations with fp32 master weights, or nothing (also for
    bf16 on a CPU that would only emulate it, see :func:`effective_mixed_precision`)."""
    precision = effective_mixed_precision(mixed_precision, device)
    if precision == "no":
        return nullcontext()
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    return torch.autocast(device_type=device.type, dtype=dtypes[precision])


def seed_everything(seed: int) -> None:
    """Seed python's ``random``, numpy's global generator and torch (CPU and CUDA).

    Called before a model is built: fresh modules (heads, character encoders) are initialised from torch's global
    generator, which every process otherwise seeds at random.
    """
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


@contextmanager
def _seeded(seed: int):
    """Seed python, numpy and torch for a block (the deterministic ``prepare`` stage)."""
    seed_everything(seed)
    yield
