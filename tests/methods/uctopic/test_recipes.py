"""UCTopic's own recipe rule (the generic recipe checks are in tests/test_recipes.py)."""

from __future__ import annotations

import pytest

from phrasezoo.core.recipes import recipe_from_dict
from phrasezoo.zoo.registry import validate_recipe


def test_an_mlm_loss_needs_the_mlm_head():
    base = {"name": "x", "method": "uctopic", "repo_id": "o/x", "backbone": "minilm-l6"}
    with pytest.raises(ValueError, match="use_mlm_head"):
        validate_recipe(recipe_from_dict({**base, "training": {"method_args": {"mlm_weight": 0.1}}}))
    validate_recipe(
        recipe_from_dict({**base, "model": {"use_mlm_head": True}, "training": {"method_args": {"mlm_weight": 0.1}}})
    )


def test_the_papers_protocol_is_a_task_group():
    from phrasezoo.evaluation.tasks import resolve_tasks

    expected = ["conll2003_context", "bc5cdr_context", "conll2003_context_ccl", "bc5cdr_context_ccl"]
    assert resolve_tasks("uctopic") == expected
    assert resolve_tasks("context,uctopic") == expected
