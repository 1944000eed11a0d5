"""Phrase similarity for FACETS phrase models (Chang et al., AAAI 2021, Table 4: Turney and BiRD columns).

Three scorers per benchmark, in one run:

* ``glove_avg``: cosine of the mean unit GloVe vectors of the two texts' words (the paper's "GloVe Avg");
* ``emb``: cosine of the model's ``encode`` vectors (mean of the contextual encoder states, "Ours Emb");
* ``sc``: the model's SC score (negated symmetric NNSC reconstruction error of the unit facet sets, eq. 5).

Turney(5): the query bigram against its answer and 4 distractors (component words dropped, all 2,180 queries, not
the paper's split). Turney(10): the paper's harder variant, 10 (bigram, unigram) pairs per query: the 5 above plus
the *reversed* bigram paired with the same 5 unigrams; the right pair is (bigram, answer). A bag-of-words scorer
ties the two orders, so it cannot beat half of its Turney(5) accuracy. Exact ties are split (expected accuracy of
a random tie-break). BiRD: Pearson r of the score with human relatedness over its 3,345 pairs.
"""

from __future__ import annotations

import numpy as np

from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.metrics import compute
from phrasezoo.evaluation.results import TaskResult
from phrasezoo.evaluation.tasks.base import TaskContext, register_task
from phrasezoo.evaluation.tasks.similarity import MultipleChoiceData, PairScoreData, read_bird, read_turney
from phrasezoo.methods.codebook.tasks.common import FacetsTask

from .common import facets_model, model_emb, model_sc, pearson, text_words, unit, word_space

PHRASE_SCORERS = ("glove_avg", "emb", "sc")


def glove_average(texts: list[str]) -> np.ndarray:
    """Unit mean of unit GloVe vectors per text (zeros when no word has a vector)."""
    space = word_space()
    out = np.zeros((len(texts), space.vectors.shape[1]), dtype=np.float32)
    for i, text in enumerate(texts):
        words = text_words(text, space)
        if words:
            out[i] = space.rows(words).mean(axis=0)
    return unit(out)


def pair_scores(model, scorer: str, left: list[str], right: list[str]) -> np.ndarray:
    """Similarity of each (left[i], right[i]) under ``scorer``; each distinct text is encoded once."""
    if scorer == "sc":
        return model_sc(model, left, right)
    texts = list(dict.fromkeys(left + right))
    vectors = glove_average(texts) if scorer == "glove_avg" else model_emb(model, texts)
    row = {t: i for i, t in enumerate(texts)}
    return np.einsum("ij,ij->i", vectors[[row[t] for t in left]], vectors[[row[t] for t in right]])


def split_tie_accuracy(scores: np.ndarray) -> float:
    """Accuracy when column 0 is right, ties at the top (within 1e-6, in float32) split: 1/k for a k-way tie."""
    result = compute("tie_split_accuracy", predictions=np.asarray(scores, dtype=np.float32).tolist(),
                     references=[0] * len(scores), tolerance=1e-6, dtype="float32")  # fmt: skip
    return result["accuracy"]


def turney_candidates(data: MultipleChoiceData, reversed_too: bool) -> tuple[list[str], list[str], int]:
    """Flattened (query, candidate) pairs, right pair first per query; with ``reversed_too`` the reversed query
    paired with the same candidates follows."""
    left, right = [], []
    k = len(data.candidates[0])
    for query, candidates in zip(data.queries, data.candidates):
        left += [query] * k
        right += list(candidates)
        if reversed_too:
            left += [" ".join(reversed(query.split()))] * k
            right += list(candidates)
    return left, right, k * (2 if reversed_too else 1)


class _FacetsPhraseTask(FacetsTask):
    groups = ("facets_phrase",)


@register_task
class FacetsTurney(_FacetsPhraseTask):
    name = "facets_turney"
    order = 41
    main_metric = "turney5:emb"
    description = "Turney(5)/(10) for a FACETS model: GloVe Avg vs Ours Emb vs SC (all 2,180 queries)"

    def metrics(self) -> list[str]:
        return [f"turney{n}:{s}" for n in (5, 10) for s in PHRASE_SCORERS]

    def load_local(self, ctx: TaskContext) -> MultipleChoiceData:
        return read_turney(ctx.path("turney", "turney.txt"))

    def score(self, encoder: Encoder, data: MultipleChoiceData, ctx: TaskContext) -> list[TaskResult]:
        model = facets_model(encoder)
        results = []
        for n, reversed_too in ((5, False), (10, True)):
            left, right, width = turney_candidates(data, reversed_too)
            for scorer in PHRASE_SCORERS:
                scores = pair_scores(model, scorer, left, right).reshape(len(data.queries), width)
                notes = f"Turney({n}): {width} candidate pairs per query, exact ties split; {scorer}"
                results.append(self.result(f"turney{n}:{scorer}", split_tie_accuracy(scores), len(data.queries), notes))
        return results


@register_task
class FacetsBird(_FacetsPhraseTask):
    name = "facets_bird"
    order = 42
    main_metric = "pearson:emb"
    description = "BiRD for a FACETS model: Pearson r of GloVe Avg / Ours Emb / SC with relatedness"

    def metrics(self) -> list[str]:
        return [f"pearson:{s}" for s in PHRASE_SCORERS]

    def load_local(self, ctx: TaskContext) -> PairScoreData:
        return read_bird(ctx.path("bird", "bird.tsv"))

    def score(self, encoder: Encoder, data: PairScoreData, ctx: TaskContext) -> list[TaskResult]:
        model = facets_model(encoder)
        gold = np.asarray(data.scores, dtype=np.float64)
        results = []
        for scorer in PHRASE_SCORERS:
            r = pearson(pair_scores(model, scorer, data.left, data.right), gold)
            results.append(self.result(f"pearson:{scorer}", r, len(gold), f"BiRD, {len(gold)} pairs; {scorer}"))
        return results
