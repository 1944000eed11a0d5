"""Evaluate one saved model on two cores: its tasks in two groups of about equal cost, one in a process of its own.

Why: the main job evaluates the exported model on nine tasks one after another (about 11 minutes on 2 cores), and
encoding a few short texts at a time gains little from a second torch thread. Two one-thread processes, each with
about half of the work (AutoFJ alone is half of it), finish sooner. The numbers are those of one process: each task
runs whole in one process with the same data, the probes and KMeans run on one thread anyway, and the encoders'
vectors do not depend on the thread count beyond float32 noise (:mod:`phrasezoo.encoders.cpu_threads`).

The groups follow each task's ``seconds`` in an earlier results file of the same model when there is one, else
:data:`TYPICAL_SECONDS`. ``PHRASEZOO_EVAL_WORKERS=1`` evaluates in this process only.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from phrasezoo.core.machine import usable_cores
from phrasezoo.encoders import load_encoder

from ..harness import evaluate
from ..results import make_document, read_results, write_results
from ..tasks import resolve_tasks
from .background import ModuleProcess, read_request

# seconds of pearl-mini's tasks on this 2-core machine (results/pearl/pearl-mini.json); other tasks count 30 s
TYPICAL_SECONDS = {"autofj": 367.0, "ppdb": 100.0, "ppdb_filtered": 76.0, "umls": 55.0, "yago": 42.0}
OTHER_TASK_SECONDS = 30.0


def split_by_cost(tasks: list[str], seconds: dict[str, float]) -> tuple[list[str], list[str]]:
    """Two groups of about equal total seconds (longest task first, each to the lighter group), each in task order."""
    first: list[str] = []
    second: list[str] = []
    totals = [0.0, 0.0]
    for task in sorted(tasks, key=lambda t: -seconds.get(t, OTHER_TASK_SECONDS)):
        group = 0 if totals[0] <= totals[1] else 1
        (first if group == 0 else second).append(task)
        totals[group] += seconds.get(task, OTHER_TASK_SECONDS)
    order = {task: i for i, task in enumerate(tasks)}
    return sorted(first, key=order.__getitem__), sorted(second, key=order.__getitem__)


def earlier_seconds(path: str | os.PathLike | None) -> dict[str, float]:
    """Each task's seconds in an earlier results file (its metrics share them: the largest), else the typical ones."""
    if path is None or not Path(path).exists():
        return dict(TYPICAL_SECONDS)
    try:
        entries = read_results(path)["results"]
    except ValueError:  # an unreadable earlier file only loses the hint
        return dict(TYPICAL_SECONDS)
    seconds: dict[str, float] = {}
    for entry in entries:
        seconds[entry["task"]] = max(seconds.get(entry["task"], 0.0), float(entry.get("seconds") or 0.0))
    return {**TYPICAL_SECONDS, **seconds}


def eval_workers() -> int:
    """Processes to evaluate in: 2 on a machine with at least 2 cores, unless ``PHRASEZOO_EVAL_WORKERS=1``."""
    forced = os.environ.get("PHRASEZOO_EVAL_WORKERS")
    if forced:
        if forced not in ("1", "2"):
            raise ValueError(f"PHRASEZOO_EVAL_WORKERS must be 1 or 2, got {forced!r}.")
        return int(forced)
    return 2 if usable_cores() >= 2 else 1


def evaluate_in_parallel(
    model_dir: str | os.PathLike,
    tasks: str | list[str],
    benchmarks_dir: str | os.PathLike | None,
    output: str | os.PathLike | None = None,
    name: str | None = None,
    task_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`~phrasezoo.evaluation.evaluate` of the model saved in ``model_dir`` (loaded as users load it), its
    tasks split over two processes of one torch thread each; the document lists the tasks in their usual order."""
    names = resolve_tasks(tasks)
    here, there = split_by_cost(names, earlier_seconds(output))
    encoder = load_encoder(str(model_dir), name=name)
    if eval_workers() < 2 or not here or not there:
        return evaluate(encoder, names, benchmarks_dir, output=output, task_options=task_options)
    threads = torch.get_num_threads()
    if output is not None:
        Path(output).parent.mkdir(parents=True, exist_ok=True)  # the scratch folder goes beside the results file
    with tempfile.TemporaryDirectory(prefix=".evaluate-", dir=Path(output).parent if output else None) as folder:
        part = Path(folder) / "part.json"
        request = {"model": str(model_dir), "tasks": there, "benchmarks_dir": None if benchmarks_dir is None
                   else str(benchmarks_dir), "task_options": task_options or {}, "output": str(part)}  # fmt: skip
        print(f">> evaluating {', '.join(there)} in a process of its own, {', '.join(here)} here", flush=True)
        child = ModuleProcess(__name__, request, Path(folder) / "log.txt", env={**os.environ, "TQDM_DISABLE": "1"})
        try:
            torch.set_num_threads(1)
            mine = evaluate(encoder, here, benchmarks_dir, output=None, task_options=task_options)
        except BaseException:
            child.terminate()
            raise
        finally:
            torch.set_num_threads(threads)
        code = child.wait()
        if code != 0:
            raise RuntimeError(f"Evaluating {', '.join(there)} in a process of its own failed (exit {code}):\n"
                               f"{child.log_tail()}")  # fmt: skip
        theirs = read_results(part)["results"]
    entries = {task: [] for task in names}
    for entry in mine["results"] + theirs:
        entries[entry["task"]].append(entry)
    doc = {
        **make_document(mine["model"], mine["model_revision"], []),
        "results": [e for t in names for e in entries[t]],
    }
    if output is not None:
        write_results(doc, output)
    return doc


def main(argv: list[str] | None = None) -> None:
    """The second process of :func:`evaluate_in_parallel`: ``python -m phrasezoo.evaluation.processes.parallel <request>``."""
    request = read_request(argv)
    torch.set_num_threads(1)
    evaluate(request["model"], request["tasks"], request["benchmarks_dir"], output=request["output"],
             progress=False, task_options=request["task_options"])  # fmt: skip


if __name__ == "__main__":
    main()
