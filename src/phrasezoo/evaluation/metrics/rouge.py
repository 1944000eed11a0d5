"""ROUGE-N F1 of candidate summaries against a reference (``rouge-score``, Porter stemming on, stop words kept, as
the paper's pythonrouge setting): per reference the mean F1 over its candidates (several when summaries are drawn
at random), then the mean over references. The codebook's extractive-summarization task scores through it.

A local script rather than ``evaluate``'s Hub ``rouge`` (which needs a network to load, and aggregates by
bootstrap). Loaded by path (``phrasezoo.evaluation.metrics.load_metric("rouge")``), never from the Hub.
"""

import numpy as np
from rouge_score import rouge_scorer

from .metric_base import SuiteMetric, columns


class Rouge(SuiteMetric):
    INPUTS = """
Args:
    predictions: per reference, its candidate summaries (one or more strings).
    references: the reference texts.
    rouge_types: the ROUGE variants (default ("rouge1", "rouge2")).
    use_stemmer: Porter stemming (default True).
Returns:
    <type>: per ROUGE type, the mean over references of the mean F1 of their candidates;
    per_item: {<type>: [that per-reference F1, ...]}, in the references' order.
"""
    COLUMNS = (columns(predictions="string[]", references="string"),)

    def _compute(self, predictions, references, rouge_types=("rouge1", "rouge2"), use_stemmer=True) -> dict:
        scorer = rouge_scorer.RougeScorer(list(rouge_types), use_stemmer=use_stemmer)
        per_item: dict[str, list[float]] = {kind: [] for kind in rouge_types}
        for candidates, reference in zip(predictions, references, strict=True):
            scores = [scorer.score(reference, candidate) for candidate in candidates]
            for kind in rouge_types:
                values = [score[kind].fmeasure for score in scores]
                per_item[kind].append(values[0] if len(values) == 1 else float(np.mean(values)))
        result: dict = {kind: float(np.asarray(per_item[kind]).mean()) for kind in rouge_types}
        result["per_item"] = per_item
        return result
