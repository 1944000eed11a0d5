"""The checkpoints the papers' authors published, as methods declare them (``Method.releases``), and the generic
pieces that turn one into a zoo model.

A method whose paper published weights declares each :class:`Release` in its ``release.py``: the repository, the
paper to credit, the licence, what the release holds and lacks, and the ``convert`` function that builds the zoo
model from the release's folder. ``phrasezoo convert`` (:mod:`phrasezoo.hub.convert`) downloads the release, calls
``convert`` and writes the export with a card. The pieces here are shared by the converters: reading weights
(safetensors, or a pickle with ``weights_only=True``), copying them into a model with every key accounted for, and
reading a sentence-transformers folder that mean pooling reproduces.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file
from torch import nn
from transformers import AutoConfig, AutoTokenizer

#: the sentence-transformers modules mean pooling reproduces (by the last part of their type)
ST_MODULES = {"Transformer", "BERT", "Pooling", "Normalize"}
#: pooling modes of a sentence-transformers ``Pooling`` config other than the mean
OTHER_POOLING_MODES = ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")


@dataclass(frozen=True)
class Paper:
    """The paper behind a release, as the card of a converted model credits it."""

    citation: str  # "Authors, *Title* (venue year)"
    code: str  # the official repository
    bibtex: str


@dataclass(frozen=True)
class Release:
    """A checkpoint the authors of a method's paper published.

    Attributes:
        repo_id: the authors' Hub repository.
        paper: whom the card credits.
        what: what the repository holds, in its own terms (architecture, size, file layout).
        license: the release's licence, kept by the conversion (a Hub licence id).
        official_use: how the authors' code turns inputs into a vector (what the converted model reproduces).
        convert: ``(folder) -> (model, facts)``: the zoo model holding the release, tokenizer attached, and facts
            about the conversion for the card (what was kept, what was left out).
        usage: the lines after ``model = AutoModel.from_pretrained(...)`` in the card's usage example.
        missing: what the release does not contain, said on the card.
        paper_row: the method's ``paper_rows`` entry with the authors' numbers for this checkpoint, if any.
        reported: more about the authors' numbers for this checkpoint (their README's, the row's protocol).
    """

    repo_id: str
    paper: Paper
    what: str
    license: str
    official_use: str
    convert: Callable[[Path], tuple[Any, dict[str, str]]]
    usage: str
    missing: tuple[str, ...] = ()
    paper_row: str | None = None
    reported: str = ""


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The tensors of ``model.safetensors``, else of ``pytorch_model.bin`` read with ``weights_only=True`` (tensors and
    plain containers only: torch refuses a pickle that would run code)."""
    if (folder / "model.safetensors").is_file():
        return load_file(folder / "model.safetensors")
    if (folder / "pytorch_model.bin").is_file():
        return torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"{folder} holds neither model.safetensors nor pytorch_model.bin (sharded weights are "
                            "not supported).")  # fmt: skip


def load_weights(module: nn.Module, state: dict[str, torch.Tensor], prefix: str = "") -> list[str]:
    """Copy the tensors of ``state`` under ``prefix`` into ``module``; returns the keys under it that were left out.

    Every weight of ``module`` must be there with its shape; only a pooler and position-id buffers (unused: the zoo
    pools itself) may be left out. Legacy ``LayerNorm.gamma``/``beta`` names are read as ``weight``/``bias``.
    """
    found = {}
    for key, value in state.items():
        if key.startswith(prefix):
            name = key[len(prefix) :].replace("LayerNorm.gamma", "LayerNorm.weight")
            found[name.replace("LayerNorm.beta", "LayerNorm.bias")] = value
    own = module.state_dict()
    missing = sorted(set(own) - set(found))
    if missing:
        raise ValueError(f"The release lacks {len(missing)} weights of the model, e.g. {prefix}{missing[0]}.")
    left_out = sorted(set(found) - set(own))
    unknown = [k for k in left_out if not k.startswith("pooler.") and not k.endswith("position_ids")]
    if unknown:
        raise ValueError(f"The release holds weights this conversion does not know: {prefix}{unknown[0]} ...")
    for name, tensor in own.items():
        if tuple(found[name].shape) != tuple(tensor.shape):
            raise ValueError(f"{prefix}{name} has shape {tuple(found[name].shape)}, the model {tuple(tensor.shape)}.")
    module.load_state_dict({name: found[name] for name in own})
    return [prefix + k for k in left_out]


@dataclass
class StLayout:
    """What a sentence-transformers folder says about its model: the transformer's folder, its token limit and
    whether the pipeline ends with ``Normalize``."""

    transformer: Path
    max_seq_length: int | None
    normalize: bool


def read_sentence_transformers(folder: Path) -> StLayout:
    """The layout of a sentence-transformers folder, checked to be one that masked mean pooling reproduces
    (Transformer -> Pooling(mean) [-> Normalize]); a folder without ``modules.json`` is read as a plain transformers
    model used with mean pooling."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        return StLayout(folder, None, False)
    modules = json.loads(modules_file.read_text())
    kinds = {m["type"].rsplit(".", 1)[-1]: folder / m.get("path", "") for m in modules}
    unknown = sorted(set(kinds) - ST_MODULES)
    if unknown or "Pooling" not in kinds or not ({"Transformer", "BERT"} & set(kinds)):
        raise ValueError(f"{folder}: modules {sorted(kinds)}; a conversion reproduces Transformer -> Pooling(mean) "
                         "[-> Normalize] only.")  # fmt: skip
    pooling = json.loads((kinds["Pooling"] / "config.json").read_text())
    modes = [m for m in OTHER_POOLING_MODES if pooling.get(f"pooling_mode_{m}")]
    if not pooling.get("pooling_mode_mean_tokens") or modes:
        raise ValueError(f"{folder}: the pooling is not mean pooling alone ({pooling}).")
    transformer = kinds.get("Transformer", kinds.get("BERT"))
    settings_file = transformer / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
    if settings.get("do_lower_case"):
        raise ValueError(f"{folder}: do_lower_case=true lowercases texts before the tokenizer; not reproduced.")
    return StLayout(transformer, settings.get("max_seq_length"), "Normalize" in kinds)


def mean_pooled_model(folder: Path, model_class, config_class, **config_kwargs) -> tuple[Any, dict[str, str]]:
    """A zoo model of a backbone with masked mean pooling (``model_class(config_class(backbone_config=...,
    max_seq_length=..., **config_kwargs))``) holding the transformer of a sentence-transformers release, its
    tokenizer attached, and the facts of the conversion."""
    layout = read_sentence_transformers(folder)
    backbone_config = AutoConfig.from_pretrained(layout.transformer)
    tokenizer = AutoTokenizer.from_pretrained(layout.transformer)
    limit = backbone_config.max_position_embeddings
    max_seq_length = min(layout.max_seq_length or min(tokenizer.model_max_length, limit), limit)
    model = model_class(config_class(backbone_config=backbone_config, max_seq_length=max_seq_length, **config_kwargs))
    left_out = load_weights(model.backbone, read_weights(layout.transformer))
    model.set_tokenizer(tokenizer)
    return model, {
        "max_seq_length": f"{max_seq_length} tokens (the release's)",
        "normalisation": "the release ends with Normalize" if layout.normalize else "none in the release",
        "left out": ", ".join(f"`{k}`" for k in left_out) or "nothing",
    }
