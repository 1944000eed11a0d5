"""PEARL's type head refit after training (phrasezoo.methods.pearl.type_head) and the finalize hook that runs it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from phrasezoo.methods.pearl import type_head
from phrasezoo.training.finalize import finalize_model
from phrasezoo.zoo.registry import get_method

PEOPLE = ["Barack Obama", "Angela Merkel", "Marie Curie", "Charles Dickens", "Ada Lovelace", "Alan Turing"]
PLACES = ["London", "Paris", "New York", "Tokyo", "Berlin", "Madrid"]
OTHER = ["very difficult", "machine learning", "in the morning", "free association", "quickly enough", "civil war"]


def test_training_rows_keep_a_share_of_other_and_are_seeded():
    labels = ["NP-OTHER"] * 90 + ["NP-PERSON"] * 30 + ["", "VP-OTHER"]
    rows = type_head.training_rows(labels, max_rows=40, seed=0)
    assert len(rows) == 40 and rows == sorted(rows) and rows == type_head.training_rows(labels, 40, seed=0)
    assert sum(labels[i].endswith("-OTHER") for i in rows) == 10  # a quarter; the rest are names
    assert rows != type_head.training_rows(labels, 40, seed=1)
    everything = type_head.training_rows(labels, max_rows=1000)  # all fit: every labelled row, the empty one not
    assert everything == [*range(120), 121]
    few_names = type_head.training_rows(["NP-OTHER"] * 50 + ["NP-GPE"] * 5, max_rows=20)
    assert len(few_names) == 20  # OTHER takes the room the names leave


def test_the_refit_learns_the_table_types_and_never_predicts_an_absent_type():
    model = get_method("pearl").tiny_model()
    phrases = PEOPLE + PLACES + OTHER
    labels = ["NP-PERSON"] * 6 + ["NP-GPE"] * 6 + ["NP-OTHER"] * 6
    before = model.type_head.weight.detach().clone()
    facts = type_head.fit_type_head(model, phrases, labels, c=100.0)
    assert not np.allclose(before.numpy(), model.type_head.weight.detach().numpy())
    predicted = [p[0][0] for p in model.predict_type(phrases)]
    assert np.mean([p == gold for p, gold in zip(predicted, labels)]) >= 0.8  # separable training rows
    assert set(predicted) <= {"NP-PERSON", "NP-GPE", "NP-OTHER"}  # the other 92 types are never predicted
    assert "18 typed table phrases (12 of a named-entity type, 6 OTHER" in facts["type head"]
    with pytest.raises(ValueError, match="two types"):
        type_head.fit_type_head(model, OTHER, ["NP-OTHER"] * 6)


def test_the_finalize_hook_runs_only_when_the_recipe_asks(monkeypatch):
    model = get_method("pearl").tiny_model()
    calls = []
    monkeypatch.setattr(type_head, "typed_table", lambda recipe: (PEOPLE + OTHER, ["NP-PERSON"] * 6 + ["NP-OTHER"] * 6))
    monkeypatch.setattr(
        type_head, "fit_type_head", lambda model, phrases, labels, **kw: calls.append(kw) or {"type head": "x"}
    )
    recipe = SimpleNamespace(method="pearl", training=SimpleNamespace(method_args={}))
    assert finalize_model(recipe, model) == {} and calls == []
    recipe.training.method_args["type_head_refit"] = True
    assert finalize_model(recipe, model) == {"type head": "x"} and calls == [{}]
    recipe.training.method_args["type_head_refit"] = {"max_rows": 50, "c": 0.5}
    finalize_model(recipe, model)
    assert calls[-1] == {"max_rows": 50, "c": 0.5}


def test_the_typed_table_is_the_recipe_table_after_its_filter(monkeypatch):
    from datasets import Dataset

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.zoo import assembly

    table = Dataset.from_dict({"phrase": ["London", "very difficult"], "type_label": ["NP-GPE", "NP-OTHER"]})
    monkeypatch.setattr(type_head, "build_dataset", lambda declared, recipe: table)
    recipe = load_recipe("pearl-mini", ["data.benchmark_filter=null"])
    assert type_head.typed_table(recipe) == (["London", "very difficult"], ["NP-GPE", "NP-OTHER"])
    from phrasezoo.methods.pearl import assembly as pearl_assembly

    part = next(p for p in pearl_assembly.ASSEMBLY.parts if p.stage == assembly.Stage.FILTER)
    monkeypatch.setattr(type(part), "apply", lambda self, dataset, recipe, context: (dataset.select([0]), {}))
    filtered = type_head.typed_table(load_recipe("pearl-mini"))  # the recipe's own filter (multiword) runs
    assert filtered == (["London"], ["NP-GPE"])
