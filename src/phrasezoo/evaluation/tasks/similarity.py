"""Phrase similarity: Turney (pick the unigram that means the bigram) and BiRD (graded bigram relatedness)."""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from phrasezoo.encoders import Encoder

from ..hub_dataset import HUB_DATASET, text
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task


@dataclass
class MultipleChoiceData:
    """Each query with its candidates; the right answer is always ``candidates[i][0]``."""

    queries: list[str]
    candidates: list[list[str]]


@dataclass
class PairScoreData:
    """Phrase pairs with a gold score each."""

    left: list[str]
    right: list[str]
    scores: list[float]


def read_turney(path) -> MultipleChoiceData:
    """``query | answer | word1 | word2 | distractor x4``; the two component words are dropped (PEARL protocol)."""
    queries, candidates = [], []
    with open(path, encoding="utf8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            fields = [f.strip() for f in line.rstrip("\n").split(" | ")]
            if len(fields) != 8:
                raise ValueError(f"{path}:{line_no}: expected 8 ' | '-separated fields, got {len(fields)}.")
            queries.append(fields[0])
            candidates.append([fields[1], *fields[4:]])
    return MultipleChoiceData(queries, candidates)


def read_bird(path) -> PairScoreData:
    """BiRD TSV with a header: term1, term2 and 'relatedness score' columns."""
    with open(path, encoding="utf8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = rows[0]
    i1, i2, iscore = header.index("term1"), header.index("term2"), header.index("relatedness score")
    body = [r for r in rows[1:] if r]
    return PairScoreData([r[i1] for r in body], [r[i2] for r in body], [float(r[iscore]) for r in body])


def multiple_choice_accuracy(encoder: Encoder, data: MultipleChoiceData) -> float:
    """Share of queries whose best-scoring candidate is the answer (the first candidate).

    Exact ties are split: an answer tied with k-1 others at the top scores 1/k (the expected accuracy of a random
    tie-break). With real-valued embeddings ties do not happen and this is plain ``argmax == 0``; for a
    similarity-only baseline such as character Jaccard, where many candidates score 0, ``argmax`` would otherwise
    hand every all-zero row to the answer (character Jaccard: 65.2% with argmax, 44.8% with split ties).
    """
    sizes = {len(c) for c in data.candidates}
    if len(sizes) != 1:
        raise ValueError("All queries need the same number of candidates.")
    k = sizes.pop()
    left = [q for q in data.queries for _ in range(k)]
    right = [c for cands in data.candidates for c in cands]
    scores = encoder.paired_similarity(left, right).reshape(len(data.queries), k).astype(np.float64)
    answers = [0] * len(data.queries)  # the answer is the first candidate
    return compute("tie_split_accuracy", predictions=scores.tolist(), references=answers)["accuracy"]


@register_task
class Turney(Task):
    name = "turney"
    order = 1
    main_metric = "accuracy"
    description = "Turney 2012: bigram -> its synonymous unigram among 5 candidates (answer + 4 distractors)"
    groups = ("all", "pearl")
    hub_config = "turney"
    columns = (("accuracy", "Turney"),)
    model_index = ("sentence-similarity", "Phrase similarity", HUB_DATASET, "turney", "Turney (PEARL benchmark)")

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> MultipleChoiceData:
        keys = ["label", "candidate_1", "candidate_2", "candidate_3", "candidate_4"]
        return MultipleChoiceData([text(r["query"]) for r in rows], [[text(r[k]) for k in keys] for r in rows])

    def load_local(self, ctx: TaskContext) -> MultipleChoiceData:
        return read_turney(ctx.path("turney", "turney.txt"))

    def score(self, encoder: Encoder, data: MultipleChoiceData, ctx: TaskContext) -> list[TaskResult]:
        acc = multiple_choice_accuracy(encoder, data)
        notes = "argmax similarity over answer + 4 distractors (component words dropped); exact ties split"
        return [self.result("accuracy", acc, len(data.queries), notes)]


@register_task
class Bird(Task):
    name = "bird"
    order = 2
    main_metric = "pearson"
    description = "BiRD: Pearson correlation of pair similarity with human relatedness (3,345 bigram pairs)"
    groups = ("all", "pearl")
    hub_config = "bird"
    columns = (("pearson", "BiRD"),)
    model_index = ("sentence-similarity", "Phrase similarity", HUB_DATASET, "bird", "BiRD (PEARL benchmark)")

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> PairScoreData:
        return PairScoreData(
            [text(r["term1"]) for r in rows],
            [text(r["term2"]) for r in rows],
            [float(r["relatedness score"]) for r in rows],
        )

    def load_local(self, ctx: TaskContext) -> PairScoreData:
        return read_bird(ctx.path("bird", "bird.tsv"))

    def score(self, encoder: Encoder, data: PairScoreData, ctx: TaskContext) -> list[TaskResult]:
        sims = encoder.paired_similarity(data.left, data.right)
        r = compute("pearson", predictions=sims.astype(np.float64).tolist(), references=data.scores)["pearson"]
        return [self.result("pearson", r, len(data.scores), "Pearson r of similarity vs relatedness score")]
