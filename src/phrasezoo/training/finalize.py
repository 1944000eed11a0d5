"""The last step on a trained model before its export: the method's ``finalize`` hook, once, wherever a model is
exported after training (the pipeline, ``phrasezoo train``, the GPU job's unpack, ``phrasezoo export
--from-checkpoint``)."""

from __future__ import annotations

from typing import Any

from phrasezoo.zoo.registry import get_method


def finalize_model(cfg, model) -> dict[str, Any]:
    """Run ``cfg``'s method's :attr:`~phrasezoo.zoo.registry.Method.finalize` on ``model`` (in place, after the dev-suite
    selection); returns its facts for the model card (none when the method has no such step)."""
    hook = get_method(cfg.method).finalize
    return dict(hook(model, cfg) or {}) if hook is not None else {}
