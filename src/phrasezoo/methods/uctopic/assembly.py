"""UCTopic's training task, declared for the assembler (:mod:`phrasezoo.zoo.assembly`): the mention dataset, the
benchmark filter, the lexicon term.

The task itself (batches and loss) is in :mod:`.task`, which imports without the data builders' libraries.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from phrasezoo.data.benchmark_filter import remove_benchmark_items
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.zoo.assembly import Assembly, BenchmarkFilter, Context, LexiconTerm, assemble

from .data import build_uctopic_dataset
from .task import UCTopicTask


def drop_benchmark_instances(dataset, blocklist, mode: str):
    """The mention instances whose mention and sentence touch no test-benchmark item in ``mode`` of
    :mod:`phrasezoo.data.benchmark_filter` (a mention equal to a benchmark string; a sentence that contains a
    benchmark sentence), and the card's fact (``"<dropped> of <total>"``)."""
    items = [
        (sentence[int(start) : int(end)], sentence)
        for sentence, start, end in zip(dataset["sentence"], dataset["start"], dataset["end"], strict=True)
    ]
    keep, report = remove_benchmark_items(
        range(len(items)), key=lambda i: items[i], blocklist=blocklist, mode=mode, log=False
    )
    facts = {f"instances dropped by the benchmark filter ({mode})": f"{report.dropped} of {report.total}"}
    return dataset.select(keep), facts


def mention_facts(dataset, context: Context) -> dict[str, Any]:
    """The corpus and where the (filtered) mentions come from."""
    sources = Counter(dataset["source"])
    return {
        "corpus": context.recipe.data.get("corpus", "embedded"),
        "phrase sources (mentions)": ", ".join(f"{k}: {v}" for k, v in sorted(sources.items())),
    }


#: UCTopic's training task, declared for the assembler: the mention dataset, the benchmark filter, the lexicon term.
ASSEMBLY = Assembly(
    method="uctopic",
    dataset=build_uctopic_dataset,
    task=lambda dataset, context, facts: UCTopicTask(
        context.model, dataset, **context.task_args(), terms=context.terms, facts=facts
    ),
    facts=mention_facts,
    parts=(BenchmarkFilter(drop_benchmark_instances), LexiconTerm()),
)


def build_task(recipe, model: UCTopicModel, accelerator) -> UCTopicTask:
    """Build the mention dataset (cached; the main process first) and the task around it (:data:`ASSEMBLY`).

    ``recipe.data`` holds the arguments of :func:`phrasezoo.methods.uctopic.data.build_uctopic_dataset` and
    ``benchmark_filter``; ``recipe.training.method_args`` those of :class:`UCTopicTask` (temperature,
    keep_mention_probability, mlm_weight, mlm_probability, max_seq_length) and of the lexicon term.
    """
    return assemble(ASSEMBLY, recipe, model, accelerator)
