"""Every published recipe parses and only uses arguments its method accepts."""

from __future__ import annotations

import inspect

import pytest
from transformers import BertConfig

from phrasezoo.hub_config import hub_config_from_dict, list_hub_configs, load_hub_config
from phrasezoo.registry import get_method, list_methods

CONFIGS = list_hub_configs()


def test_there_is_a_mini_recipe_per_method_for_this_cpu():
    for method in list_methods():
        assert f"{method.replace('_', '-')}-mini" in CONFIGS


@pytest.mark.parametrize("name", CONFIGS)
def test_recipe_is_valid_for_its_method(name):
    cfg = load_hub_config(name)
    method = get_method(cfg.method)
    config = method.config_class(backbone_config=BertConfig(vocab_size=100, hidden_size=32), **cfg.model)
    assert config.model_type == method.config_class.model_type
    assert cfg.repo_id.endswith(cfg.name)
    if cfg.method == "pearl":
        from phrasezoo.data import build_pearl_dataset
        from phrasezoo.methods.pearl import CHAR_PRETRAIN_DEFAULTS

        accepted = set(inspect.signature(build_pearl_dataset).parameters) | {"augmentation_mix"}
        assert set(cfg.data) <= accepted, set(cfg.data) - accepted
        assert set(cfg.training.method_args) <= {"temperature", "hard_negatives", "type_loss_weight", "char_pretrain"}
        assert set(cfg.training.method_args.get("char_pretrain", {})) <= set(CHAR_PRETRAIN_DEFAULTS)
    if cfg.method == "phrase_bert":
        from phrasezoo.data.phrase_bert import OBJECTIVES, build_phrase_bert_data
        from phrasezoo.methods.phrase_bert import METHOD_ARGS_DEFAULTS

        accepted = set(inspect.signature(build_phrase_bert_data).parameters) - {"progress"}
        assert set(cfg.data) <= accepted, set(cfg.data) - accepted
        assert set(cfg.data.get("objectives", OBJECTIVES)) <= set(OBJECTIVES)
        assert set(cfg.training.method_args) <= set(METHOD_ARGS_DEFAULTS)
        assert cfg.training.batch_size == 16 and cfg.training.epochs == 1 and cfg.training.warmup_ratio == 0.1
        assert cfg.training.method_args.get("margin", 1.0) == 1.0  # the paper's defaults, in every recipe
    if cfg.method == "uctopic":
        from phrasezoo.data.uctopic import SOURCES, build_uctopic_dataset
        from phrasezoo.methods.uctopic import DATA_ARGS, METHOD_ARGS, UCTopicTask

        accepted = set(inspect.signature(build_uctopic_dataset).parameters) - {"cache", "progress"}
        assert set(DATA_ARGS) == accepted
        assert set(cfg.data) <= accepted, set(cfg.data) - accepted
        assert set(cfg.data.get("sources", [])) <= set(SOURCES)
        assert set(METHOD_ARGS) <= set(inspect.signature(UCTopicTask).parameters)
        assert set(cfg.training.method_args) <= set(METHOD_ARGS), set(cfg.training.method_args) - set(METHOD_ARGS)
        if cfg.training.method_args.get("mlm_weight"):
            assert cfg.model.get("use_mlm_head"), "an MLM loss needs model.use_mlm_head: true"


def test_overrides_and_errors():
    cfg = load_hub_config("pearl-mini", ["training.max_steps=5", "data.min_freq=3"])
    assert cfg.training.max_steps == 5 and cfg.data["min_freq"] == 3
    with pytest.raises(ValueError, match="dotted.key=value"):
        load_hub_config("pearl-mini", ["training.max_steps"])
    with pytest.raises(FileNotFoundError, match="Known configs"):
        load_hub_config("no-such-model")
    base = {"name": "x", "method": "pearl", "repo_id": "o/x", "backbone": "minilm-l6"}
    with pytest.raises(ValueError, match="Unknown training keys"):
        hub_config_from_dict({**base, "training": {"batch_sise": 3}})
    with pytest.raises(ValueError, match="lacks required keys: backbone"):
        hub_config_from_dict({k: v for k, v in base.items() if k != "backbone"})
