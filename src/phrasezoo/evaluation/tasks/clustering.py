"""Entity clustering (CoNLL-2003, BC5CDR), PEARL protocol: KMeans on context-free mention embeddings, NMI.

Every typed mention of the test split is embedded as its surface string (tokens joined by spaces, no context,
duplicates kept), KMeans with k = number of types (random_state 0, n_init 10) clusters them, and the score is the
normalised mutual information between clusters and gold types. CoNLL keeps PER/LOC/ORG (MISC is dropped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from phrasezoo.encoders import VECTORS, Encoder

from ..hub_dataset import HUB_DATASET, cluster_label, text
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task


@dataclass
class ClusteringData:
    """Phrases with their gold type; ``types`` fixes k."""

    phrases: list[str]
    labels: list[str]
    types: list[str]


def ner_spans(path: str | Path, types: list[str]) -> Iterator[tuple[list[str], int, int, str]]:
    """``(sentence tokens, start, end inclusive, type)`` of every mention of one of ``types`` in a NER JSON-lines
    file (``{"sentences": [[tokens]], "ner": [[[start, end_inclusive, TYPE], ...]]}`` per line), in file order."""
    keep = set(types)
    with open(path, encoding="utf8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            for tokens, spans in zip(obj["sentences"], obj["ner"]):
                for start, end, label in spans:
                    if label in keep:
                        yield tokens, start, end, label


def read_ner_jsonl(path, types: list[str]) -> ClusteringData:
    """A NER JSON-lines file (:func:`ner_spans`) -> typed mentions, each as its tokens joined by spaces."""
    phrases, labels = [], []
    for tokens, start, end, label in ner_spans(path, types):
        phrases.append(" ".join(tokens[start : end + 1]))
        labels.append(label)
    return ClusteringData(phrases, labels, list(types))


def kmeans_clusters(vectors: np.ndarray, k: int, seed: int = 0, n_init: int = 10, one_thread: bool = True) -> list:
    """KMeans cluster ids (k clusters, ``random_state`` seed). One thread by default: as fast here, and immune to a
    busy machine."""
    from sklearn.cluster import KMeans  # lazy: keeps scikit-learn (seconds) off 'import phrasezoo.evaluation'

    with threadpool_limits(limits=1) if one_thread else nullcontext():
        return KMeans(n_clusters=k, random_state=seed, n_init=n_init).fit_predict(vectors).tolist()


def kmeans_nmi(vectors: np.ndarray, labels: list[str], k: int, seed: int = 0) -> float:
    """NMI of KMeans clusters (n_init 10, one thread) vs gold labels."""
    return compute("nmi", predictions=kmeans_clusters(vectors, k, seed), references=list(labels))["nmi"]


class _Clustering(Task):
    main_metric = "nmi"
    requires = frozenset({VECTORS})
    groups = ("all", "pearl")
    folder: str
    types: list[str]

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> ClusteringData:
        pairs = [(text(r["entity"]), cluster_label(r["label"], cls.types)) for r in rows]
        pairs = [(p, t) for p, t in pairs if t in cls.types]  # CoNLL: PER/LOC/ORG only, as in PEARL
        return ClusteringData([p for p, _ in pairs], [t for _, t in pairs], list(cls.types))

    def load_local(self, ctx: TaskContext) -> ClusteringData:
        return read_ner_jsonl(ctx.path(self.folder, "test.jsonl"), self.types)

    def score(self, encoder: Encoder, data: ClusteringData, ctx: TaskContext) -> list[TaskResult]:
        k = len(data.types)
        nmi = kmeans_nmi(encoder.encode(data.phrases), data.labels, k, seed=0)
        notes = f"KMeans k={k} ({'/'.join(data.types)}), random_state 0, n_init 10, test mentions without context"
        return [self.result("nmi", nmi, len(data.phrases), notes)]


@register_task
class Conll2003(_Clustering):
    name = "conll2003"
    order = 7
    description = "CoNLL-2003 test mentions (PER/LOC/ORG) clustered with KMeans, NMI"
    hub_config = "conll"
    folder = "conll2003"
    types = ["PER", "LOC", "ORG"]
    columns = (("nmi", "CoNLL NMI"),)
    model_index = ("clustering", "Entity clustering", HUB_DATASET, "conll", "CoNLL-2003 (PEARL benchmark)")


@register_task
class Bc5cdr(_Clustering):
    name = "bc5cdr"
    order = 8
    description = "BC5CDR test mentions (Chemical/Disease) clustered with KMeans, NMI"
    hub_config = "bc5cdr"
    folder = "bc5cdr"
    types = ["Chemical", "Disease"]
    columns = (("nmi", "BC5CDR NMI"),)
    model_index = ("clustering", "Entity clustering", HUB_DATASET, "bc5cdr", "BC5CDR (PEARL benchmark)")
