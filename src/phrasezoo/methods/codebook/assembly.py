"""The codebook model's training task, declared for the assembler (:mod:`phrasezoo.zoo.assembly`): the examples, built
once per process (the model's vocabulary comes from them too); no shared parts (the benchmark guard is part of the
example build, :mod:`.data`).

Why not :class:`~phrasezoo.zoo.assembly.BenchmarkFilter`: the codebook's guard is always on (``multiword`` mode plus the
reversed Turney bigrams, not the optional ``data.benchmark_filter``) and judges each example as it is made, its
drops counted with the build's other reasons in one tally of the card's facts; and the held-out reconstruction
evaluation (:func:`.data.heldout_examples`) reads the build without the assembler. Moving it would change the facts
(and their order) and the evaluation's examples.

The task itself (batches and loss) is in :mod:`.task`, which imports without the data builders' libraries.
"""

from __future__ import annotations

from typing import Any

from phrasezoo.core.progress import progress_enabled
from phrasezoo.zoo.assembly import Assembly, assemble, build_dataset

from .build import build_model
from .data import CodebookData, build_codebook_data
from .task import CodebookTask


def build_data(progress: bool = True, **data: Any) -> CodebookData:
    """:func:`~.data.build_codebook_data` with progress bars unless the environment switches them off."""
    return build_codebook_data(**data, progress=progress_enabled(progress))


#: The codebook's training task, declared for the assembler: the examples (built once per process: the model's
#: vocabulary comes from them too), no shared parts (the benchmark guard is part of the example build).
ASSEMBLY = Assembly(
    method="codebook",
    dataset=build_data,
    task=lambda data, context, facts: CodebookTask(context.model, data.split("train"), facts=facts),
    facts=lambda data, context: {
        **{f"data: {k}": v for k, v in data.stats.items()},
        "word vectors": context.recipe.data.get("word_vectors", "glove-6b-50d"),
    },
    shared=True,
)


def recipe_data(recipe, accelerator=None) -> CodebookData:
    """The recipe's :class:`~.data.CodebookData` (built once per process; the main process first)."""
    return build_dataset(ASSEMBLY, recipe, accelerator)


def from_config(recipe, accelerator=None):
    """A fresh model for ``recipe``: the vocabulary of its training data, vectors of ``data.word_vectors``."""
    data = recipe_data(recipe, accelerator)
    return build_model(
        data.vocabulary,
        recipe.data.get("word_vectors", "glove-6b-50d"),
        recipe.data.get("kind", "sentence"),
        seed=recipe.training.seed,
        **recipe.model,
    )


def build_task(recipe, model, accelerator=None) -> CodebookTask:
    """The NNSC training task over the recipe's training split (``training.method_args`` takes no keys)."""
    return assemble(ASSEMBLY, recipe, model, accelerator)
