"""The zoo's method registry: one uniform way to create, train and test any model (like timm's ``create_model``).

Every sub-package of :mod:`phrasezoo.methods` that defines ``METHOD = Method(...)`` in its ``__init__`` is a method:
the registry finds them by scanning the package (``pkgutil``), so adding a method never edits this file. A
:class:`Method` declares everything the generic code needs (training, export, the card, the contract tests, the
recipe checks): its config/model classes, how a fresh model is built (from a pretrained backbone and/or from the
recipe alone), what its ``encode`` returns (:class:`OutputKind`), one argument schema for the recipe sections it
reads, and a tiny random configuration with sample inputs for fast tests.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from phrasezoo.core.errors import InputError
from phrasezoo.core.files import shipped_folder
from phrasezoo.core.recipes import Recipe, load_recipe
from phrasezoo.resources import resolve_backbone

#: the recipe sections a method's argument schema covers: ``model:``, ``data:`` and ``training.method_args``
ARG_SECTIONS = ("model", "data", "task")
METHODS_PACKAGE = "phrasezoo.methods"


class OutputKind(StrEnum):
    """What a method's model gives per input text; encoders, the harness and the contract tests dispatch on it.

    * ``VECTOR``: one vector per text from ``encode()`` (PEARL, Phrase-BERT, UCTopic).
    * ``TOKENS``: contextual token vectors aggregated over spans; ``encode()`` gives the query vector of a text and
      ``encode_tokens()`` the token vectors with their character offsets (SLICE).
    * ``FACETS``: K vectors per text from ``facets()``, plus one vector per text from ``encode()`` (codebook).
    """

    VECTOR = "vector"
    TOKENS = "tokens"
    FACETS = "facets"


_MISSING = object()


@dataclass(frozen=True)
class Arg:
    """One recipe argument of a method: its default, what it does, and the values or keys it accepts.

    ``choices``: allowed values (for a list value: allowed items). ``keys``: allowed keys of a mapping value.
    ``after_training``: the argument acts on the final model after the last step (a ``finalize`` hook's option), so
    the trained weights do not depend on it: a run, a resume or a GPU pack stays the same recipe when it changes.
    """

    default: Any = None
    doc: str = ""
    choices: tuple[Any, ...] | None = None
    keys: tuple[str, ...] | None = None
    after_training: bool = False


ArgSchema = dict[str, Arg]


def benchmark_filter_arg(what: str) -> Arg:
    """The ``data.benchmark_filter`` argument every method shares: ``what`` says which training items go."""
    return Arg(
        None,
        f"drop {what}, in this phrasezoo.data.benchmark_filter mode: 'multiword' or 'strict' (default: off, as in the "
        "paper)",
    )


def lexicon_args() -> ArgSchema:
    """The ``lexicon_weight`` / ``lexicon`` task arguments every teacher-distilling method shares
    (:mod:`phrasezoo.objectives.lexicon_distillation`)."""
    from phrasezoo.objectives.lexicon_distillation import LEXICON_DEFAULTS  # lazy: keeps torch off the registry

    return {
        "lexicon_weight": Arg(
            0.0,
            "weight of the lexicon term (0: off; not in the paper): the phrase encoder's ranking of WordNet words and "
            "their teacher neighbours is pulled towards the teacher's (phrasezoo.objectives.lexicon_distillation)",
        ),
        "lexicon": Arg(
            None,
            "options of the lexicon term: "
            + ", ".join(f"{key} (default {value})" for key, value in LEXICON_DEFAULTS.items()),
            keys=tuple(LEXICON_DEFAULTS),
        ),
    }


def signature_args(function: Callable[..., Any], exclude: tuple[str, ...] = (), **docs: str) -> ArgSchema:
    """An argument schema read from ``function``'s keyword parameters (defaults kept; ``*args/**kwargs`` skipped).

    Used when a recipe section is passed straight to one function (a data builder, a config class), so that the
    function's signature stays the one source of truth.
    """
    schema: ArgSchema = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if name in ("self", "cls", *exclude) or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = None if parameter.default is inspect.Parameter.empty else parameter.default
        schema[name] = Arg(default=default, doc=docs.get(name, ""))
    return schema


@dataclass
class Method:
    """What the zoo knows about a method (declared once, in ``phrasezoo/methods/<name>/__init__.py``).

    Attributes:
        name: registry name (``pearl``); recipes name it in ``method:``.
        description: one line for ``phrasezoo list`` and the training log.
        config_class / model_class: the ``transformers`` classes in ``phrasezoo.models.<name>``.
        model_files: module paths of the self-contained model files (checked by the contract tests).
        build_task: ``(recipe, model, accelerator) -> TrainingTask`` for :mod:`phrasezoo.training`.
        output_kind: what ``encode`` and friends return (:class:`OutputKind`).
        from_backbone: ``(backbone_path, **model_args) -> model`` with pretrained backbone weights, or ``None``.
        from_config: ``(recipe, accelerator) -> model`` for models built without a pretrained backbone (e.g. a
            word-level vocabulary and word vectors named by the recipe), or ``None``.
        requires_backbone: recipes must name a ``backbone:`` (default: when there is no ``from_config``).
        args: one argument schema per recipe section (``model``, ``data``, ``task`` = ``training.method_args``),
            checked by :func:`validate_args`; a missing section accepts no keys.
        check_recipe: optional ``(recipe) -> None`` for cross-section rules (raise ``ValueError``).
        tiny_config: kwargs of ``config_class`` for a small random model (nested ``backbone_config`` as a dict with
            ``model_type``); :meth:`tiny_model` builds it, the contract tests run on it.
        tiny_variants: more tiny configs by variant name (e.g. UCTopic's LUKE path), tested like ``tiny_config``.
        tiny_tokenizer: embedded backbone whose tokenizer the tiny models read (``None``: the model makes its own).
        sample_inputs: inputs accepted by ``model.encode`` (phrases, or (sentence, span) pairs).
        bad_inputs: ``(inputs, expected error substring)`` pairs that ``encode`` must reject with ``ValueError``.
        paper_rows: reference numbers from the papers for the report (``{row name: {column: value}}``).
        task_groups: benchmark-task groups the method names (its paper's protocol), usable wherever tasks are
            named (``eval.tasks`` of a recipe, ``--tasks``), e.g. ``{"uctopic": ("conll2003_context", ...)}``.
        topic_commands: ``"module:function"`` references (relative to the method's package) of functions that add
            subcommands to ``phrasezoo topics`` (e.g. ``"topic_mining.commands:add_mining_commands"``): the method's
            applications, registered by :mod:`phrasezoo.applications.commands` without naming the method.
        sentence_transformers: how the integration writes a sentence-transformers folder: ``"mean_pooling"`` (the
            stock ``Transformer -> Pooling(mean) -> Normalize`` over the model's ``backbone``), ``"module:Class"``
            (a sentence-transformers input module in the method's package that runs the model; its file travels with
            the export), or ``None`` (not exportable: ``encode`` does not take plain text).
        span_context: how the spaCy component embeds a span in its sentence by default (``context="auto"``):
            ``"mentions"`` (``encode_mentions``), ``"tokens"`` (pooled token vectors of one pass) or ``"none"`` (the
            span text alone).
        finalize: optional ``(model, recipe) -> card facts``: a step on the final model after training and the
            dev-suite selection, before the export (:func:`phrasezoo.training.finalize.finalize_model`; PEARL refits
            its type head there).
        releases: the checkpoints the paper's authors published (:class:`phrasezoo.zoo.releases.Release`, declared
            in the method's ``release.py``), which ``phrasezoo convert`` turns into zoo exports; empty when they
            published none.
        folder: the method's folder (set by discovery).

    A method's evaluation tasks live in the package ``methods/<name>/tasks/`` and register
    themselves with ``@register_task``; the evaluation workflow imports them through :func:`method_parts`.
    """

    name: str
    config_class: type
    model_class: type
    model_files: tuple[str, ...]
    build_task: Callable[..., Any]
    sample_inputs: list[Any]
    description: str = ""
    output_kind: OutputKind = OutputKind.VECTOR
    from_backbone: Callable[..., Any] | None = None
    from_config: Callable[..., Any] | None = None
    requires_backbone: bool | None = None
    args: dict[str, ArgSchema] = field(default_factory=dict)
    check_recipe: Callable[[Any], None] | None = None
    tiny_config: dict[str, Any] = field(default_factory=dict)
    tiny_variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    tiny_tokenizer: str | None = "minilm-l6"
    bad_inputs: list[tuple[Any, str]] = field(default_factory=list)
    paper_rows: dict[str, dict[str, float]] = field(default_factory=dict)
    task_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    topic_commands: tuple[str, ...] = ()
    sentence_transformers: str | None = None
    span_context: str = "none"
    finalize: Callable[[Any, Any], dict[str, Any]] | None = None
    releases: tuple[Any, ...] = ()
    folder: Path | None = None

    def __post_init__(self) -> None:
        if self.from_backbone is None and self.from_config is None:
            raise ValueError(f"Method '{self.name}' needs a constructor: from_backbone, from_config or both.")
        if self.requires_backbone is None:
            self.requires_backbone = self.from_config is None
        unknown = set(self.args) - set(ARG_SECTIONS)
        if unknown:
            raise ValueError(f"Method '{self.name}': unknown argument sections {sorted(unknown)}; use {ARG_SECTIONS}.")
        self.output_kind = OutputKind(self.output_kind)

    @property
    def card_template(self) -> Path:
        """The model-card template, ``model_cards/<name>.md`` (a checkout's folder, or the copy a wheel ships)."""
        return shipped_folder("model_cards") / f"{self.name}.md"

    def load(self, reference: str) -> Any:
        """The object named by ``"module:attribute"`` in this method's package (``"module"`` alone: the module)."""
        module_name, _, attribute = reference.partition(":")
        module = importlib.import_module(f"{METHODS_PACKAGE}.{self.name}.{module_name}")
        return getattr(module, attribute) if attribute else module

    def tiny_model(self, variant: str | None = None):
        """A small random model from ``tiny_config`` (or ``tiny_variants[variant]``), seeded, tokenizer attached.

        Declared data, one generic builder: nothing per method here. Tests and Space tests use it for speed.
        """
        import torch  # lazy: keeps torch off the registry

        kwargs = self.tiny_config if variant is None else self.tiny_variants[variant]
        torch.manual_seed(0)
        model = self.model_class(self.config_class(**kwargs))
        if self.tiny_tokenizer is not None:
            from transformers import AutoTokenizer  # lazy: keeps transformers off the registry

            model.set_tokenizer(AutoTokenizer.from_pretrained(resolve_backbone(self.tiny_tokenizer)))
        return model


# --------------------------------------------------------------------------------------------------- discovery
_REGISTRY: dict[str, Method] = {}
_DISCOVERED = False


def _discover() -> None:
    """Import every ``phrasezoo.methods.<name>`` package and register its ``METHOD``."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    package = importlib.import_module(METHODS_PACKAGE)
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{METHODS_PACKAGE}.{info.name}")
        method = getattr(module, "METHOD", None)
        if isinstance(method, Method):
            if method.name != info.name:
                raise ValueError(f"{module.__name__} declares method '{method.name}'; name its folder the same.")
            method.folder = Path(module.__file__).parent
            _REGISTRY[method.name] = method
    _DISCOVERED = True


def get_method(name: str) -> Method:
    _discover()
    if name not in _REGISTRY:
        raise KeyError(f"Unknown method '{name}'. Known methods: {', '.join(sorted(_REGISTRY))}.")
    return _REGISTRY[name]


def list_methods() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


def method_for_model_type(model_type: str | None) -> Method | None:
    """The method whose config class has this ``model_type`` (a loaded model's ``config.model_type``), or ``None``."""
    return next((m for m in map(get_method, list_methods()) if m.config_class.model_type == model_type), None)


def method_parts(part: str) -> list[ModuleType]:
    """``phrasezoo.methods.<name>.<part>`` of every method that has one, imported, in name order.

    A workflow finds the pieces the methods plug into it this way, without naming a method: the evaluation workflow
    imports each method's ``tasks`` (evaluation tasks that register themselves with ``@register_task``).
    """
    modules = []
    for name in list_methods():
        module_name = f"{METHODS_PACKAGE}.{name}.{part}"
        if importlib.util.find_spec(module_name) is not None:
            modules.append(importlib.import_module(module_name))
    return modules


# ------------------------------------------------------------------------------------------------ arguments
def validate_args(method: Method, section: str, values: Mapping[str, Any] | None, source: str = "recipe") -> None:
    """The one check of a recipe section against the method's schema: unknown keys, nested keys and choices.

    Raises ``ValueError`` naming the bad key and the allowed ones.
    """
    schema = method.args.get(section, {})
    where = f"{source}: {section if section != 'task' else 'training.method_args'}"
    for key, value in (values or {}).items():
        if key not in schema:
            allowed = ", ".join(sorted(schema)) or "none"
            raise InputError(f"Unknown {method.name} argument '{key}' in {where}; allowed: {allowed}.")
        arg = schema[key]
        if arg.keys is not None and isinstance(value, Mapping):
            bad = sorted(set(value) - set(arg.keys))
            if bad:
                raise InputError(f"Unknown key(s) {bad} of '{key}' in {where}; allowed: {', '.join(arg.keys)}.")
        if arg.choices is not None:
            items = value if isinstance(value, (list, tuple)) else [value]
            bad = [item for item in items if item not in arg.choices]
            if bad:
                raise InputError(
                    f"Bad value(s) {bad} of '{key}' in {where}; allowed: {', '.join(map(str, arg.choices))}."
                )


def resolve_args(method: Method, section: str, values: Mapping[str, Any] | None) -> dict[str, Any]:
    """``values`` validated and completed with the schema's defaults (the arguments a task actually uses)."""
    validate_args(method, section, values)
    return {**{k: a.default for k, a in method.args.get(section, {}).items()}, **(values or {})}


def validate_recipe(recipe) -> Method:
    """Check a recipe against its method: backbone when required, every section, the method's own rules."""
    source = recipe.source_path or recipe.name
    try:
        method = get_method(recipe.method)
    except KeyError as err:
        raise InputError(f"{source}: {err.args[0]}") from None
    if method.requires_backbone and not recipe.backbone:
        raise InputError(f"{source}: method '{method.name}' is built from a pretrained backbone; set `backbone:`.")
    if recipe.backbone and method.from_backbone is None:
        raise InputError(f"{source}: method '{method.name}' has no pretrained backbone; remove `backbone:`.")
    validate_args(method, "model", recipe.model, source)
    validate_args(method, "data", recipe.data, source)
    validate_args(method, "task", recipe.training.method_args, source)
    if method.check_recipe is not None:
        try:
            method.check_recipe(recipe)
        except InputError:
            raise
        except ValueError as err:  # a method's own rule across sections: still a fault of the recipe file
            raise InputError(str(err) if source in str(err) else f"{source}: {err}") from err
    return method


def create_model(recipe, accelerator=None, method: Method | None = None):
    """A fresh model for a recipe (name, path or recipe object): pretrained backbone, or built from the recipe.

    ``method``: the recipe's :class:`Method` as :func:`validate_recipe` returned it, when the caller has validated
    the recipe already (the training workflow does, once); without it the recipe is validated here.
    """
    recipe = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    method = method or validate_recipe(recipe)
    if method.name != recipe.method:
        raise ValueError(f"create_model: recipe {recipe.name} is a '{recipe.method}' recipe, not '{method.name}'.")
    if recipe.backbone:
        return method.from_backbone(resolve_backbone(recipe.backbone), **recipe.model)
    if accelerator is None:
        from accelerate import Accelerator  # lazy: keeps accelerate (and torch) off the registry

        accelerator = Accelerator(cpu=True)
    return method.from_config(recipe, accelerator)
