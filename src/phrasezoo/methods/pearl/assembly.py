"""PEARL's training task, declared for the assembler (:mod:`phrasezoo.zoo.assembly`): the phrase table, the benchmark
filter, the alias rows, the teacher over the table's strings, the lexicon term, then the augmentation mix.

The task itself (batches and loss) is in :mod:`.task`, which imports without the data builders' libraries.
"""

from __future__ import annotations

from typing import Any

from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.zoo.assembly import Assembly, BenchmarkFilter, Context, LexiconTerm, TeacherDistillation, assemble

from .aliases.alias_sources import AliasRows
from .data import build_augmenter, build_pearl_dataset
from .decontaminate import drop_benchmark_rows
from .task import PearlTask
from .views import CharNoise, PositiveViews


def table_facts(dataset, context: Context) -> dict[str, Any]:
    """What the card says about the final table (after the filter and the alias rows)."""
    n = len(dataset)
    return {
        "corpus": context.recipe.data.get("corpus", "embedded"),
        "phrases with a paraphrase": f"{sum(bool(p) for p in dataset['paraphrases']) / n:.1%}",
        "phrases with a hard negative": f"{sum(bool(h) for h in dataset['hard_negatives']) / n:.1%}",
        "phrase types in use": len(set(dataset["type_id"]) - {-100}),
    }


def table_strings(dataset) -> set[str]:
    """Every string a batch can hold: the phrases, their paraphrases and hard negatives (the teacher embeds them)."""
    strings = set(dataset["phrase"])
    for column in ("paraphrases", "hard_negatives"):
        strings.update(s for row in dataset[column] for s in row if s.strip())
    return strings


def make_task(dataset, context: Context, facts: dict[str, Any]) -> PearlTask:
    """The task over the assembled table: the augmentation mix (its views guarded by the benchmark filter)."""
    data = context.recipe.data
    augmenter = build_augmenter(
        dataset,
        glove=data.get("glove", "glove-6b-50d"),
        mix=data.get("augmentation_mix"),
        use_wordnet=data.get("use_wordnet", True),
        synonym_options=data.get("synonym_options"),
    )
    guard = context.blocklist() if context.filter_mode else None  # views that touch a benchmark item: the anchor
    augment = PositiveViews.from_augmenter(augmenter, data.get("augmentation_mix"), guard, context.filter_mode)
    return PearlTask(
        context.model,
        dataset,
        augment=augment,
        word_noise=CharNoise(),
        **{k: v for k, v in context.task_args().items() if k != "type_head_refit"},  # a step after training
        terms=context.terms,
        facts=facts,
    )


#: PEARL's training task, declared for the assembler: the phrase table, the benchmark filter, the alias rows, the
#: teacher over the table's strings, the lexicon term.
ASSEMBLY = Assembly(
    method="pearl",
    dataset=build_pearl_dataset,
    task=make_task,
    facts=table_facts,
    parts=(BenchmarkFilter(drop_benchmark_rows), AliasRows(), TeacherDistillation(table_strings), LexiconTerm()),
    data_keys=("augmentation_mix",),
)


def build_task(recipe, model: PearlModel, accelerator) -> PearlTask:
    """Build the PEARL phrase table (cached; the main process first) and the task around it (:data:`ASSEMBLY`).

    ``recipe.data`` holds the arguments of :func:`phrasezoo.methods.pearl.data.build_pearl_dataset` plus
    ``augmentation_mix``, ``alias_pairs`` and ``benchmark_filter``; ``recipe.training.method_args`` the task
    arguments of ``METHOD.args["task"]``.
    """
    return assemble(ASSEMBLY, recipe, model, accelerator)
