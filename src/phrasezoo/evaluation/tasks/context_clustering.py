"""Context-aware entity clustering (UCTopic protocol): mentions encoded *in their sentences*, KMeans, ACC and NMI.

Data: every PER/LOC/ORG mention of the CoNLL-2003 test split and every Chemical/Disease mention of the BC5CDR test
split, with its sentence (the tokens joined by single spaces; the span's character offsets are computed from the
token positions, so a name that occurs twice in a sentence keeps its own occurrence). Duplicates are kept: the same
name in two sentences is two instances with different contexts, which is the point of a context-aware encoder and
what UCTopic's evaluation does (all mentions). The test split keeps the suite's CPU budget and matches the PEARL
clustering task; the paper pools all splits.

Scoring: KMeans with k = number of types (random_state 0, n_init 10, one thread) on the L2-normalised mention
vectors; ACC = accuracy after the best one-to-one matching of clusters to types (Hungarian algorithm), NMI =
normalised mutual information.

Any encoder that embeds a mention in its sentence (``encode_mentions``) is scored: zoo models and baselines alike.
The variants after UCTopic's cluster-assisted contrastive finetuning (``<dataset>_context_ccl``) are UCTopic's own
tasks (:mod:`phrasezoo.methods.uctopic.tasks.clustering`); the dev suite clusters the benchmarks' dev mentions with the same
reader and scoring (:func:`read_ner_mentions`, :func:`cluster_scores`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phrasezoo.encoders import MENTIONS, Encoder

from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task
from .clustering import kmeans_clusters, ner_spans

Mention = tuple[str, tuple[int, int]]


@dataclass
class MentionClusteringData:
    """Mentions in context with their gold type; ``types`` fixes k."""

    mentions: list[Mention]
    labels: list[str]
    types: list[str]

    @property
    def texts(self) -> list[str]:
        return [sentence[start:end] for sentence, (start, end) in self.mentions]


def read_ner_mentions(path, types: list[str]) -> MentionClusteringData:
    """A NER JSON-lines file (:func:`~phrasezoo.evaluation.tasks.clustering.ner_spans`) -> typed mentions with their
    sentence (tokens joined by spaces) and character span."""
    mentions, labels = [], []
    for tokens, start, end, label in ner_spans(path, types):
        starts = np.cumsum([0] + [len(t) + 1 for t in tokens[:-1]]).tolist()
        mentions.append((" ".join(tokens), (starts[start], starts[end] + len(tokens[end]))))
        labels.append(label)
    return MentionClusteringData(mentions, labels, list(types))


def hungarian_accuracy(labels, clusters) -> float:
    """Accuracy of ``clusters`` (integer ids) after mapping each cluster to at most one label so that the most
    instances agree (the ``cluster_accuracy`` metric module)."""
    return compute("cluster_accuracy", predictions=[int(c) for c in clusters], references=list(labels))["accuracy"]


def cluster_scores(vectors: np.ndarray, labels: list[str], k: int, seed: int = 0) -> dict[str, float]:
    """``{"acc": ..., "nmi": ...}`` of KMeans (k clusters, random_state ``seed``, n_init 10, one thread)."""
    clusters = kmeans_clusters(vectors, k, seed)
    return {
        "acc": hungarian_accuracy(labels, clusters),
        "nmi": compute("nmi", predictions=clusters, references=list(labels))["nmi"],
    }


class ContextClusteringTask(Task):
    main_metric = "nmi"
    requires = frozenset({MENTIONS})
    groups = ("context",)
    folder: str
    types: list[str]

    def metrics(self) -> list[str]:
        return ["nmi", "acc"]

    def load_local(self, ctx: TaskContext) -> MentionClusteringData:
        return read_ner_mentions(ctx.path(self.folder, "test.jsonl"), self.types)

    def score(self, encoder: Encoder, data: MentionClusteringData, ctx: TaskContext) -> list[TaskResult]:
        k = len(data.types)
        scores = cluster_scores(encoder.encode_mentions(data.mentions), data.labels, k, seed=0)
        notes = (
            f"KMeans k={k} ({'/'.join(data.types)}), random_state 0, n_init 10; test mentions in their sentences "
            f"(duplicates kept); ACC with Hungarian matching"
        )
        return [self.result(m, scores[m], len(data.mentions), notes) for m in self.metrics()]


@register_task
class Conll2003Context(ContextClusteringTask):
    name = "conll2003_context"
    order = 11
    description = "CoNLL-2003 test mentions (PER/LOC/ORG) in their sentences, KMeans, NMI and Hungarian ACC"
    columns = (("nmi", "CoNLL ctx NMI"), ("acc", "CoNLL ctx ACC"))
    folder = "conll2003"
    types = ["PER", "LOC", "ORG"]


@register_task
class Bc5cdrContext(ContextClusteringTask):
    name = "bc5cdr_context"
    order = 12
    description = "BC5CDR test mentions (Chemical/Disease) in their sentences, KMeans, NMI and Hungarian ACC"
    columns = (("nmi", "BC5CDR ctx NMI"), ("acc", "BC5CDR ctx ACC"))
    folder = "bc5cdr"
    types = ["Chemical", "Disease"]
