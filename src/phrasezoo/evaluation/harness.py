"""Run tasks on one encoder and collect a results document (the Python API the training pipeline calls)."""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from phrasezoo.encoders import Encoder, load_encoder

from .results import TaskResult, make_document, write_results
from .tasks import TaskContext, default_benchmarks_dir, get_task, resolve_tasks

logger = logging.getLogger(__name__)


def evaluate(
    encoder_or_spec: Any,
    tasks: str | list[str] = "all",
    benchmarks_dir: str | os.PathLike | None = None,
    output: str | os.PathLike | None = None,
    progress: bool = True,
    stsb_per_span: bool = False,
    source: str = "local",
    batch_size: int | None = None,
    seed: int = 0,
    hub_kwargs: dict[str, Any] | None = None,
    task_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Evaluate a model on ``tasks`` and return the results document (also written to ``output`` if given).

    ``encoder_or_spec``: an :class:`~phrasezoo.encoders.Encoder`, a model object with ``encode`` or a
    spec string (see :func:`~phrasezoo.encoders.load_encoder`). ``tasks``: ``"all"``, ``"pearl"``,
    ``"t1,t2"`` or a list. ``benchmarks_dir`` defaults to ``$PHRASEZOO_BENCHMARKS`` or ``../shared/benchmarks``.
    ``source="hub"`` reads the PEARL tasks from the Hub dataset ``Lihuchen/pearl_benchmark`` (needs a network);
    tasks it does not hold (stsb_context) still come from ``benchmarks_dir``. ``task_options`` go to the tasks as
    run options, e.g. ``{"ccl": {"steps": 25}}`` for the ``_ccl`` tasks (a recipe's ``eval.ccl`` block). A task the
    encoder cannot run (missing capability) or whose data is missing is reported with ``value: null`` and a note
    instead of failing the run.
    """
    if source not in ("local", "hub"):
        raise ValueError(f"source must be 'local' or 'hub', got {source!r}.")
    names = resolve_tasks(tasks)
    encoder: Encoder = load_encoder(encoder_or_spec, batch_size=batch_size, progress=progress)
    encoder.progress = progress
    ctx = TaskContext(
        benchmarks_dir=Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir(),
        source=source,
        progress=progress,
        seed=seed,
        options={"stsb_per_span": stsb_per_span, **(task_options or {})},
        hub_kwargs=dict(hub_kwargs or {}),
    )
    check_benchmarks_dir(ctx, names)
    results: list[TaskResult] = []
    started_all = time.perf_counter()
    for number, name in enumerate(names, 1):
        task = get_task(name)
        _say(progress, f"[{number}/{len(names)}] {name}: {task.description}")
        started = time.perf_counter()
        missing = task.missing(encoder)
        if missing:
            entries = task.skipped(f"{encoder.name} lacks {', '.join(sorted(missing))}")
        else:
            try:
                data = task.load(ctx)
            except FileNotFoundError as err:
                entries = task.skipped(f"data not found: {err}")
            else:
                entries = task.score(encoder, data, ctx)
        elapsed = time.perf_counter() - started
        for entry in entries:
            entry.seconds = entry.seconds or elapsed
        results.extend(entries)
        for entry in entries:
            shown = "skipped" if entry.value is None else f"{entry.value:.4f}"
            _say(progress, f"    {entry.metric:28s} {shown:>8s}   ({entry.seconds:.1f} s)")
    _say(progress, f"done: {len(names)} task(s) in {time.perf_counter() - started_all:.1f} s, "
         f"{encoder.encoded_count} strings encoded")  # fmt: skip
    doc = make_document(encoder.name, encoder.revision, results)
    if output is not None:
        write_results(doc, output)
        _say(progress, f"results written to {output}")
    return doc


def check_benchmarks_dir(ctx: TaskContext, names: list[str]) -> None:
    """Fail early, with where to point ``--benchmarks-dir``, when tasks need a benchmarks folder that is missing."""
    needing = [
        n
        for n in names
        if get_task(n).needs_benchmarks_dir and not (ctx.source == "hub" and get_task(n).hub_config is not None)
    ]
    if needing and (ctx.benchmarks_dir is None or not Path(ctx.benchmarks_dir).is_dir()):
        raise FileNotFoundError(
            f"Benchmark folder {ctx.benchmarks_dir} not found (needed by {', '.join(needing)}). Point "
            "--benchmarks-dir / benchmarks_dir= or $PHRASEZOO_BENCHMARKS at the folder holding bird/, turney/, ppdb/, "
            "... (in this project: ../shared/benchmarks from the repository root)."
        )


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)
