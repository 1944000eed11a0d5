"""STS-B-Context (SLICE paper): is the paraphrase, hidden verbatim in a longer passage, found by span similarity?

For each of the 1,024 STS-B test pairs, the origin sentence (column ``line``) is compared with a generated passage
that contains the paraphrase verbatim; the model's best similarity is correlated (Pearson, Spearman) with the gold
0-5 score. Three ways to get the best similarity, each its own result entry:

(a) ``passage``: the whole passage encoded as one text;
(b) ``spans_single_pass``: every span of 1..20 whitespace-separated words of the passage, mean-pooled from the
    contextual token vectors of ONE forward pass of the passage (needs ``encode_tokens``); prefix sums make all
    spans cheap. The query is encoded normally (``encode``); a model whose ``encode`` space differs from its token
    space (e.g. PEARL's concatenated character vector) is compared with its mean-pooled query tokens instead;
(c) ``spans_per_span`` (opt-in, ``stsb_per_span``): every such span encoded on its own (~800k strings: slow).

The file is cp1252-encoded TSV; rows end with LF, one quoted passage holds CRLF line breaks, so it is read with the
csv module (``newline=""``), which keeps quoted line breaks inside the field.
"""

from __future__ import annotations

import csv
import re
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import pearsonr, spearmanr

from ..encoders import SIMILARITY, TOKENS, VECTORS, Encoder, l2_normalize
from ..results import TaskResult
from .base import Task, TaskContext, register_task

MAX_SPAN_WORDS = 20
WORD = re.compile(r"\S+")


@dataclass
class ContextSimilarityData:
    lines: list[str]
    passages: list[str]
    gold: list[float]


def read_stsb_context(path) -> ContextSimilarityData:
    with open(path, encoding="cp1252", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header = rows[0]
    i_line, i_passage, i_gold = header.index("line"), header.index("passage"), header.index("goldsim")
    body = [r for r in rows[1:] if len(r) == len(header)]
    return ContextSimilarityData(
        [r[i_line] for r in body], [r[i_passage] for r in body], [float(r[i_gold]) for r in body]
    )


def word_spans(text: str) -> np.ndarray:
    """``(n_words, 2)`` character spans of the whitespace-separated words of ``text``."""
    return np.asarray([m.span() for m in WORD.finditer(text)], dtype=np.int64).reshape(-1, 2)


def span_index(n_words: int, max_words: int = MAX_SPAN_WORDS) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) word indices of every span of 1..``max_words`` words."""
    starts, ends = [], []
    for length in range(1, min(max_words, n_words) + 1):
        s = np.arange(0, n_words - length + 1)
        starts.append(s)
        ends.append(s + length)
    if not starts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(starts), np.concatenate(ends)


def token_words(offsets: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Word index of each token (the word containing the token's first character), -1 if none."""
    if len(words) == 0 or len(offsets) == 0:
        return np.full(len(offsets), -1, dtype=np.int64)
    idx = np.searchsorted(words[:, 0], offsets[:, 0], side="right") - 1
    inside = (idx >= 0) & (offsets[:, 0] < words[np.clip(idx, 0, None), 1]) & (offsets[:, 1] > offsets[:, 0])
    return np.where(inside, idx, -1)


def pooled_spans(embeddings: np.ndarray, offsets: np.ndarray, text: str, max_words: int = MAX_SPAN_WORDS):
    """Mean-pooled token vectors of every span of 1..``max_words`` words, from one pass; returns (vectors, starts, ends).

    Spans whose words have no tokens (e.g. cut by truncation) are dropped.
    """
    words = word_spans(text)
    owner = token_words(offsets, words)
    keep = owner >= 0
    dim = embeddings.shape[1]
    sums = np.zeros((len(words), dim), dtype=np.float64)
    counts = np.zeros(len(words), dtype=np.float64)
    np.add.at(sums, owner[keep], embeddings[keep])
    np.add.at(counts, owner[keep], 1.0)
    prefix = np.vstack([np.zeros((1, dim)), np.cumsum(sums, axis=0)])
    prefix_n = np.concatenate([[0.0], np.cumsum(counts)])
    starts, ends = span_index(len(words), max_words)
    n_tokens = prefix_n[ends] - prefix_n[starts]
    valid = n_tokens > 0
    starts, ends, n_tokens = starts[valid], ends[valid], n_tokens[valid]
    vectors = (prefix[ends] - prefix[starts]) / n_tokens[:, None]
    return vectors.astype(np.float32), starts, ends


def span_texts(text: str, max_words: int = MAX_SPAN_WORDS) -> list[str]:
    """The text of every span of 1..``max_words`` whitespace-separated words (original spacing kept)."""
    words = word_spans(text)
    starts, ends = span_index(len(words), max_words)
    return [text[words[s, 0] : words[e - 1, 1]] for s, e in zip(starts, ends)]


def correlations(pred: np.ndarray, gold: list[float]) -> tuple[float, float]:
    pred = np.asarray(pred, dtype=np.float64)
    gold_arr = np.asarray(gold, dtype=np.float64)
    return float(pearsonr(pred, gold_arr).statistic), float(spearmanr(pred, gold_arr).statistic)


@register_task
class StsbContext(Task):
    name = "stsb_context"
    order = 10
    main_metric = "pearson_spans_single_pass"
    description = "STS-B-Context (SLICE): best similarity of the origin sentence to a passage / its word spans"
    requires = frozenset({SIMILARITY})
    groups = ("all",)

    def metrics(self) -> list[str]:
        return [f"{c}_{way}" for way in ("passage", "spans_single_pass") for c in ("pearson", "spearman")]

    def load_local(self, ctx: TaskContext) -> ContextSimilarityData:
        return read_stsb_context(ctx.path("stsb_context", "sts-test-sentences-clean.tsv"))

    def score(self, encoder: Encoder, data: ContextSimilarityData, ctx: TaskContext) -> list[TaskResult]:
        n = len(data.gold)
        results: list[TaskResult] = []

        started = time.perf_counter()
        r, rho = correlations(encoder.paired_similarity(data.lines, data.passages), data.gold)
        seconds = time.perf_counter() - started
        note = "whole passage encoded as one text"
        results += [
            self.result("pearson_passage", r, n, note, seconds=seconds),
            self.result("spearman_passage", rho, n, note, seconds=seconds),
        ]

        started = time.perf_counter()
        if TOKENS in encoder.capabilities and VECTORS in encoder.capabilities:
            best, how = self._single_pass(encoder, data)
            r, rho = correlations(best, data.gold)
            note = f"max over spans of 1..{MAX_SPAN_WORDS} words mean-pooled from one passage pass; query {how}"
        else:
            r = rho = None
            note = "skipped: encoder lacks encode_tokens (token vectors for span pooling)"
        seconds = time.perf_counter() - started
        results += [
            self.result("pearson_spans_single_pass", r, n, note, seconds=seconds),
            self.result("spearman_spans_single_pass", rho, n, note, seconds=seconds),
        ]

        if ctx.options.get("stsb_per_span"):
            started = time.perf_counter()
            best = self._per_span(encoder, data)
            r, rho = correlations(best, data.gold)
            note = f"max over spans of 1..{MAX_SPAN_WORDS} words, each encoded on its own (opt-in)"
            seconds = time.perf_counter() - started
            results += [
                self.result("pearson_spans_per_span", r, n, note, seconds=seconds),
                self.result("spearman_spans_per_span", rho, n, note, seconds=seconds),
            ]
        return results

    @staticmethod
    def _single_pass(encoder: Encoder, data: ContextSimilarityData) -> tuple[np.ndarray, str]:
        passage_tokens = encoder.encode_tokens(data.passages)
        queries = encoder.encode(data.lines)
        how = "encoded with encode()"
        if queries.shape[1] != passage_tokens[0]["embeddings"].shape[1]:  # encode() space != token space
            query_tokens = encoder.encode_tokens(data.lines)
            queries = l2_normalize(np.stack([t["embeddings"].mean(axis=0) for t in query_tokens]))
            how = "mean of its own token vectors (encode() space differs from token space)"
        best = np.empty(len(data.passages), dtype=np.float32)
        for i, (tokens, passage) in enumerate(zip(passage_tokens, data.passages)):
            vectors, _, _ = pooled_spans(tokens["embeddings"], tokens["offsets"], passage)
            best[i] = (l2_normalize(vectors) @ queries[i]).max() if len(vectors) else np.nan
        return best, how

    @staticmethod
    def _per_span(encoder: Encoder, data: ContextSimilarityData) -> np.ndarray:
        spans = [span_texts(p) for p in data.passages]
        left = [line for line, s in zip(data.lines, spans) for _ in s]
        right = [t for s in spans for t in s]
        if VECTORS in encoder.capabilities:
            encoder.encode(right)  # one sorted, batched call for all spans
        scores = encoder.paired_similarity(left, right)
        bounds = np.cumsum([0] + [len(s) for s in spans])
        return np.asarray([scores[a:b].max() for a, b in zip(bounds[:-1], bounds[1:])], dtype=np.float32)
