"""The finalize step before export: a method without one leaves the model alone and adds no fact."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from phrasezoo.training.finalize import finalize_model
from phrasezoo.zoo.registry import get_method, list_methods


def test_a_method_without_a_finalize_step_changes_nothing():
    name = next(m for m in list_methods() if get_method(m).finalize is None)
    model = get_method(name).tiny_model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    recipe = SimpleNamespace(method=name, training=SimpleNamespace(method_args={"type_head_refit": True}))
    assert finalize_model(recipe, model) == {}
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
