"""The AutoFJ fuzzy-join benchmark (50 datasets from the PyPI package ``autofj``): right title -> nearest left title.

For each dataset, every right-table row whose title has a gold match in ``gt.csv`` is joined to the most similar
title of the whole left table; it is correct when that title equals the gold left title (string comparison, so
duplicate left titles count as the same answer). The task value is the mean accuracy over the datasets; the
per-dataset accuracies are kept in the result's ``details``.

Dev split (DESIGN.md, wave 3): the sorted dataset names at index 0, 5, 10, ... (``index % 5 == 0``, 10 datasets)
are ``autofj_dev``, the other 40 ``autofj_test``. Every matching choice (features, weights, thresholds, model) is
made on ``autofj_dev``; ``autofj_test`` is the headline; ``autofj`` (all 50) stays for the paper column, with 10 of
its datasets used for selection.

AutoFJ's own precision/recall protocol (:func:`precision_recall`): each right row is joined to its best left row
when the score passes a threshold; precision = correct joined rows / joined rows (a right row without a gold match
is always a wrong join), recall = correct joined rows / right rows with a gold match. Reported per dataset: the
recall at precision 0.9 (the largest recall of a threshold whose precision is at least 0.9) and the best F1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from phrasezoo.encoders import Encoder

from ..hub_dataset import HUB_DATASET, text
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task

SPLITS = ("all", "dev", "test")
DEV_MODULUS = 5
TARGET_PRECISION = 0.9


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
    try:  # an optional dependency: only the AutoFJ task needs it
        import autofj  # lazy: an optional package (the error names it)
    except ImportError as err:
        raise FileNotFoundError("AutoFJ needs the PyPI package `autofj`: pip install autofj==0.0.6") from err
    return Path(autofj.__file__).parent / "benchmark"


def autofj_names(split: str = "all") -> list[str]:
    """Sorted dataset names: ``"all"`` 50, ``"dev"`` (index % 5 == 0, 10) or ``"test"`` (the other 40)."""
    names = sorted(p.name for p in autofj_root().iterdir() if (p / "gt.csv").exists())
    if split not in SPLITS:
        raise ValueError(f"AutoFJ split must be one of {', '.join(SPLITS)}, got {split!r}.")
    if split == "all":
        return names
    return [n for i, n in enumerate(names) if (i % DEV_MODULUS == 0) == (split == "dev")]


def read_autofj(names: list[str] | None = None, root: Path | None = None) -> list[JoinTable]:
    """Tables of the named AutoFJ datasets (all 50 by default), read like ``autofj.datasets.load_data``."""
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


def precision_recall(scores, correct, n_gold: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AutoFJ's precision/recall curve of a join that keeps right rows whose best score passes a threshold.

    ``scores[i]``: score of right row ``i``'s best left row; ``correct[i]``: whether that row is the gold one (False
    for right rows without a gold match); ``n_gold``: right rows with a gold match. Returns ``(thresholds,
    precision, recall)`` for every distinct score as threshold (keep rows with score >= threshold), highest first.
    """
    scores = np.asarray(scores, dtype=np.float64)
    correct = np.asarray(correct, dtype=bool)
    if scores.size == 0 or n_gold == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    order = np.argsort(-scores, kind="stable")
    s, c = scores[order], correct[order]
    kept = np.arange(1, len(s) + 1)
    hits = np.cumsum(c)
    last = np.r_[s[1:] != s[:-1], True]  # one point per distinct score: ties are kept or dropped together
    return s[last], hits[last] / kept[last], hits[last] / n_gold


def recall_at_precision(scores, correct, n_gold: int, target: float = TARGET_PRECISION) -> float:
    """The largest recall of a threshold whose precision is at least ``target`` (0 when none reaches it)."""
    _, precision, recall = precision_recall(scores, correct, n_gold)
    ok = precision >= target - 1e-12
    return float(recall[ok].max()) if ok.any() else 0.0


def best_f1(scores, correct, n_gold: int) -> float:
    """The best F1 over thresholds."""
    _, precision, recall = precision_recall(scores, correct, n_gold)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    return float(f1.max()) if f1.size else 0.0


def join_predictions(encoder: Encoder, table: JoinTable) -> tuple[list[str], list[str]]:
    """Each right title's nearest left title and its gold left title (right titles with a gold match)."""
    queries = table.queries()
    if not queries:
        return [], []
    best = encoder.nearest(queries, table.left)
    return [table.left[i] for i in best], [table.gold[q] for q in queries]


def join_accuracy(encoder: Encoder, table: JoinTable) -> tuple[float, int]:
    """One table's accuracy (NaN without gold matches) and its number of right titles with a gold match."""
    predicted, gold = join_predictions(encoder, table)
    if not gold:
        return float("nan"), 0
    return compute("accuracy", predictions=predicted, references=gold)["accuracy"], len(gold)


@register_task
class AutoFJ(Task):
    name = "autofj"
    split = "all"
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

    def load(self, ctx: TaskContext) -> list[JoinTable]:
        tables = super().load(ctx)
        keep = set(autofj_names(self.split))
        return [t for t in tables if t.name in keep]

    def load_local(self, ctx: TaskContext) -> list[JoinTable]:
        return read_autofj(autofj_names(self.split))

    def score(self, encoder: Encoder, data: list[JoinTable], ctx: TaskContext) -> list[TaskResult]:
        if encoder.capabilities >= {"vectors"}:  # encode every title of every table in one sorted, batched call
            encoder.encode([t for table in data for t in (*table.left, *table.queries())])
        predicted, gold, names = [], [], []
        for table in data:
            table_predicted, table_gold = join_predictions(encoder, table)
            predicted += table_predicted
            gold += table_gold
            names += [table.name] * len(table_gold)
        joined = compute("fuzzy_join_accuracy", predictions=predicted, references=gold, datasets=names) if gold else {}
        # a table without gold matches has no accuracy: NaN, and so is the mean (as np.mean of the values would be)
        per_dataset = {t.name: joined.get("per_dataset", {}).get(t.name, float("nan")) for t in data}
        mean = joined["accuracy"] if len(joined.get("per_dataset", {})) == len(data) else float("nan")
        total = len(gold)
        notes = (
            f"mean accuracy over {len(data)} datasets ({total} right titles with a gold match); per dataset in details"
        )
        if self.split == "all":
            notes += f"; {len(autofj_names('dev'))} of the datasets (autofj_dev) are used for matching choices"
        return [self.result("accuracy", mean, total, notes, details={"per_dataset": per_dataset})]


@register_task
class AutoFJDev(AutoFJ):
    """The 10 dev datasets (sorted names at index % 5 == 0): every matching choice is made here."""

    name = "autofj_dev"
    split = "dev"
    order = 9
    description = "AutoFJ dev-10 (sorted dataset names at index % 5 == 0): the datasets matching choices use"
    groups = ("autofj_splits",)
    columns = (("accuracy", "AutoFJ dev-10"),)
    model_index = None


@register_task
class AutoFJTest(AutoFJ):
    """The 40 test datasets (every dataset not in ``autofj_dev``): the headline, never used for a choice."""

    name = "autofj_test"
    split = "test"
    order = 9
    description = "AutoFJ test-40 (the datasets not in autofj_dev): the headline, never used for choices"
    groups = ("autofj_splits",)
    columns = (("accuracy", "AutoFJ test-40"),)
    model_index = None
