"""Extractive summarisation proxy for FACETS sentence models (Chang et al., AAAI 2021, Table 3, offline).

CNN/Daily Mail is not available offline, so the proxy is the embedded Wikipedia sample: the articles with a lead of
at least 60 words and a body of at least 400 words (:func:`summarization_articles`, 83 articles; a method trained on
the embedded corpus must leave them out). Reference = the lead section; candidates = the body's sentences
(spaCy's sentence splitter, at least 5 words); every method picks 3 sentences without using their order:

* ``our_c``: greedy maximisation of the paper's eq. 7, ``sum_{w in D} alpha/(alpha+p(w)) max_{s in R(S)} w.s``,
  where D are the body's word occurrences and R(S) the union of the unit facets of the chosen sentences;
* ``sent_emb``: the same objective with one vector per sentence (unit mean GloVe vector): the paper's "Sent Emb";
* ``w_emb``: the same objective with the chosen sentences' word vectors, gains divided by sentence length ("W Emb");
* ``random``: 3 random body sentences, mean over 10 seeds;
* ``lead3_body``: the first 3 body sentences (uses sentence order: a reference point, not a competitor).

The max over an empty summary counts as 0 (gains are positive coverage only). ROUGE-1/2 F1 from ``rouge-score``
(Porter stemming on, stop words kept, as the paper's pythonrouge setting), averaged over articles, with the mean
summary length in words and a 95% bootstrap interval (over articles) of ``our_c - sent_emb``.
"""

from __future__ import annotations

import numpy as np

from phrasezoo.data.corpus.text import split_paragraphs
from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.metrics import compute
from phrasezoo.evaluation.results import TaskResult
from phrasezoo.evaluation.tasks.base import TaskContext, register_task
from phrasezoo.methods.codebook.tasks.common import FacetsTask
from phrasezoo.methods.codebook.wiki_articles import summarization_articles

from .common import (
    ALPHA,
    bootstrap_indices,
    facets_model,
    interval,
    model_facets,
    sentence_splitter,
    text_words,
    unit,
    word_space,
)

METHODS = ("our_c", "sent_emb", "w_emb", "random", "lead3_body")
SUMMARY_SENTENCES = 3
MIN_SENTENCE_WORDS = 5
RANDOM_SEEDS = 10


def body_sentences(body: str) -> list[str]:
    """The body's prose sentences of at least :data:`MIN_SENTENCE_WORDS` words, in order (headings dropped)."""
    nlp = sentence_splitter()
    out = []
    for doc in nlp.pipe(list(split_paragraphs(body, max_chars=5_000)), batch_size=32):
        out += [s.text.strip() for s in doc.sents if len(s.text.split()) >= MIN_SENTENCE_WORDS]
    return out


def greedy_cover(
    doc_vectors: np.ndarray,
    doc_weights: np.ndarray,
    candidates: list[np.ndarray],
    n: int = SUMMARY_SENTENCES,
    length_normalise: list[int] | None = None,
) -> list[int]:
    """Greedy eq. 7: pick ``n`` candidates whose vector sets best cover the weighted document words.

    ``candidates[i]`` is the (m_i, d) set R contributed by sentence i; ``length_normalise`` divides each gain by the
    sentence's length (the paper's W Emb).
    """
    covered = np.zeros(len(doc_vectors), dtype=np.float64)
    best_of = [np.maximum(0.0, doc_vectors @ c.T).max(axis=1) if len(c) else covered * 0 for c in candidates]
    chosen: list[int] = []
    for _ in range(min(n, len(candidates))):
        gains = np.asarray([float(doc_weights @ (np.maximum(covered, b) - covered)) for b in best_of])
        if length_normalise is not None:
            gains = gains / np.maximum(1, np.asarray(length_normalise))
        gains[chosen] = -np.inf
        pick = int(np.argmax(gains))
        chosen.append(pick)
        covered = np.maximum(covered, best_of[pick])
    return chosen


@register_task
class FacetsSummarization(FacetsTask):
    name = "facets_summarization"
    order = 44
    main_metric = "rouge1:our_c"
    description = (
        "Wikipedia-lead summarisation proxy: 3 body sentences by eq. 7 (Our c) vs Sent/W Emb, random, ROUGE F1"
    )
    groups = ("facets_sentence",)
    needs_benchmarks_dir = False

    def metrics(self) -> list[str]:
        return [f"{m}:{method}" for method in METHODS for m in ("rouge1", "rouge2", "length")]

    def load_local(self, ctx: TaskContext) -> list[tuple[str, list[str]]]:
        articles = [(a.lead, body_sentences(a.body)) for a in summarization_articles()]
        return [(lead, sents) for lead, sents in articles if len(sents) > SUMMARY_SENTENCES]

    def score(self, encoder: Encoder, data: list[tuple[str, list[str]]], ctx: TaskContext) -> list[TaskResult]:
        model = facets_model(encoder)
        space = word_space()
        summaries: dict[str, list[list[str]]] = {m: [] for m in METHODS}  # per method, per article: its summaries
        rng = np.random.default_rng(ctx.seed)
        for _, sentences in data:
            words = [text_words(s, space) for s in sentences]
            doc_words = [w for ws in words for w in ws]
            doc_vectors = space.rows(doc_words)
            doc_weights = space.sif_weights(doc_words, ALPHA)
            facets = model_facets(model, sentences)
            picks = {
                "our_c": greedy_cover(doc_vectors, doc_weights, list(facets)),
                "sent_emb": greedy_cover(
                    doc_vectors, doc_weights, [unit(space.rows(ws).mean(axis=0, keepdims=True)) for ws in words]
                ),
                "w_emb": greedy_cover(
                    doc_vectors, doc_weights, [space.rows(ws) for ws in words], length_normalise=[len(w) for w in words]
                ),
                "lead3_body": list(range(SUMMARY_SENTENCES)),
            }
            for method, chosen in picks.items():
                summaries[method].append([" ".join(sentences[i] for i in sorted(chosen))])
            draws = [rng.choice(len(sentences), SUMMARY_SENTENCES, replace=False) for _ in range(RANDOM_SEEDS)]
            summaries["random"].append([" ".join(sentences[i] for i in sorted(chosen)) for chosen in draws])
        leads = [lead for lead, _ in data]
        scores = {method: self._scores(summaries[method], leads) for method in METHODS}
        n = len(data)
        resamples = bootstrap_indices(n, seed=ctx.seed)
        results = []
        for method in METHODS:
            for metric in ("rouge1", "rouge2", "length"):
                values = np.asarray(scores[method][metric])
                details = None
                if method == "our_c" and metric != "length":
                    diff = values - np.asarray(scores["sent_emb"][metric])
                    details = {
                        "minus_sent_emb": round(float(diff.mean()), 4),
                        "minus_sent_emb_ci95": interval(diff[resamples].mean(axis=1)),
                    }
                notes = f"{n} embedded-Wikipedia articles, lead = reference, 3 body sentences; rouge-score F1, stemming"
                value = scores[method]["mean"][metric]
                results.append(self.result(f"{metric}:{method}", value, n, notes, details=details))
        return results

    @staticmethod
    def _scores(summaries: list[list[str]], leads: list[str]) -> dict:
        """Per article, the ROUGE-1/2 F1 of its summaries against its lead (the ``rouge`` metric module; the mean
        over several summaries of an article) and their mean length in words; under ``mean`` their means over the
        articles (ROUGE's from the metric module)."""
        rouge = compute("rouge", predictions=summaries, references=leads, rouge_types=["rouge1", "rouge2"])
        lengths = [float(np.mean([float(len(text.split())) for text in texts])) for texts in summaries]
        means = {"rouge1": rouge["rouge1"], "rouge2": rouge["rouge2"], "length": float(np.mean(lengths))}
        return {"rouge1": rouge["per_item"]["rouge1"], "rouge2": rouge["per_item"]["rouge2"], "length": lengths,
                "mean": means}  # fmt: skip
