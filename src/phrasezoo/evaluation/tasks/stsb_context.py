"""STS-B-Context (SLICE paper): is the paraphrase, hidden verbatim in a longer passage, found by span similarity?

For each of the 1,024 STS-B test pairs, the origin sentence (column ``line``) is compared with a generated passage
that contains the paraphrase verbatim; the model's best similarity is correlated (Pearson, Spearman) with the gold
0-5 score. Three ways to get the best similarity, each its own result entry:

(a) ``passage``: the whole passage encoded as one text;
(b) ``spans_single_pass``: every span of 1..20 whitespace-separated words of the passage, mean-pooled from the
    contextual token vectors of ONE forward pass of the passage (needs ``encode_tokens``); prefix sums make all
    spans cheap. The query is encoded normally (``encode``); a model whose ``encode`` space differs from its token
    space (e.g. PEARL's concatenated character vector) is compared with its mean-pooled query tokens instead;
(c) ``spans_per_span`` (opt-in, ``stsb_per_span``): every such span encoded on its own (~800k strings: slow);
    ``stsb_per_span_sample: n`` runs it on a fixed random sample of n passages instead (seeded by the run's seed),
    with (a) and (b) on the same sample for comparison (metrics ending in ``_sample``).

Per-item scores of every setup are kept in the entries' ``details`` (``scores``), so that two models can be compared
with Williams' test (:mod:`phrasezoo.methods.slice.report.significance`). With (b), span localisation is reported too: word
IoU of the chosen span with the hidden paraphrase, and the chosen spans' lengths
(:mod:`phrasezoo.evaluation.tasks.span_localisation`).

The file is cp1252-encoded TSV; rows end with LF, one quoted passage holds CRLF line breaks, so it is read with the
csv module (``newline=""``), which keeps quoted line breaks inside the field.
"""

from __future__ import annotations

import csv
import re
import time
from dataclasses import dataclass

import numpy as np

from phrasezoo.encoders import SIMILARITY, TOKENS, VECTORS, Encoder, l2_normalize

from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task
from .span_localisation import localisation_metrics

MAX_SPAN_WORDS = 20
WORD = re.compile(r"\S+")
#: localisation metrics reported with the single-pass setup (``span_<name>``)
LOCALISATION = ("iou_mean", "iou_at_least_0.5", "exact", "chosen_words_median")


@dataclass
class ContextSimilarityData:
    lines: list[str]
    passages: list[str]
    gold: list[float]
    targets: list[str] | None = None  # the paraphrase hidden in each passage (column ``paraphrase``)

    def subset(self, rows) -> ContextSimilarityData:
        rows = list(rows)
        targets = None if self.targets is None else [self.targets[i] for i in rows]
        return ContextSimilarityData(
            [self.lines[i] for i in rows], [self.passages[i] for i in rows], [self.gold[i] for i in rows], targets
        )


def read_stsb_context(path) -> ContextSimilarityData:
    with open(path, encoding="cp1252", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header = rows[0]
    i_line, i_passage, i_gold = header.index("line"), header.index("passage"), header.index("goldsim")
    body = [r for r in rows[1:] if len(r) == len(header)]
    targets = [r[header.index("paraphrase")] for r in body] if "paraphrase" in header else None
    return ContextSimilarityData(
        [r[i_line] for r in body], [r[i_passage] for r in body], [float(r[i_gold]) for r in body], targets
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
    """Pearson and Spearman correlation of ``pred`` with ``gold`` (the ``pearson`` and ``spearman`` metric modules)."""
    pred = np.asarray(pred, dtype=np.float64).tolist()
    gold = [float(g) for g in gold]
    return (
        compute("pearson", predictions=pred, references=gold)["pearson"],
        compute("spearman", predictions=pred, references=gold)["spearman"],
    )


@register_task
class StsbContext(Task):
    name = "stsb_context"
    order = 10
    main_metric = "pearson_spans_single_pass"
    description = "STS-B-Context (SLICE): best similarity of the origin sentence to a passage / its word spans"
    requires = frozenset({SIMILARITY})
    groups = ("all",)
    columns = (("pearson_passage", "STS-B-Ctx passage r"), ("pearson_spans_single_pass", "STS-B-Ctx single-pass r"))
    model_index = (
        "sentence-similarity", "Phrase similarity in context", "stsb_context", None, "STS-B-Context (SLICE)",
    )  # fmt: skip

    def metrics(self) -> list[str]:
        return [f"{c}_{way}" for way in ("passage", "spans_single_pass") for c in ("pearson", "spearman")] + [
            f"span_{name}" for name in LOCALISATION
        ]

    def load_local(self, ctx: TaskContext) -> ContextSimilarityData:
        return read_stsb_context(ctx.path("stsb_context", "sts-test-sentences-clean.tsv"))

    def score(self, encoder: Encoder, data: ContextSimilarityData, ctx: TaskContext) -> list[TaskResult]:
        results = self._setups(encoder, data, "", per_span=bool(ctx.options.get("stsb_per_span")))
        sample = ctx.options.get("stsb_per_span_sample")
        if sample:
            rows = sorted(np.random.default_rng(ctx.seed).choice(len(data.gold), min(int(sample), len(data.gold)),
                                                                 replace=False).tolist())  # fmt: skip
            results += self._setups(encoder, data.subset(rows), "_sample", per_span=True, sample=(rows, ctx.seed))
        return results

    def _setups(
        self, encoder: Encoder, data: ContextSimilarityData, suffix: str, per_span: bool, sample=None
    ) -> list[TaskResult]:
        """(a), (b) (+ localisation on the full set) and optionally (c) on ``data``; metric names end in ``suffix``."""
        n = len(data.gold)
        where = "" if sample is None else f"; fixed sample of {n} passages (numpy seed {sample[1]})"
        results: list[TaskResult] = []

        started = time.perf_counter()
        scores = encoder.paired_similarity(data.lines, data.passages)
        results += self._pair("passage", suffix, scores, data, "whole passage encoded as one text" + where,
                              time.perf_counter() - started, sample)  # fmt: skip

        started = time.perf_counter()
        if TOKENS in encoder.capabilities and VECTORS in encoder.capabilities:
            best, how, chosen = self._single_pass(encoder, data)
            note = f"max over spans of 1..{MAX_SPAN_WORDS} words mean-pooled from one passage pass; query {how}"
            results += self._pair("spans_single_pass", suffix, best, data, note + where,
                                  time.perf_counter() - started, sample)  # fmt: skip
            if not suffix and data.targets is not None:
                found = localisation_metrics(data.passages, data.targets, chosen)
                note = (f"argmax span of the single-pass search vs the hidden paraphrase (word IoU; "
                        f"{found['n_located']} passages where it is found verbatim)")  # fmt: skip
                details = {k: found[k] for k in ("chosen_words_histogram", "gold_words_median", "n_located")}
                results += [
                    self.result(f"span_{name}", found[name], found["n_located"], note, details=details)
                    for name in LOCALISATION
                ]
        else:
            note = "skipped: encoder lacks encode_tokens (token vectors for span pooling)"
            results += self._pair("spans_single_pass", suffix, None, data, note, time.perf_counter() - started)

        if per_span:
            started = time.perf_counter()
            best = self._per_span(encoder, data)
            note = f"max over spans of 1..{MAX_SPAN_WORDS} words, each encoded on its own (opt-in)" + where
            results += self._pair("spans_per_span", suffix, best, data, note, time.perf_counter() - started, sample)
        return results

    def _pair(self, way, suffix, scores, data, note, seconds, sample=None) -> list[TaskResult]:
        """Pearson and Spearman entries of one setup; the Pearson entry keeps the per-item scores (for Williams)."""
        n = len(data.gold)
        if scores is None:
            return [self.result(f"{c}_{way}{suffix}", None, n, note, seconds=seconds) for c in ("pearson", "spearman")]
        r, rho = correlations(scores, data.gold)
        details = {"scores": [round(float(x), 6) for x in scores]}
        if sample is not None:
            details["rows"] = sample[0]
        return [
            self.result(f"pearson_{way}{suffix}", r, n, note, seconds=seconds, details=details),
            self.result(f"spearman_{way}{suffix}", rho, n, note, seconds=seconds),
        ]

    @staticmethod
    def _single_pass(encoder: Encoder, data: ContextSimilarityData) -> tuple[np.ndarray, str, list]:
        passage_tokens = encoder.encode_tokens(data.passages)
        queries = encoder.encode(data.lines)
        how = "encoded with encode()"
        if queries.shape[1] != passage_tokens[0]["embeddings"].shape[1]:  # encode() space != token space
            query_tokens = encoder.encode_tokens(data.lines)
            queries = l2_normalize(np.stack([t["embeddings"].mean(axis=0) for t in query_tokens]))
            how = "mean of its own token vectors (encode() space differs from token space)"
        best = np.empty(len(data.passages), dtype=np.float32)
        chosen: list[tuple[int, int] | None] = []
        for i, (tokens, passage) in enumerate(zip(passage_tokens, data.passages)):
            vectors, starts, ends = pooled_spans(tokens["embeddings"], tokens["offsets"], passage)
            if len(vectors):
                scores = l2_normalize(vectors) @ queries[i]
                top = int(np.argmax(scores))
                best[i] = scores[top]
                chosen.append((int(starts[top]), int(ends[top])))
            else:
                best[i] = np.nan
                chosen.append(None)
        return best, how, chosen

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
