"""Span localisation on STS-B-Context: does the best-scoring span sit where the hidden paraphrase is?

Each STS-B-Context passage contains its paraphrase verbatim (up to case and a final period), so the paraphrase's
word range in the passage is known. For the span that a model's single-pass search picks, we report the word IoU
with that range, how often IoU >= 0.5, exact matches, and the distribution of the chosen spans' lengths (the base
model's preference for very short spans is what SLICE's loss is meant to fix). Words are whitespace-separated, as
in the span search of :mod:`phrasezoo.evaluation.tasks.stsb_context`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..metrics import compute

WORD = re.compile(r"\S+")


def locate_words(passage: str, target: str) -> tuple[int, int] | None:
    """Word range ``[start, end)`` of ``target`` in ``passage`` (case-insensitive, trailing period/space ignored).

    Words partly covered by the match count as inside. ``None`` when the target does not occur.
    """
    needle = target.strip().rstrip(".").strip().lower()
    if not needle:
        return None
    at = passage.lower().find(needle)
    if at < 0:
        return None
    end = at + len(needle)
    words = [m.span() for m in WORD.finditer(passage)]
    inside = [i for i, (a, b) in enumerate(words) if a < end and b > at]
    return (inside[0], inside[-1] + 1) if inside else None


def localisation_metrics(
    passages: Sequence[str], targets: Sequence[str], chosen: Sequence[tuple[int, int] | None]
) -> dict[str, object]:
    """IoU statistics of the chosen spans against the located targets (the ``span_iou`` metric module), and the
    chosen-length histogram.

    Returns ``{"iou_mean", "iou_at_least_0.5", "exact", "n_located", "chosen_words_median", "gold_words_median",
    "chosen_words_histogram"}``; IoU figures are over passages whose target was located and that have a chosen span.
    """
    if not len(passages) == len(targets) == len(chosen):
        raise ValueError("passages, targets and chosen spans must be aligned.")
    chosen_spans, gold_spans, gold_lengths, lengths = [], [], [], []
    for passage, target, span in zip(passages, targets, chosen):
        if span is None or span[1] <= span[0]:
            continue
        lengths.append(span[1] - span[0])
        gold = locate_words(passage, target)
        if gold is None:
            continue
        gold_lengths.append(gold[1] - gold[0])
        chosen_spans.append([int(span[0]), int(span[1])])
        gold_spans.append(list(gold))
    iou = {"iou_mean": None, "iou_at_least_0.5": None, "exact": None}
    if gold_spans:
        iou = compute("span_iou", predictions=chosen_spans, references=gold_spans)
    histogram = Counter(lengths)
    return {
        **{key: iou[key] for key in ("iou_mean", "iou_at_least_0.5", "exact")},
        "n_located": len(gold_spans),
        "chosen_words_median": float(np.median(lengths)) if lengths else None,
        "gold_words_median": float(np.median(gold_lengths)) if gold_lengths else None,
        "chosen_words_histogram": {str(k): histogram[k] for k in sorted(histogram)},
    }
