"""Convert the papers' published checkpoints into zoo exports: ``phrasezoo convert <method> <repo id or folder> <out>``.

A repo id is downloaded with ``huggingface_hub.snapshot_download`` (``HF_ENDPOINT``, ``HF_HUB_OFFLINE`` and the Hub
cache apply; the revision recorded is the snapshot's commit); a folder is read in place. The export is what
``phrasezoo export`` writes for a trained model: weights in safetensors, the config (with ``auto_map`` and the
source in ``converted_from``), the model's own code, the tokenizer and a card crediting the authors
(:mod:`phrasezoo.hub.releases`). Pickled weights (``pytorch_model.bin``) are read with ``torch.load(...,
weights_only=True)``, which rebuilds tensors only and runs no code; nothing pickled is written.

- **PEARL** and **Phrase-BERT**: a sentence-transformers folder (``modules.json``: a Transformer, a mean
  ``Pooling``, optionally ``Normalize``) becomes :class:`~phrasezoo.models.pearl.modeling_pearl.PearlModel` (no
  character encoder, no type head: the release has neither) or
  :class:`~phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel`: the same BERT, mean pooling over the
  attention mask, the release's ``max_seq_length``.
- **UCTopic**: ``luke.*`` becomes the LUKE backbone and ``mlp.dense.*`` the head of
  :class:`~phrasezoo.models.uctopic.modeling_uctopic.UCTopicModel` (``span_representation="entity"``,
  ``span_tokenization="segments"``: the authors' tokenizer call); of the entity table only the rows of LUKE's special
  entities are kept, since UCTopic only ever feeds ``[MASK]``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from huggingface_hub import snapshot_download
from safetensors.torch import load_file
from torch import nn
from transformers import AutoConfig, AutoTokenizer, LukeTokenizer

from phrasezoo.hub.export import write_model_files
from phrasezoo.hub.releases import RELEASES, Release, releases_of, write_release_card
from phrasezoo.models.pearl.configuration_pearl import PearlConfig
from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.models.phrase_bert.configuration_phrase_bert import PhraseBertConfig
from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.models.uctopic.configuration_uctopic import UCTopicConfig
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel

#: the sentence-transformers modules a converted model reproduces (by the last part of their type)
ST_MODULES = {"Transformer", "BERT", "Pooling", "Normalize"}
#: pooling modes of a sentence-transformers ``Pooling`` config that the zoo's mean pooling does not do
OTHER_POOLING_MODES = ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
#: LUKE's special entities: the only rows of the entity table a converted UCTopic keeps (it feeds only [MASK])
SPECIAL_ENTITIES = ("[PAD]", "[UNK]", "[MASK]", "[MASK2]")


@dataclass
class Source:
    """Where a release was read: its folder, the Hub repository it is (or copies) and the revision."""

    folder: Path
    release: Release
    revision: str
    downloaded: bool


@dataclass
class StLayout:
    """What a sentence-transformers folder says about its model: the transformer's folder and its token limit."""

    transformer: Path
    max_seq_length: int | None
    normalize: bool


def fetch_source(method: str, source: str, revision: str | None = None, source_repo: str | None = None) -> Source:
    """The release of ``method`` at ``source``: a folder read in place, else a Hub repo id downloaded (the snapshot's
    commit is the revision). ``source_repo`` names the release a folder or a mirror copies; it is needed only when
    the method has several releases (PEARL: small and base)."""
    releases = {r.repo_id: r for r in releases_of(method)}
    folder = Path(source).expanduser()
    named = source_repo or (source if source in releases else None)
    if named is None and len(releases) == 1:
        named = next(iter(releases))
    if named not in releases:
        raise ValueError(
            f"Say which published checkpoint {source} is with --source-repo: one of {', '.join(releases)} "
            f"({named!r} is not a release of '{method}')."
        )
    if folder.is_dir():
        return Source(folder, releases[named], revision or "unknown (converted from a local folder)", False)
    if source.startswith((".", "/", "~")) or source.count("/") != 1:
        raise FileNotFoundError(f"{source} is neither a folder nor a Hub repo id (org/name).")
    snapshot = Path(snapshot_download(source, revision=revision))
    return Source(snapshot, releases[named], snapshot.name, True)


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """The tensors of ``model.safetensors``, else of ``pytorch_model.bin`` read with ``weights_only=True`` (tensors and
    plain containers only: a pickle that could run code is refused by torch)."""
    if (folder / "model.safetensors").is_file():
        return load_file(folder / "model.safetensors")
    if (folder / "pytorch_model.bin").is_file():
        return torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"{folder} holds neither model.safetensors nor pytorch_model.bin (sharded weights are "
                            "not supported).")  # fmt: skip


def load_weights(module: nn.Module, state: dict[str, torch.Tensor], prefix: str = "") -> list[str]:
    """Copy the tensors of ``state`` under ``prefix`` into ``module``; returns the keys under it left out.

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


def read_sentence_transformers(folder: Path) -> StLayout:
    """The transformer folder, token limit and normalisation of a sentence-transformers folder, checked to be one
    that mean pooling reproduces (a folder without ``modules.json`` is read as a plain transformers model, used with
    mean pooling as the PEARL authors do)."""
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


def _mean_pooled(folder: Path, model_class, config_class, **config_kwargs) -> tuple[Any, dict[str, Any]]:
    """A zoo model (BERT + masked mean pooling) holding the transformer of a sentence-transformers release."""
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


def convert_pearl(folder: Path) -> tuple[PearlModel, dict[str, Any]]:
    """PEARL's sentence-transformers release as a :class:`PearlModel` without character encoder and type head."""
    return _mean_pooled(folder, PearlModel, PearlConfig, use_char_encoder=False, type_labels=[])


def convert_phrase_bert(folder: Path) -> tuple[PhraseBertModel, dict[str, Any]]:
    """Phrase-BERT's sentence-transformers release as a :class:`PhraseBertModel`."""
    return _mean_pooled(folder, PhraseBertModel, PhraseBertConfig)


def convert_uctopic(folder: Path) -> tuple[UCTopicModel, dict[str, Any]]:
    """UCTopic's release (``luke.*`` + ``mlp.dense.*``, ``entity_vocab.json``) as a :class:`UCTopicModel` reading
    the span as LUKE's ``[MASK]`` entity, with the authors' tokenization and the special entities' rows only."""
    luke_config = AutoConfig.from_pretrained(folder)
    if luke_config.model_type != "luke":
        raise ValueError(f"{folder}: config.json says model_type {luke_config.model_type!r}; UCTopic's is 'luke'.")
    entity_vocab = json.loads((folder / "entity_vocab.json").read_text())
    if not isinstance(entity_vocab, dict) or "[MASK]" not in entity_vocab:
        raise ValueError(f"{folder}/entity_vocab.json has no [MASK] entity (a {{name: id}} mapping is expected).")
    kept = sorted((entity_vocab[name], name) for name in SPECIAL_ENTITIES if name in entity_vocab)
    state = read_weights(folder)
    table = "luke.entity_embeddings.entity_embeddings.weight"
    rows = state[table].shape[0]
    state[table] = state[table][[i for i, _ in kept]].clone()
    luke_config.entity_vocab_size = len(kept)
    new_ids = {name: j for j, (_, name) in enumerate(kept)}
    tokenizer = _luke_tokenizer(folder, new_ids)
    limit = luke_config.max_position_embeddings - luke_config.pad_token_id - 1  # RoBERTa-style position ids
    config = UCTopicConfig(
        backbone_config=luke_config,
        span_representation="entity",
        mask_entity_id=new_ids["[MASK]"],
        max_mention_length=tokenizer.max_mention_length,
        max_seq_length=min(tokenizer.model_max_length, limit),
        span_tokenization="segments",
    )
    model = UCTopicModel(config)
    left_out = load_weights(model.backbone, state, "luke.")
    left_out += load_weights(model.mlp, state, "mlp.")
    others = sorted(k for k in state if not k.startswith(("luke.", "mlp.", "lm_head.")))
    if others:
        raise ValueError(f"{folder}: weights outside luke.*, mlp.* and lm_head.*: {others[:3]}.")
    model.set_tokenizer(tokenizer)
    left_out += sorted({k.split(".")[0] + ".*" for k in state if k.startswith("lm_head.")})
    return model, {
        "entity table": f"{len(kept)} of {rows} rows kept ({', '.join(name for _, name in kept)})",
        "tokenization": "the authors' (`span_tokenization='segments'`)",
        "max_seq_length": f"{config.max_seq_length} tokens, max_mention_length {config.max_mention_length}",
        "left out": ", ".join(f"`{k}`" for k in left_out) or "nothing",
    }


def _luke_tokenizer(folder: Path, entity_vocab: dict[str, int]) -> LukeTokenizer:
    """LUKE's tokenizer of the release (``vocab.json``, ``merges.txt``), its entity vocabulary cut to the kept rows.

    Read by class, not through ``AutoTokenizer``: the release's ``tokenizer_config.json`` may name the authors' own
    subclass. An entity special the release lacks points at ``[UNK]`` (else ``[MASK]``), as LUKE's tokenizer needs
    all four; UCTopic never feeds them.
    """
    fallback = entity_vocab.get("[UNK]", entity_vocab["[MASK]"])
    small = {name: entity_vocab.get(name, fallback) for name in SPECIAL_ENTITIES}
    tokenizer = LukeTokenizer.from_pretrained(folder, entity_vocab=small)
    if not tokenizer.is_fast:  # pragma: no cover - transformers 4.x
        raise ValueError("UCTopic needs a fast LUKE tokenizer (transformers >= 5).")
    return tokenizer


CONVERTERS = {"pearl": convert_pearl, "phrase_bert": convert_phrase_bert, "uctopic": convert_uctopic}


def convert_release(
    method: str,
    source: str,
    output: str | Path,
    revision: str | None = None,
    source_repo: str | None = None,
    repo_id: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Convert the published checkpoint of ``method`` at ``source`` (a repo id or folder) into an export in
    ``output``; ``repo_id`` (default ``your-org/<output name>``) is where the card says it will be published."""
    output = Path(output)
    if output.exists() and any(output.iterdir()) and not overwrite:
        raise FileExistsError(f"{output} exists and is not empty; choose another folder or pass --overwrite.")
    found = fetch_source(method, source, revision, source_repo)
    model, facts = CONVERTERS[method](found.folder)
    model.eval()
    model.config.converted_from = {"repo_id": found.release.repo_id, "revision": found.revision}
    model.config._name_or_path = repo_id or found.release.repo_id
    if getattr(model.config, "backbone_config", None) is not None:
        model.config.backbone_config._name_or_path = found.release.repo_id
    if overwrite and output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True, exist_ok=True)
    write_model_files(model, output)
    write_release_card(output, found.release, found.revision, repo_id or f"your-org/{output.name}",
                       type(model).__name__, facts)  # fmt: skip
    return output


__all__ = ["CONVERTERS", "RELEASES", "convert_release", "fetch_source", "read_weights"]
