"""Task registry: every benchmark task is a small class registered under its name.

A task declares the encoder capabilities it needs (:mod:`phrasezoo.encoders`), how to read its data
(from a local benchmarks folder or the Hub dataset) and how to score an encoder. Adding a task is one class with
``@register_task``; the harness, CLI, groups and reports pick it up by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from phrasezoo.encoders import SIMILARITY, Encoder
from phrasezoo.zoo.registry import get_method, list_methods

from ..hub_dataset import HUB_DATASET, kb_names, load_hub_rows
from ..results import TaskResult

TASKS: dict[str, type[Task]] = {}
GROUPS: dict[str, list[str]] = {}


@dataclass
class TaskContext:
    """What a task may read besides the encoder: where data is, where it comes from and run options."""

    benchmarks_dir: Path | None = None
    source: str = "local"  # "local" (benchmarks_dir) or "hub" (datasets.load_dataset on Lihuchen/pearl_benchmark)
    progress: bool = True
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    hub_kwargs: dict[str, Any] = field(default_factory=dict)

    def path(self, *parts: str) -> Path:
        """A file under the benchmarks folder, with an error that says where to point ``--benchmarks-dir``."""
        if self.benchmarks_dir is None:
            raise FileNotFoundError(
                "No benchmarks folder given: pass benchmarks_dir= / --benchmarks-dir or set PHRASEZOO_BENCHMARKS."
            )
        file = Path(self.benchmarks_dir).joinpath(*parts)
        if not file.exists():
            raise FileNotFoundError(
                f"Benchmark file {file} not found. Point --benchmarks-dir (or PHRASEZOO_BENCHMARKS) at the folder "
                f"that holds {'/'.join(parts[:-1]) or parts[0]}/ (e.g. ../shared/benchmarks)."
            )
        return file


class Task:
    """Base class. Subclasses set the class attributes and implement :meth:`load_local` and :meth:`score`."""

    name: ClassVar[str]
    main_metric: ClassVar[str]
    description: ClassVar[str] = ""
    requires: ClassVar[frozenset[str]] = frozenset({SIMILARITY})
    groups: ClassVar[tuple[str, ...]] = ("all",)
    hub_config: ClassVar[str | None] = None  # config of Lihuchen/pearl_benchmark holding this task, if any
    needs_benchmarks_dir: ClassVar[bool] = True
    order: ClassVar[int] = 1000  # position in groups and tables (the papers' column order)
    #: ``(metric, label)`` columns of the comparison table (:mod:`phrasezoo.evaluation.report`), in order
    columns: ClassVar[tuple[tuple[str, str], ...]] = ()
    column_order: ClassVar[float | None] = None  # position of the columns in the table (default: ``order``)
    #: model-index entry of a card: (task_type, task_name, dataset_type, dataset_config, dataset_name)
    model_index: ClassVar[tuple[str, str, str, str | None, str] | None] = None
    #: scored against a KB of the gold names only (not the paper's full KB): results are marked as not comparable
    gold_name_kb: ClassVar[bool] = False
    #: the run options this task reads, ``ctx.options[options_key]`` (a recipe's ``eval.<key>`` block, the CLI's
    #: ``--<key> KEY=VALUE``), checked by :meth:`check_options`; ``None``: it reads none
    options_key: ClassVar[str | None] = None

    @classmethod
    def check_options(cls, values: dict[str, Any] | None) -> dict[str, Any]:
        """The task's run options completed with its defaults; ``ValueError`` naming an unknown or bad option."""
        return dict(values or {})

    def load(self, ctx: TaskContext) -> Any:
        """Task data in the internal format, from the Hub dataset when ``ctx.source == "hub"`` and it has one."""
        if ctx.source == "hub" and self.hub_config is not None:
            return load_hub_benchmark(self.hub_config, **ctx.hub_kwargs)
        return self.load_local(ctx)

    def load_local(self, ctx: TaskContext) -> Any:
        raise NotImplementedError

    @classmethod
    def from_hub_rows(cls, rows: list[dict[str, Any]]) -> Any:
        """Rows of this task's config of the Hub dataset -> the internal format (tasks with a ``hub_config``)."""
        raise NotImplementedError(f"Task {cls.name!r} has no Hub dataset config.")

    def score(self, encoder: Encoder, data: Any, ctx: TaskContext) -> list[TaskResult]:
        raise NotImplementedError

    def missing(self, encoder: Encoder) -> set[str]:
        """Capabilities this task needs that ``encoder`` lacks."""
        return set(self.requires) - set(encoder.capabilities)

    def result(self, metric: str, value: float | None, n: int, notes: str = "", **extra: Any) -> TaskResult:
        return TaskResult(task=self.name, metric=metric, value=value, n=n, notes=notes, **extra)

    def skipped(self, reason: str) -> list[TaskResult]:
        """Result entries (value ``None``) that say why the task did not run."""
        return [self.result(metric, None, 0, notes=f"skipped: {reason}") for metric in self.metrics()]

    def metrics(self) -> list[str]:
        """Metric names this task reports (the main one first)."""
        return [self.main_metric]


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator: add a task to the registry and to its groups."""
    if cls.name in TASKS and TASKS[cls.name] is not cls:
        raise ValueError(f"Task {cls.name!r} is registered twice.")
    TASKS[cls.name] = cls
    for group in cls.groups:
        members = GROUPS.setdefault(group, [])
        if cls.name not in members:
            members.append(cls.name)
            members.sort(key=lambda name: (TASKS[name].order, name))
    return cls


def check_task_options(options: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Run options by key (``{"ccl": {"steps": 25}}``), each block checked by a task that reads it
    (:attr:`Task.options_key`), so that a misspelt key or option fails before any model is loaded."""
    readers = {task.options_key: task for task in TASKS.values() if task.options_key}
    checked = {}
    for key, values in (options or {}).items():
        if key not in readers:
            raise ValueError(f"No task reads run options {key!r}; known: {', '.join(sorted(readers)) or 'none'}.")
        if not isinstance(values, Mapping):
            raise ValueError(f"The {key!r} run options must be a mapping of option to value, got {values!r}.")
        readers[key].check_options(dict(values))
        checked[key] = dict(values)
    return checked


def get_task(name: str) -> Task:
    if name not in TASKS:
        raise KeyError(f"Unknown task {name!r}. Known tasks: {', '.join(TASKS)}; groups: {', '.join(GROUPS)}.")
    return TASKS[name]()


def resolve_tasks(spec: str | Iterable[str] = "all") -> list[str]:
    """Task names for ``"all"``, ``"pearl"``, ``"t1,t2"`` or a list of names/groups (order kept, no duplicates)."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    names: list[str] = []
    declared: dict[str, list[str]] | None = None
    for item in (i.strip() for i in items):
        if not item:
            continue
        if item in GROUPS:
            names.extend(GROUPS[item])
        elif item in TASKS:
            names.append(item)
        else:
            declared = method_groups() if declared is None else declared
            if item not in declared:
                groups = ", ".join([*GROUPS, *declared])
                raise KeyError(f"Unknown task or group {item!r}. Tasks: {', '.join(TASKS)}; groups: {groups}.")
            names.extend(declared[item])
    return list(dict.fromkeys(names))


def method_groups() -> dict[str, list[str]]:
    """Task groups declared by the zoo's methods (``Method.task_groups``: a paper's evaluation protocol)."""
    groups: dict[str, list[str]] = {}
    for name in list_methods():
        for group, members in get_method(name).task_groups.items():
            unknown = [task for task in members if task not in TASKS]
            if unknown:
                raise KeyError(f"Method {name!r} declares group {group!r} with unknown task(s) {unknown}.")
            groups[group] = list(members)
    return groups


def load_hub_benchmark(config: str, split: str | None = None, path: str | None = None, **load_kwargs: Any) -> Any:
    """Load one config of the Hub dataset and convert it with the task that owns the config (``Task.hub_config``);
    the ``kb`` config (full knowledge bases) gives a list of names."""
    rows = load_hub_rows(config, split=split, path=path or HUB_DATASET, **load_kwargs)
    if config == "kb":
        return kb_names(rows)
    owner = next((task for task in TASKS.values() if task.hub_config == config), None)
    if owner is None:
        raise ValueError(f"No task reads the Hub config {config!r}.")
    return owner.from_hub_rows(list(rows))


def default_benchmarks_dir() -> Path:
    """``$PHRASEZOO_BENCHMARKS`` or ``../shared/benchmarks`` relative to the current directory."""
    return Path(os.environ.get("PHRASEZOO_BENCHMARKS") or Path("..") / "shared" / "benchmarks")
