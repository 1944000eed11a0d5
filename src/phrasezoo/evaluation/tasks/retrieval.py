"""Entity retrieval (YAGO, UMLS): mention -> canonical name, top-1 accuracy.

The published task searches the full knowledge bases (572k YAGO / 750k UMLS names), which are not available here.
The knowledge base is therefore the set of unique gold names of the 10k test pairs (a "gold-name KB"): an easier,
smaller search space, so these numbers are NOT comparable with the papers' full-KB numbers. Every result says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phrasezoo.encoders import Encoder

from ..hub_dataset import HUB_DATASET, text
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task

GOLD_KB_NOTE = "gold-name KB (the unique gold names of the test pairs, not the full KB): not comparable with the paper"


@dataclass
class RetrievalData:
    """Mentions with their gold canonical names; ``kb`` None means the gold-name KB."""

    mentions: list[str]
    gold: list[str]
    kb: list[str] | None = None

    def knowledge_base(self) -> list[str]:
        return list(self.kb) if self.kb is not None else sorted(set(self.gold))


def read_pairs_tsv(path) -> RetrievalData:
    """``mention<TAB>canonical name`` per line."""
    mentions, gold = [], []
    with open(path, encoding="utf8") as handle:
        for line_no, line in enumerate(handle, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise ValueError(f"{path}:{line_no}: expected 'mention<TAB>name'.")
            mentions.append(fields[0])
            gold.append(fields[1])
    return RetrievalData(mentions, gold)


def top1_accuracy(encoder: Encoder, data: RetrievalData) -> tuple[float, int]:
    """Share of mentions whose nearest KB name (exact inner-product search) equals the gold name; and the KB size."""
    kb = data.knowledge_base()
    best = encoder.nearest(data.mentions, kb)
    predicted = np.asarray(kb, dtype=object)[best].tolist()
    return compute("accuracy", predictions=predicted, references=list(data.gold))["accuracy"], len(kb)


class _Retrieval(Task):
    main_metric = "accuracy"
    groups = ("all", "pearl")
    folder: str
    gold_name_kb = True

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> RetrievalData:
        return RetrievalData([text(r["query"]) for r in rows], [text(r["label"]) for r in rows])

    def load_local(self, ctx: TaskContext) -> RetrievalData:
        return read_pairs_tsv(ctx.path(self.folder, f"{self.folder}_test_samples.tsv"))

    def score(self, encoder: Encoder, data: RetrievalData, ctx: TaskContext) -> list[TaskResult]:
        acc, kb_size = top1_accuracy(encoder, data)
        kb_note = GOLD_KB_NOTE if data.kb is None else "full KB"
        notes = f"top-1 accuracy, {kb_note}; KB size {kb_size}"
        return [self.result("accuracy", acc, len(data.mentions), notes)]


@register_task
class Yago(_Retrieval):
    name = "yago"
    order = 5
    description = "YAGO entity retrieval, top-1 accuracy over a gold-name KB"
    hub_config = "yago"
    folder = "yago"
    columns = (("accuracy", "YAGO‡"),)
    model_index = ("text-retrieval", "Entity retrieval", HUB_DATASET, "yago", "YAGO (PEARL benchmark, gold-name KB)")


@register_task
class Umls(_Retrieval):
    name = "umls"
    order = 6
    description = "UMLS entity retrieval, top-1 accuracy over a gold-name KB"
    hub_config = "umls"
    folder = "umls"
    columns = (("accuracy", "UMLS‡"),)
    model_index = ("text-retrieval", "Entity retrieval", HUB_DATASET, "umls", "UMLS (PEARL benchmark, gold-name KB)")
