"""The paper's Table 1 for our models: each facet of a few texts shown by its nearest target-vocabulary words.

Qualitative; the results entry carries the words in ``details`` (text -> one list of ``[word, cosine]`` per facet)
and, as its value, the mean cosine of each facet's nearest word (how close facets sit to real words). The README's
facets section prints the words from the results file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.results import TaskResult
from phrasezoo.evaluation.tasks.base import TaskContext, register_task
from phrasezoo.methods.codebook.tasks.common import FacetsTask

from .common import facets_model

#: The paper's Table 1 / Figure 3 texts plus two phrases of its Figure 1 and Table 4 discussion.
FACET_TEXTS = (
    "civil order",
    "real property",
    "hot dog",
    "SMS messages are used in some countries as reminders of hospital appointments .",
    "A man is lifting weights in a garage .",
    "A man is lifting weights .",
)
TOP_WORDS = 3


def facet_word_table(model: Any, texts: list[str], top_n: int = TOP_WORDS) -> dict[str, list[list[list[Any]]]]:
    """``{text: [[[word, cosine], ...] per facet]}`` from the model's ``facet_words``."""
    table = {}
    for text, facets in zip(texts, model.facet_words(texts, top_n=top_n)):
        table[text] = [[[str(w), round(float(c), 3)] for w, c in facet] for facet in facets]
    return table


@register_task
class FacetsFacetWords(FacetsTask):
    name = "facets_facet_words"
    order = 45
    main_metric = "mean_top1_cosine"
    description = "Table 1-style facets: nearest vocabulary words of each facet for a few phrases and sentences"
    groups = ("facets_sentence", "facets_phrase")
    needs_benchmarks_dir = False

    def load_local(self, ctx: TaskContext) -> list[str]:
        return list(ctx.options.get("facet_texts") or FACET_TEXTS)

    def score(self, encoder: Encoder, data: list[str], ctx: TaskContext) -> list[TaskResult]:
        table = facet_word_table(facets_model(encoder), data)
        top1 = [facet[0][1] for facets in table.values() for facet in facets if facet]
        notes = f"top {TOP_WORDS} words per facet in details; value = mean cosine of each facet's nearest word"
        return [self.result("mean_top1_cosine", float(np.mean(top1)), len(data), notes, details={"facets": table})]
