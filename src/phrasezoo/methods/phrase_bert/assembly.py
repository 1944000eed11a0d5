"""Phrase-BERT's training task, declared for the assembler (:mod:`phrasezoo.zoo.assembly`): both triple sets, the
benchmark filter, the teacher over their phrases, the lexicon term.

The task itself (batches and loss) is in :mod:`.task`, which imports without the data builders' libraries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phrasezoo.data.benchmark_filter import remove_benchmark_items
from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.zoo.assembly import Assembly, BenchmarkFilter, Context, LexiconTerm, TeacherDistillation, assemble

from .data import build_phrase_bert_data
from .task import PhraseBertTask


@dataclass
class Triples:
    """Both training sets of a build, and the build's counts (what the assembler's parts work on)."""

    paraphrase: list[tuple[str, str, str]]
    context: list[tuple[str, str, str]]
    stats: dict[str, Any]


def build_triples(progress: bool = True, **data: Any) -> Triples:
    """:func:`phrasezoo.methods.phrase_bert.data.build_phrase_bert_data` as two triple lists."""
    built = build_phrase_bert_data(**data, progress=progress)
    return Triples(built.paraphrase_triples(), built.context_triples(), built.stats)


def drop_benchmark_triples(triples: Triples, blocklist, mode: str) -> tuple[Triples, dict[str, Any]]:
    """Both triple lists without the triples that touch a test-benchmark item in ``mode`` of
    :mod:`phrasezoo.data.benchmark_filter` (a paraphrase triple's three phrases and their pairs; a context triple's
    phrase and contexts, by equality and by containment of benchmark sentences), and how many went from each."""
    paraphrase, p_report = remove_benchmark_items(triples.paraphrase, blocklist=blocklist, mode=mode, log=False)
    context, c_report = remove_benchmark_items(triples.context, blocklist=blocklist, mode=mode, log=False)
    dropped = f"paraphrase {p_report.dropped} of {p_report.total}, context {c_report.dropped} of {c_report.total}"
    return Triples(paraphrase, context, triples.stats), {f"triples dropped by the benchmark filter ({mode})": dropped}


def triple_phrases(triples: Triples) -> set[str]:
    """The phrases of both sets (not the contexts): what the teacher embeds."""
    phrases = {t for triple in triples.paraphrase for t in triple} | {t[0] for t in triples.context}
    return {p for p in phrases if p.strip()}


def build_facts(triples: Triples, context: Context) -> dict[str, Any]:
    facts = {f"data: {k}": v for k, v in triples.stats.items()}
    facts["objectives"] = ", ".join(context.recipe.data.get("objectives", ("paraphrase", "context")))
    return facts


def make_task(triples: Triples, context: Context, facts: dict[str, Any]) -> PhraseBertTask:
    args = context.task_args()
    return PhraseBertTask(
        context.model, triples.paraphrase, triples.context, args["margin"], args["normalize"], context.terms, facts
    )


#: Phrase-BERT's training task, declared for the assembler: both triple sets, the benchmark filter, the teacher over
#: their phrases, the lexicon term.
ASSEMBLY = Assembly(
    method="phrase_bert",
    dataset=build_triples,
    task=make_task,
    facts=build_facts,
    parts=(BenchmarkFilter(drop_benchmark_triples), TeacherDistillation(triple_phrases), LexiconTerm()),
    data_defaults=lambda context: {"mask_token": context.model.mask_token},
)


def build_task(recipe, model: PhraseBertModel, accelerator) -> PhraseBertTask:
    """Build both training sets (cached; the main process first) and the task around them (:data:`ASSEMBLY`).

    ``recipe.data`` holds the arguments of :func:`phrasezoo.methods.phrase_bert.data.build_phrase_bert_data` and
    ``benchmark_filter``; the mask token defaults to the model tokenizer's. ``recipe.training.method_args``: see
    ``METHOD.args["task"]``.
    """
    return assemble(ASSEMBLY, recipe, model, accelerator)
