"""Fuzzy join (AutoFJ, 50 datasets from the PyPI package ``autofj``): right title -> nearest left title.

For each dataset, every right-table row whose title has a gold match in ``gt.csv`` is joined to the most similar
title of the whole left table; it is correct when that title equals the gold left title (string comparison, so
duplicate left titles count as the same answer). The task value is the mean accuracy over the datasets; the
per-dataset accuracies are kept in the result's ``details``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phrasezoo.encoders import Encoder

from ..hub_dataset import HUB_DATASET, text
from ..results import TaskResult
from .base import Task, TaskContext, register_task


@dataclass
class JoinTable:
    name: str
    left: list[str]
    right: list[str]
    gold: dict[str, str]  # right title -> gold left title

    def queries(self) -> list[str]:
        """Right titles (in table order, duplicates kept) that have a gold match."""
        return [t for t in self.right if t in self.gold]


def autofj_root() -> Path:
    try:
        import autofj
    except ImportError as err:
        raise FileNotFoundError("AutoFJ needs the PyPI package `autofj`: pip install autofj==0.0.6") from err
    return Path(autofj.__file__).parent / "benchmark"


def autofj_names() -> list[str]:
    return sorted(p.name for p in autofj_root().iterdir() if (p / "gt.csv").exists())


def read_autofj(names: list[str] | None = None, root: Path | None = None) -> list[JoinTable]:
    """Tables of the named AutoFJ datasets (all 50 by default), read like ``autofj.datasets.load_data``."""
    import pandas as pd

    root = root or autofj_root()
    tables = []
    for name in names or autofj_names():
        folder = root / name
        if not (folder / "gt.csv").exists():
            raise FileNotFoundError(f"AutoFJ dataset {name!r} not found under {root}.")
        left = pd.read_csv(folder / "left.csv")["title"].astype(str).tolist()
        right = pd.read_csv(folder / "right.csv")["title"].astype(str).tolist()
        gt = pd.read_csv(folder / "gt.csv")
        gold = dict(zip(gt["title_r"].astype(str), gt["title_l"].astype(str)))
        tables.append(JoinTable(name, left, right, gold))
    return tables


def join_accuracy(encoder: Encoder, table: JoinTable) -> tuple[float, int]:
    queries = table.queries()
    if not queries:
        return float("nan"), 0
    best = encoder.nearest(queries, table.left)
    predicted = [table.left[i] for i in best]
    correct = [p == table.gold[q] for p, q in zip(predicted, queries)]
    return float(np.mean(correct)), len(queries)


@register_task
class AutoFJ(Task):
    name = "autofj"
    order = 9
    main_metric = "accuracy"
    description = "AutoFJ fuzzy join: right title -> nearest left title, mean accuracy over 50 datasets"
    groups = ("all", "pearl")
    hub_config = "autofj"
    needs_benchmarks_dir = False
    columns = (("accuracy", "AutoFJ"),)
    model_index = ("text-retrieval", "Fuzzy join", HUB_DATASET, "autofj", "AutoFJ, 50 datasets (PEARL benchmark)")

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> list[JoinTable]:
        return read_autofj([text(r["Dataset"]).strip() for r in rows])

    def load_local(self, ctx: TaskContext) -> list[JoinTable]:
        return read_autofj()

    def score(self, encoder: Encoder, data: list[JoinTable], ctx: TaskContext) -> list[TaskResult]:
        if encoder.capabilities >= {"vectors"}:  # encode every title of every table in one sorted, batched call
            encoder.encode([t for table in data for t in (*table.left, *table.queries())])
        per_dataset, total = {}, 0
        for table in data:
            acc, n = join_accuracy(encoder, table)
            per_dataset[table.name] = round(acc, 6)
            total += n
        mean = float(np.mean(list(per_dataset.values())))
        notes = (
            f"mean accuracy over {len(data)} datasets ({total} right titles with a gold match); per dataset in details"
        )
        return [self.result("accuracy", mean, total, notes, details={"per_dataset": per_dataset})]
