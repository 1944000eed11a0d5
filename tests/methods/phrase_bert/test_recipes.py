"""Phrase-BERT recipes keep the paper's hyper-parameters (the generic recipe checks are in tests/test_recipes.py)."""

from __future__ import annotations

import pytest

from phrasezoo.core.recipes import list_recipes, load_recipe

RECIPES = [name for name in list_recipes() if load_recipe(name).method == "phrase_bert"]


@pytest.mark.parametrize("name", RECIPES)
def test_paper_hyper_parameters_in_every_recipe(name):
    cfg = load_recipe(name)
    assert cfg.training.batch_size == 16 and cfg.training.epochs == 1 and cfg.training.warmup_ratio == 0.1
    assert cfg.training.method_args.get("margin", 1.0) == 1.0
