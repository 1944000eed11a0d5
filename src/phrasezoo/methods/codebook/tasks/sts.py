"""Sentence similarity on the STS-B pairs inside the STS-B-Context file (the paper's Table 2, as a proxy).

Data: the ``line`` (query) and ``paraphrase`` (the sentence hidden in the passage) columns and the gold 0..5 score
of the 1,024 STS-B test pairs in ``stsb_context/sts-test-sentences-clean.tsv``. This is a **subset** of STS-B test,
called "STS-B subset (STS-B-Context pairs)" everywhere, never "STS-B test". ``low`` = the pairs whose gold score is
below the median (the paper's "Low" half), ``all`` = every pair. Pearson r.

Scorers (all over the same words and unit GloVe vectors, see :mod:`.common`):

* ``avg``: mean word vector; ``prob_avg``: weights ``alpha / (alpha + p(w))``, alpha = 1e-4, p(w) from wordfreq;
  ``sif``: prob_avg minus its first principal component, estimated on 2,000 training-corpus sentences (not on the
  test sentences: the paper's "training distribution" rows, non-transductive);
* each with weighting ``none``, ``ours`` (eq. 6: ``a_q = sum_k max(0, cos(w_q, f_k))`` from the model's facets,
  multiplied into the word weights) and ``centroid`` (the control that learns nothing: ``a_q = max(0, cos(w_q,
  e))`` where ``e`` is the same sentence's own un-reweighted embedding);
* ``sc``: the model's SC score (negated symmetric NNSC reconstruction error of the two unit facet sets, eq. 5).

95% bootstrap intervals (1,000 paired resamples of the pairs) are stored per row, with the intervals of the
differences ours - none and ours - centroid.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass

import numpy as np

from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.results import TaskResult
from phrasezoo.evaluation.tasks.base import TaskContext, register_task
from phrasezoo.methods.codebook.tasks.common import FacetsTask
from phrasezoo.resources import iter_corpus

from .common import (
    ALPHA,
    bootstrap_indices,
    bootstrap_pearson,
    facet_importance,
    facets_model,
    interval,
    model_facets,
    model_sc,
    pearson,
    remove_first_pc,
    sentence_splitter,
    text_words,
    unit,
    weighted_mean,
    word_space,
)

SCORERS = ("avg", "prob_avg", "sif")
WEIGHTINGS = ("none", "ours", "centroid")
SIF_REFERENCE_SENTENCES = 2000
DATA_NAME = "STS-B subset (STS-B-Context pairs)"


@dataclass
class StsPairs:
    left: list[str]
    right: list[str]
    gold: np.ndarray


def read_stsb_pairs(path) -> StsPairs:
    """The query, the hidden paraphrase and the gold score of each row (cp1252 TSV, quoted fields)."""
    with open(path, encoding="cp1252", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header = rows[0]
    i_line, i_para, i_gold = header.index("line"), header.index("paraphrase"), header.index("goldsim")
    body = [r for r in rows[1:] if len(r) == len(header)]
    return StsPairs([r[i_line] for r in body], [r[i_para] for r in body], np.asarray([float(r[i_gold]) for r in body]))


def low_half(gold: np.ndarray) -> np.ndarray:
    """Mask of the pairs whose gold score is below the median (the paper's Low)."""
    return gold < np.median(gold)


def reference_sentences(n: int = SIF_REFERENCE_SENTENCES, seed: int = 0) -> list[str]:
    """``n`` sentences (3..50 words, seeded sample) of the embedded news corpus for SIF's principal component."""
    nlp = sentence_splitter()
    texts = [s.text.strip() for doc in nlp.pipe(iter_corpus("embedded-news"), batch_size=32) for s in doc.sents]
    texts = [t for t in texts if 3 <= len(t.split()) <= 50]
    return random.Random(seed).sample(texts, min(n, len(texts)))


def sentence_embeddings(texts: list[str], scorer: str, weighting: str, facets: np.ndarray | None) -> np.ndarray:
    """One vector per text for a scorer (avg / prob_avg / sif before PC removal) and a weighting."""
    space = word_space()
    dim = space.vectors.shape[1]
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        words = text_words(text, space)
        if not words:
            continue
        vectors = space.rows(words)
        base = np.ones(len(words)) if scorer == "avg" else space.sif_weights(words, ALPHA)
        if weighting == "ours":
            base = base * facet_importance(vectors, facets[i])
        elif weighting == "centroid":
            own = weighted_mean(vectors, base)
            base = base * np.maximum(0.0, vectors @ unit(own))
        out[i] = weighted_mean(vectors, base)
    return out


@register_task
class FacetsStsSubset(FacetsTask):
    name = "facets_stsb_subset"
    order = 40
    main_metric = "pearson_all:prob_avg:ours"
    description = f"{DATA_NAME}: Avg/Prob_avg/SIF with and without the learned weights (eq. 6), centroid control, SC"
    groups = ("facets_sentence",)

    def metrics(self) -> list[str]:
        rows = [f"{s}:{w}" for s in SCORERS for w in WEIGHTINGS] + ["sc"]
        return [f"pearson_{half}:{row}" for row in rows for half in ("all", "low")]

    def load_local(self, ctx: TaskContext) -> StsPairs:
        return read_stsb_pairs(ctx.path("stsb_context", "sts-test-sentences-clean.tsv"))

    def score(self, encoder: Encoder, data: StsPairs, ctx: TaskContext) -> list[TaskResult]:
        model = facets_model(encoder)
        reference = reference_sentences(seed=ctx.seed)
        texts = list(dict.fromkeys(data.left + data.right))
        facets = dict(zip(texts, model_facets(model, texts)))
        ref_facets = model_facets(model, reference)
        left_f = np.stack([facets[t] for t in data.left])
        right_f = np.stack([facets[t] for t in data.right])
        masks = {"all": np.ones(len(data.gold), dtype=bool), "low": low_half(data.gold)}
        resamples = {half: bootstrap_indices(int(m.sum()), seed=ctx.seed) for half, m in masks.items()}
        predictions: dict[str, np.ndarray] = {}
        for scorer in SCORERS:
            base = "avg" if scorer == "avg" else "prob_avg"
            for weighting in WEIGHTINGS:
                left = sentence_embeddings(data.left, base, weighting, left_f)
                right = sentence_embeddings(data.right, base, weighting, right_f)
                if scorer == "sif":
                    ref = sentence_embeddings(reference, base, weighting, ref_facets)
                    left, right = remove_first_pc(left, ref), remove_first_pc(right, ref)
                predictions[f"{scorer}:{weighting}"] = np.einsum("ij,ij->i", unit(left), unit(right))
        predictions["sc"] = model_sc(model, data.left, data.right)
        results = []
        for row, pred in predictions.items():
            for half, mask in masks.items():
                gold, p = data.gold[mask], pred[mask]
                samples = bootstrap_pearson(p, gold, resamples[half])
                details = {"ci95": interval(samples)}
                scorer, _, weighting = row.partition(":")
                if weighting == "ours":
                    for other in ("none", "centroid"):
                        diff = samples - bootstrap_pearson(
                            predictions[f"{scorer}:{other}"][mask], gold, resamples[half]
                        )
                        details[f"minus_{other}_ci95"] = interval(diff)
                notes = f"{DATA_NAME}, {half} ({mask.sum()} pairs); p(w): wordfreq; SIF PC: {len(reference)} embedded news sentences"
                results.append(
                    self.result(f"pearson_{half}:{row}", pearson(p, gold), int(mask.sum()), notes, details=details)
                )
        return results
