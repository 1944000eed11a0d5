"""The name benchmark's domains as suite tasks: ``names_<domain>_dev`` and ``names_<domain>_test``.

Each task links its domain's queries (an acronym, another name, a short name, a noisy string) against the split's
knowledge base of look-alike siblings (:mod:`phrasezoo.data.benchmarks.name_benchmark`) by the encoder's nearest neighbour, and
reports top-1 accuracy (the main metric) and MRR@10. Groups: ``names_dev`` (every choice may read these) and
``names_test`` (the headline, never used for a choice). The data is built from offline sources on first use and
cached, so the tasks need no benchmarks folder.
"""

from __future__ import annotations

import numpy as np

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS, SPLITS, NameTask
from phrasezoo.encoders import VECTORS, Encoder

from ..datasets.names import load_name_task
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task

MRR_DEPTH = 10


def rank_of_gold(scores: np.ndarray, gold_rows: np.ndarray) -> np.ndarray:
    """1-based rank of each row's gold column in its score row (ties count against the gold)."""
    gold_scores = scores[np.arange(len(gold_rows)), gold_rows]
    return (scores > gold_scores[:, None]).sum(1) + (scores == gold_scores[:, None]).sum(1)


def name_scores(encoder: Encoder, task: NameTask) -> np.ndarray:
    """``(queries, KB)`` similarity of every query to every KB name."""
    if VECTORS in encoder.capabilities:
        return encoder.encode(task.queries) @ encoder.encode(task.kb).T
    return np.asarray(encoder.similarity(task.queries, task.kb), dtype=np.float32)


class _Names(Task):
    main_metric = "accuracy"
    needs_benchmarks_dir = False
    domain: str
    split: str
    model_index = None

    def metrics(self) -> list[str]:
        return ["accuracy", "mrr10"]

    def load(self, ctx: TaskContext) -> NameTask:
        return self.load_local(ctx)

    def load_local(self, ctx: TaskContext) -> NameTask:
        return load_name_task(self.domain, self.split)

    def score(self, encoder: Encoder, data: NameTask, ctx: TaskContext) -> list[TaskResult]:
        row = {name: i for i, name in enumerate(data.kb)}
        ranks = rank_of_gold(name_scores(encoder, data), np.array([row[g] for g in data.gold]))
        ranking = compute("ranking", predictions=ranks.tolist(), depth=MRR_DEPTH)
        accuracy, mrr = ranking["accuracy"], ranking["mrr"]
        notes = f"{len(data.queries)} queries against a KB of {len(data.kb)} names (look-alike siblings included)"
        return [self.result("accuracy", accuracy, len(data.queries), notes),
                self.result("mrr10", mrr, len(data.queries), notes)]  # fmt: skip


def _register(domain: str, split: str, order: int) -> None:
    label = {"acronyms": "Acronyms", "aliases": "Aliases", "short-names": "Short names", "noisy": "Noisy"}[domain]
    attrs = {
        "name": f"names_{domain.replace('-', '_')}_{split}",
        "domain": domain,
        "split": split,
        "order": order,
        "description": f"name benchmark, {domain} ({split}): query -> its name among look-alike siblings, top-1",
        "groups": (f"names_{split}",),
        "columns": (("accuracy", f"{label} {split}"), ("mrr10", f"{label} {split} MRR")),
    }
    register_task(type(f"Names{label.replace(' ', '')}{split.title()}", (_Names,), attrs))


for _i, _domain in enumerate(DOMAINS):
    for _split in SPLITS:
        _register(_domain, _split, 20 + _i)
