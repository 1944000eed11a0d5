"""The zoo's method registry: one uniform way to create, train and test any model (like timm's ``create_model``).

Each method registers a :class:`Method`: its config and model classes, how to build a fresh model from a
pretrained backbone, how to build its training task, and a tiny random configuration plus sample inputs that the
generic contract tests use. Registration happens in ``phrasezoo.methods.<name>``; :func:`get_method` imports it
lazily so that importing the registry stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

METHOD_MODULES = {
    "pearl": "phrasezoo.methods.pearl",
    "phrase_bert": "phrasezoo.methods.phrase_bert",
    "uctopic": "phrasezoo.methods.uctopic",
}


@dataclass
class Method:
    """What the zoo knows about a method.

    Attributes:
        name: registry name (``pearl``).
        config_class / model_class: the ``transformers`` classes in ``phrasezoo.models.<name>``.
        model_files: module paths of the self-contained model files (checked by the contract tests).
        from_backbone: ``(backbone_path, **config_kwargs) -> model`` with pretrained backbone weights.
        build_task: ``(hub_config, model, accelerator) -> TrainingTask`` for :mod:`phrasezoo.training`.
        tiny_model: ``() -> model`` small and random, with a real tokenizer attached, for fast contract tests.
        sample_inputs: inputs accepted by ``model.encode`` (phrases, or (sentence, span) pairs).
        bad_inputs: ``(inputs, expected error substring)`` pairs that ``encode`` must reject with ``ValueError``.
        extra_tiny_models: more tiny models, by variant name, for methods with several architectures (e.g. UCTopic's
            LUKE path); the contract tests run on each of them as well as on ``tiny_model``.
    """

    name: str
    config_class: type
    model_class: type
    model_files: tuple[str, ...]
    from_backbone: Callable[..., Any]
    build_task: Callable[..., Any]
    tiny_model: Callable[[], Any]
    sample_inputs: list[Any]
    bad_inputs: list[tuple[Any, str]] = field(default_factory=list)
    description: str = ""
    extra_tiny_models: dict[str, Callable[[], Any]] = field(default_factory=dict)


_REGISTRY: dict[str, Method] = {}


def register_method(method: Method) -> Method:
    _REGISTRY[method.name] = method
    return method


def get_method(name: str) -> Method:
    if name not in _REGISTRY:
        if name not in METHOD_MODULES:
            raise KeyError(f"Unknown method '{name}'. Known methods: {', '.join(sorted(METHOD_MODULES))}.")
        importlib.import_module(METHOD_MODULES[name])
    return _REGISTRY[name]


def list_methods() -> list[str]:
    return sorted(METHOD_MODULES)


def create_model(hub_config_or_name, pretrained_backbone: bool = True):
    """Build a model from a hub config (name, path or :class:`HubConfig`): pretrained backbone + fresh heads."""
    from phrasezoo.hub_config import HubConfig, load_hub_config
    from phrasezoo.resources import resolve_backbone

    cfg = hub_config_or_name if isinstance(hub_config_or_name, HubConfig) else load_hub_config(hub_config_or_name)
    method = get_method(cfg.method)
    if not pretrained_backbone:
        raise NotImplementedError("Random backbones are only built by Method.tiny_model for tests.")
    return method.from_backbone(resolve_backbone(cfg.backbone), **cfg.model)
