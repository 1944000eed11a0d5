"""SLICE's training task, declared for the assembler (:mod:`phrasezoo.zoo.assembly`): the triplets (train and
validation splits); no shared parts (the benchmark filter is part of the cached triplet build, :mod:`.data`).

Why not :class:`~phrasezoo.zoo.assembly.BenchmarkFilter`: SLICE's filter is always on (``data.filter_mode``, default
``strict``, not the optional ``data.benchmark_filter``) and runs inside the build, before the seeded shuffle and the
``max_triplets`` cap, so that the cap counts clean triplets; filtering after the build would keep other triplets in
another order (different weights).

The task itself (batches and loss) is in :mod:`.task`, which imports without the data builders' libraries.
"""

from __future__ import annotations

from typing import Any

from phrasezoo.zoo.assembly import Assembly, Context, assemble

from .data import SliceData, build_slice_data
from .task import SliceTask

COLUMNS = ("query", "positive", "negative")


def triplets(built: SliceData, split: str) -> list[tuple[str, str, str]]:
    """The ``(query, positive, negative)`` triplets of one split."""
    columns = built.split(split).select_columns(list(COLUMNS))[:]
    return list(zip(*(columns[c] for c in COLUMNS)))


def make_task(built: SliceData, context: Context, facts: dict[str, Any]) -> SliceTask:
    args = context.task_args()
    return SliceTask(
        context.model,
        triplets(built, "train"),
        triplets(built, "valid"),
        passage_loss=bool(args["passage_loss"]),
        valid_max_triplets=int(args["valid_max_triplets"]),
        valid_batch_size=int(args["valid_batch_size"]),
        facts=facts,
    )


ASSEMBLY = Assembly(
    method="slice",
    dataset=build_slice_data,
    task=make_task,
    facts=lambda built, context: {f"data: {k}": v for k, v in built.stats.items()},
)


def build_task(recipe, model, accelerator) -> SliceTask:
    """Build (or load) the triplets of ``recipe.data`` (main process first) and the task around them."""
    return assemble(ASSEMBLY, recipe, model, accelerator)
