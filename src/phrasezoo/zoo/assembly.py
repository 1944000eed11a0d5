"""The training-task assembler: one way to build any method's training task from a recipe (issue 45).

A method declares an :class:`Assembly`: its dataset builder (called with the recipe's ``data:``), the facts it
reports about its data, the parts it accepts and its task factory. :func:`assemble` then does, for every method:

1. the dataset build, once, with the main process first (the builders cache on disk; the other processes read it);
2. the parts, in the fixed order of their :class:`Stage`, each through ``apply(dataset, recipe, context) ->
   (dataset, facts)``: the benchmark filter drops items, a method's own parts add some (PEARL's alias rows), the
   teacher embeds the final strings, the lexicon term is built last;
3. the task, from the factory, with the merged facts (the method's data facts first, then each part's) and the
   teacher's terms (:class:`~phrasezoo.objectives.terms.TeacherTerms`) in the context.

The shared parts are :class:`BenchmarkFilter`, :class:`TeacherDistillation` and :class:`LexiconTerm`; what each
needs to know about a method's data (which items to drop, which strings the teacher embeds) the method passes in
when it declares the part. Adding a shared part is a class here and one line in each method that takes it
(CONTRIBUTING.md, "Adding a shared training part").

It stands beside the registry, below the methods that declare an assembly and above the shared pieces it applies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Protocol

from phrasezoo.data import benchmark_filter
from phrasezoo.objectives import lexicon_distillation
from phrasezoo.objectives import teacher as teachers
from phrasezoo.objectives.terms import TERM_ARGS, TeacherTerms
from phrasezoo.zoo.registry import get_method, resolve_args, validate_args


class Stage(IntEnum):
    """When a part runs: parts run in stage order (declaration order within a stage)."""

    FILTER = 10  # drops training items (the benchmark filter)
    EXTEND = 20  # adds training items (a method's own rows, e.g. PEARL's alias rows)
    READ = 30  # reads the final items (the teacher embeds every string a batch can hold)
    EXTRA = 40  # builds a term of its own, independent of the items (the lexicon term)


@dataclass
class Context:
    """What the parts and the task factory share while one task is assembled."""

    recipe: Any
    model: Any
    accelerator: Any
    args: dict[str, Any]  # ``training.method_args``, checked and completed with the method's defaults
    terms: TeacherTerms = field(default_factory=TeacherTerms)
    _blocklist: Any = None

    @property
    def progress(self) -> bool:
        return self.accelerator is None or bool(self.accelerator.is_main_process)

    @property
    def filter_mode(self) -> str | None:
        """The recipe's ``data.benchmark_filter`` mode (``None``: off)."""
        return self.recipe.data.get("benchmark_filter")

    def main_process_first(self):
        """The accelerator's main-process-first block (a plain block without one)."""
        return self.accelerator.main_process_first() if self.accelerator is not None else nullcontext()

    def blocklist(self):
        """The test-benchmark blocklist (:mod:`phrasezoo.data.benchmark_filter`), loaded once per assembly."""
        if self._blocklist is None:
            self._blocklist = benchmark_filter.load_blocklist()
        return self._blocklist

    def task_args(self) -> dict[str, Any]:
        """``args`` without the keys the teacher's terms read (:data:`~phrasezoo.objectives.terms.TERM_ARGS`)."""
        return {k: v for k, v in self.args.items() if k not in TERM_ARGS}


class Part(Protocol):
    """A training part the assembler applies: it may change the dataset and reports facts for the model card."""

    stage: Stage
    data_keys: tuple[str, ...]  # recipe ``data:`` keys it reads, kept from the dataset builder

    def apply(self, dataset: Any, recipe: Any, context: Context) -> tuple[Any, dict[str, Any]]: ...


@dataclass(frozen=True)
class Assembly:
    """A method's training task, declared: see the module docstring.

    Attributes:
        method: the registry name (its ``task`` argument schema checks ``training.method_args``).
        dataset: ``(**data, progress=...) -> dataset``, called with the recipe's ``data:`` minus ``data_keys`` and
            the parts' keys, plus ``data_defaults``.
        task: ``(dataset, context, facts) -> task``.
        facts: ``(dataset, context) -> facts`` about the final data, first in the card's list.
        parts: the parts the method accepts (run in :class:`Stage` order).
        data_keys: more ``data:`` keys the builder does not take (the task factory reads them).
        data_defaults: ``context -> defaults`` of ``data:`` keys (e.g. the model tokenizer's mask token).
        shared: build the dataset once per process and data section (for a method whose model is built from its
            data, so that the model and the task read one build).
    """

    method: str
    dataset: Callable[..., Any]
    task: Callable[[Any, Context, dict[str, Any]], Any]
    facts: Callable[[Any, Context], dict[str, Any]] = lambda dataset, context: {}
    parts: tuple[Part, ...] = ()
    data_keys: tuple[str, ...] = ()
    data_defaults: Callable[[Context], dict[str, Any]] | None = None
    shared: bool = False

    def builder_data(self, context: Context) -> dict[str, Any]:
        """The recipe's ``data:`` as the dataset builder takes it."""
        skip = {*self.data_keys, *(key for part in self.parts for key in part.data_keys)}
        defaults = self.data_defaults(context) if self.data_defaults is not None else {}
        return {**defaults, **{k: v for k, v in context.recipe.data.items() if k not in skip}}


_SHARED: dict[str, Any] = {}


def build_dataset(assembly: Assembly, recipe, accelerator=None, model=None) -> Any:
    """The method's dataset for ``recipe``, built with the main process first (once per process when shared)."""
    context = Context(recipe, model, accelerator, {})
    data = assembly.builder_data(context)
    key = json.dumps([assembly.method, data], sort_keys=True, default=str)
    if assembly.shared and key in _SHARED:
        return _SHARED[key]
    with context.main_process_first():
        dataset = assembly.dataset(**data, progress=context.progress)
    if assembly.shared:
        _SHARED[key] = dataset
    return dataset


def assemble(assembly: Assembly, recipe, model, accelerator=None) -> Any:
    """Build the training task that ``assembly`` declares for ``recipe`` and ``model`` (see the module docstring)."""
    method = get_method(assembly.method)
    validate_args(method, "data", recipe.data)
    context = Context(recipe, model, accelerator, resolve_args(method, "task", recipe.training.method_args))
    dataset = build_dataset(assembly, recipe, accelerator, model)
    part_facts: dict[str, Any] = {}
    for part in sorted(assembly.parts, key=lambda p: p.stage):
        dataset, facts = part.apply(dataset, recipe, context)
        part_facts.update(facts)
    return assembly.task(dataset, context, {**assembly.facts(dataset, context), **part_facts})


# ------------------------------------------------------------------------------------------------- shared parts
@dataclass(frozen=True)
class BenchmarkFilter:
    """``data.benchmark_filter``: drop the training items that touch a test-benchmark item (off when unset).

    ``drop``: ``(dataset, blocklist, mode) -> (dataset, facts)``, the method's items and how to count them.
    """

    drop: Callable[[Any, Any, str], tuple[Any, dict[str, Any]]]
    stage: Stage = Stage.FILTER
    data_keys: tuple[str, ...] = ("benchmark_filter",)

    def apply(self, dataset: Any, recipe: Any, context: Context) -> tuple[Any, dict[str, Any]]:
        if not context.filter_mode:
            return dataset, {}
        return self.drop(dataset, context.blocklist(), context.filter_mode)


@dataclass(frozen=True)
class TeacherDistillation:
    """``distill_weight > 0``: the teacher embeds every string of the final data (cached, main process first).

    ``strings``: ``dataset -> strings`` a batch can hold (the teacher rows its distillation term looks up).
    """

    strings: Callable[[Any], Iterable[str]]
    stage: Stage = Stage.READ
    data_keys: tuple[str, ...] = ()

    def apply(self, dataset: Any, recipe: Any, context: Context) -> tuple[Any, dict[str, Any]]:
        weight = context.args.get("distill_weight")
        if not weight:
            if context.args.get("teacher_guard"):
                raise ValueError("teacher_guard only acts on the teacher term: set distill_weight > 0 as well.")
            return dataset, {}
        strings = sorted(set(self.strings(dataset)))
        with context.main_process_first():
            teacher = teachers.teacher_embeddings(strings, context.args["teacher"], progress=context.progress)
        guard = bool(context.args.get("teacher_guard", False))
        context.terms = replace(context.terms, distill_weight=weight, teacher=teacher, guard=guard)
        facts = {"teacher": f"{teacher.teacher} ({len(teacher)} phrases)"}
        if guard:
            facts["teacher guard"] = "off on rows where the teacher ranks a hard negative at or above the alias"
        return dataset, facts


@dataclass(frozen=True)
class LexiconTerm:
    """``lexicon_weight > 0``: the lexicon term (WordNet words and their teacher neighbours; main process first).

    Its facts come last in the card (:meth:`TeacherTerms.facts`), after what the task adds while it prepares.
    """

    stage: Stage = Stage.EXTRA
    data_keys: tuple[str, ...] = ()

    def apply(self, dataset: Any, recipe: Any, context: Context) -> tuple[Any, dict[str, Any]]:
        weight = context.args.get("lexicon_weight")
        if not weight:
            return dataset, {}
        with context.main_process_first():
            lexicon = lexicon_distillation.build_lexicon_distillation(
                context.args.get("lexicon"), context.args["teacher"], context.filter_mode, progress=context.progress
            )
        context.terms = replace(context.terms, lexicon_weight=weight, lexicon=lexicon)
        return dataset, {}
