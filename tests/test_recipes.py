"""Every published recipe parses and only uses arguments its method declares (generic: no per-method branches).

Method-specific recipe policies (e.g. the paper's hyper-parameters in every Phrase-BERT recipe) are tested in
``tests/methods/<name>/test_recipes.py``.
"""

from __future__ import annotations

import pytest

from phrasezoo.core.recipes import list_recipes, load_recipe, recipe_from_dict
from phrasezoo.zoo.registry import (
    ARG_SECTIONS,
    Arg,
    OutputKind,
    get_method,
    list_methods,
    validate_args,
    validate_recipe,
)

CONFIGS = list_recipes()


def test_there_is_a_mini_recipe_per_method_for_this_cpu():
    for method in list_methods():
        prefix = method.replace("_", "-") + "-"
        assert any(name.startswith(prefix) and "mini" in name for name in CONFIGS), method


@pytest.mark.parametrize("name", CONFIGS)
def test_recipe_is_valid_for_its_method(name):
    cfg = load_recipe(name)
    method = validate_recipe(cfg)  # backbone when required, every section against the method's schema, its rules
    config = method.config_class(**{**method.tiny_config, **cfg.model})
    assert config.model_type == method.config_class.model_type
    assert cfg.repo_id.endswith(cfg.name)


@pytest.mark.parametrize("name", list_methods())
def test_method_declaration_is_complete(name):
    method = get_method(name)
    assert method.output_kind in OutputKind
    assert set(method.args) <= set(ARG_SECTIONS)
    assert all(isinstance(arg, Arg) for section in method.args.values() for arg in section.values())
    for section in method.args.values():  # defaults are valid values of their own schema
        for key, arg in section.items():
            if arg.choices is not None and arg.default is not None:
                items = arg.default if isinstance(arg.default, (list, tuple)) else [arg.default]
                assert set(items) <= set(arg.choices), (name, key)
    assert method.card_template.exists(), f"{name}: no card template at {method.card_template}"
    assert method.from_backbone is not None or method.from_config is not None
    assert method.sample_inputs and method.tiny_config


def test_validation_names_the_bad_key_and_the_allowed_ones():
    method = get_method(list_methods()[0])
    section, schema = next((s, a) for s, a in method.args.items() if a)
    with pytest.raises(ValueError, match="Unknown .* argument 'no_such_key'.*allowed: " + sorted(schema)[0]):
        validate_args(method, section, {"no_such_key": 1})
    for key, arg in schema.items():
        if arg.keys:
            with pytest.raises(ValueError, match=f"of '{key}'.*allowed"):
                validate_args(method, section, {key: {"no_such_key": 1}})
        if arg.choices:
            with pytest.raises(ValueError, match=f"Bad value.*'{key}'"):
                validate_args(method, section, {key: ["no-such-choice"]})


def test_overrides_and_errors():
    name = CONFIGS[0]
    cfg = load_recipe(name, ["training.max_steps=5", "data.some_option=3"])
    assert cfg.training.max_steps == 5 and cfg.data["some_option"] == 3  # parsed here, checked by validate_recipe
    with pytest.raises(ValueError, match="dotted.key=value"):
        load_recipe(name, ["training.max_steps"])
    with pytest.raises(FileNotFoundError, match="Known recipes"):
        load_recipe("no-such-model")
    method = next(m for m in list_methods() if get_method(m).requires_backbone)
    base = {"name": "x", "method": method, "repo_id": "o/x", "backbone": "minilm-l6"}
    with pytest.raises(ValueError, match="Unknown training keys"):
        recipe_from_dict({**base, "training": {"batch_sise": 3}})
    with pytest.raises(ValueError, match="lacks required keys: repo_id"):
        recipe_from_dict({k: v for k, v in base.items() if k != "repo_id"})
    # the backbone is optional in a recipe, required by methods built from a pretrained backbone
    with pytest.raises(ValueError, match="set `backbone:`"):
        validate_recipe(recipe_from_dict({k: v for k, v in base.items() if k != "backbone"}))
    with pytest.raises(ValueError, match="argument 'no_such_option'"):
        validate_recipe(recipe_from_dict({**base, "data": {"no_such_option": 2}}))
