"""The baselines of a recipe's comparison table, measured in the same run as the model (or reused from results/).

One results file per baseline (``results/baselines/baseline-<name>.json``) is shared by every recipe: a run measures the
recipe's tasks and keeps the other recipes' tasks in the file. The main job may measure them in a process of its own
beside training (started with the soup's first task build when the ingredients take every core):
:meth:`Baselines.start` starts it, :meth:`Baselines.results` waits for it, or measures in this process when nothing
was started. The numbers do not depend on where they are measured (one-thread probes and KMeans, encoders that give
the same bits on any thread count).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from phrasezoo.core.recipes import results_file_name, results_path
from phrasezoo.evaluation import evaluate, read_results, resolve_tasks, write_results
from phrasezoo.evaluation.processes.background import ModuleProcess, read_request


class Baselines:
    """The results of ``specs`` on ``tasks``: all measured now (``force_eval``) or reused from ``results/`` with only
    the missing tasks measured; in a background process when :meth:`start` is called, else in this one."""

    def __init__(self, specs: list[str], tasks, benchmarks_dir: str | None, force_eval: bool) -> None:
        self.specs, self.benchmarks_dir, self.force_eval = list(specs), benchmarks_dir, force_eval
        self.wanted = list(resolve_tasks(tasks)) if specs else []
        self.process: ModuleProcess | None = None
        self.folder: Path | None = None
        self.background: tuple[float, float] | None = None  # wall-clock start and end of the background run

    def _fresh(self, spec: str) -> bool:
        """Whether the baseline's recipe tasks are all measured anew (else its file is reused where it can be)."""
        return self.force_eval or not results_path(spec).exists()

    def _to_run(self, spec: str) -> list[str]:
        if self._fresh(spec):
            return self.wanted
        have = {r["task"] for r in read_results(results_path(spec))["results"]}
        return [t for t in self.wanted if t not in have]

    def start(self) -> None:
        """Measure in a process of its own (its output in ``results/.baselines-*/log.txt``), without waiting."""
        jobs = {spec: tasks for spec in self.specs if (tasks := self._to_run(spec))}
        if not jobs or self.process is not None:
            return
        results_path("x").parent.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix=".baselines-", dir=results_path("x").parent))
        request = {"jobs": jobs, "benchmarks_dir": self.benchmarks_dir, "folder": str(self.folder)}
        print(f">> measuring {', '.join(jobs)} beside training (log: {self.folder / 'log.txt'})", flush=True)
        self.process = ModuleProcess(__name__, request, self.folder / "log.txt")
        self.started = time.time()

    def results(self) -> list[dict]:
        """Every baseline's results on the recipe's tasks (merged into its file in ``results/``)."""
        fresh: dict[str, dict] = {}
        if self.process is not None:
            if self.process.wait() == 0:
                outputs = _outputs(self.folder, self.specs)
                fresh = {spec: read_results(path) for spec, path in outputs.items()}
                ended = max((path.stat().st_mtime for path in outputs.values()), default=time.time())
                self.background = (self.started, ended - self.started)
            else:
                print(f">> the background baseline run failed (see {self.folder / 'log.txt'}); measuring here")
        docs = [self._merge(spec, fresh.get(spec)) for spec in self.specs]
        if self.folder is not None:
            for file in self.folder.iterdir():
                file.unlink()
            self.folder.rmdir()
        return docs

    def _merge(self, spec: str, fresh: dict | None) -> dict:
        path, tasks = results_path(spec), self._to_run(spec)
        if tasks and fresh is None:
            fresh = evaluate(spec, tasks=",".join(tasks), benchmarks_dir=self.benchmarks_dir, output=None)
        if self._fresh(spec):
            others = read_results(path)["results"] if path.exists() else []  # the other recipes' tasks stay
            write_results({**fresh, "results": [r for r in others if r["task"] not in tasks] + fresh["results"]}, path)
            return fresh
        cached = read_results(path)
        print(f">> {path}: " + (f"measured the missing task(s) {', '.join(tasks)}" if tasks else "reused"))
        if tasks:
            cached["results"] = [r for r in cached["results"] if r["task"] not in tasks] + fresh["results"]
            write_results(cached, path)
        return {**cached, "results": [r for r in cached["results"] if r["task"] in self.wanted]}


def _outputs(folder: Path, specs: list[str]) -> dict[str, Path]:
    files = {spec: folder / f"{results_file_name(spec)}.json" for spec in specs}
    return {spec: path for spec, path in files.items() if path.exists()}


def main(argv: list[str] | None = None) -> None:
    """The background process of :meth:`Baselines.start`: ``python -m phrasezoo.evaluation.processes.baselines <request>``."""
    request = read_request(argv)
    os.environ.setdefault("TQDM_DISABLE", "1")
    for spec, tasks in request["jobs"].items():
        doc = evaluate(spec, tasks=",".join(tasks), benchmarks_dir=request["benchmarks_dir"], output=None)
        write_results(doc, Path(request["folder"]) / f"{results_file_name(spec)}.json")


if __name__ == "__main__":
    main()
