"""Anything that embeds, behind one interface: zoo folders, zoo models in memory, ``baseline:<id>`` mean pooling
and the ``baseline:char-jaccard`` string similarity. :func:`load_encoder` is the one loader; see :mod:`.base`.

``import phrasezoo.encoders`` does not import torch: the encoders that run torch models
(:class:`MeanPoolingEncoder`, :class:`ModelEncoder`, in :mod:`.torch_encoders`) are imported on first use, so the
similarity-only and static baselines run without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

from phrasezoo.resources import potion_dir, resolve_backbone

from .backends import BACKENDS, MissingRuntimeError, split_backend
from .base import (
    DEFAULT_BATCH_SIZE,
    MENTIONS,
    SIMILARITY,
    TOKENS,
    VECTORS,
    Encoder,
    l2_normalize,
    model_digest,
    model_display_name,
    show_progress,
    span_mean,
    supported,
    weights_digest,
)
from .char_jaccard import CharJaccardEncoder
from .nomic import nomic_dir

__all__ = [
    "BACKENDS",
    "MissingRuntimeError",
    "DEFAULT_BATCH_SIZE",
    "MENTIONS",
    "SIMILARITY",
    "SPEC_HELP",
    "TOKENS",
    "VECTORS",
    "CharJaccardEncoder",
    "Encoder",
    "MeanPoolingEncoder",
    "ModelEncoder",
    "l2_normalize",
    "load_encoder",
    "model_digest",
    "model_display_name",
    "show_progress",
    "span_mean",
    "supported",
    "weights_digest",
]
#: the encoders of :mod:`.torch_encoders`, read from it on first use (PEP 562)
TORCH_ENCODERS = ("MeanPoolingEncoder", "ModelEncoder")


def _torch_encoders() -> ModuleType:
    """:mod:`.torch_encoders`, imported when an encoder that runs a torch model is first asked for."""
    from . import torch_encoders  # lazy: keeps torch and transformers off 'import phrasezoo.encoders'

    return torch_encoders


def __getattr__(name: str) -> Any:
    if name in TORCH_ENCODERS:
        return getattr(_torch_encoders(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------------------------- spec strings
STATIC_MODELS = ("potion-base-8m", "potion-base-8M")
NOMIC_MODELS = ("nomic-v1.5", "nomic-embed-text-v1.5")
SPEC_HELP = """\
model specs:
  baseline:minilm-l6          raw all-MiniLM-L6-v2 (embedded default), masked mean pooling over the last layer
  baseline:<hub id or path>   any transformers model with masked mean pooling
  baseline:nomic-v1.5         nomic-embed-text-v1.5 (137M, from its GGUF on the package index; mean pooling, fp32)
  baseline:potion-base-8m     potion-base-8M static embeddings (model2vec; ~150x faster than MiniLM, weaker)
  baseline:char-jaccard       character 3-gram Jaccard similarity (PEARL's "String Distance"; similarity only)
  baseline:<model>@onnx-int8  the same mean-pooling model run by ONNX Runtime in int8, weights per channel and
                              activations per token (~2.4x faster on CPU, cosine ~0.997 to the fp32 vectors; the
                              default matcher's encoder is baseline:minilm-l6@onnx-int8); @torch: plain
  <folder>                    an exported zoo model (AutoModel.from_pretrained(folder, trust_remote_code=True))
  <config name>               outputs/<config name>/ of a trained and exported recipe, e.g. pearl-mini"""


def load_encoder(
    spec: Any,
    name: str | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    device: str | None = None,
) -> Encoder:
    """Build an :class:`Encoder` from a spec string, a model object with ``encode``, or an encoder (returned as is).

    See :data:`SPEC_HELP` for the spec strings. ``name`` overrides the name written to the results file.
    """
    batch_size = batch_size or DEFAULT_BATCH_SIZE
    if isinstance(spec, Encoder):
        if name:
            spec.name = name
        return spec
    if not isinstance(spec, (str, os.PathLike)):
        return _torch_encoders().ModelEncoder(spec, name=name, batch_size=batch_size, progress=progress)
    spec = os.fspath(spec)
    spec, backend = split_backend(spec)
    if backend != "torch":
        return _load_fast(spec, backend, name=name, batch_size=batch_size, progress=progress, device=device)
    if spec.startswith("baseline:"):
        target = spec[len("baseline:") :]
        if target in NOMIC_MODELS:
            return _torch_encoders().MeanPoolingEncoder(
                str(nomic_dir()), name=name or spec, batch_size=batch_size, device=device, progress=progress
            )
        if target in STATIC_MODELS:
            from .static import StaticEncoder  # lazy: tokenizers and safetensors, for the static baseline only

            return StaticEncoder(potion_dir(), name=name or spec, progress=progress)
        if target in ("char-jaccard", "char_jaccard", "jaccard"):
            encoder = CharJaccardEncoder(progress=progress)
            encoder.name = name or encoder.name
            return encoder
        return _torch_encoders().MeanPoolingEncoder(
            resolve_backbone(target), name=name or spec, batch_size=batch_size, device=device, progress=progress
        )
    path = Path(spec)
    if not path.exists() and "/" not in spec and (Path("outputs") / spec).is_dir():
        path = Path("outputs") / spec
    if path.is_dir():
        return _load_folder(path, name=name, batch_size=batch_size, progress=progress, device=device)
    if "/" not in spec and not path.suffix:
        raise FileNotFoundError(
            f"No exported model at outputs/{spec}/ (looked relative to {Path.cwd()}). Train and export it first: "
            f"`phrasezoo train {spec}` (or `accelerate launch train.py hub_configs/{spec}.yaml`), or pass a model "
            f"folder.\n{SPEC_HELP}"
        )
    raise FileNotFoundError(f"Model folder {spec} does not exist.\n{SPEC_HELP}")


def _load_fast(spec: str, backend: str, name: str | None, batch_size: int, progress: bool,
               device: str | None) -> Encoder:  # fmt: skip
    """``baseline:<model>@onnx-int8``: the int8 ONNX Runtime copy of a mean-pooling baseline (CPU only)."""
    from .onnx_int8 import OnnxInt8Encoder  # lazy: torch, transformers and onnx, for this backend only

    target = spec[len("baseline:") :] if spec.startswith("baseline:") else None
    if target is None or target in STATIC_MODELS or target in ("char-jaccard", "char_jaccard", "jaccard"):
        raise ValueError(f"The {backend} backend runs transformer baselines only (baseline:<model>@{backend}), "
                         f"not {spec!r}.")  # fmt: skip
    if device not in (None, "cpu"):
        raise ValueError(f"The {backend} backend runs on the CPU; drop the @{backend} suffix to use {device}.")
    path = str(nomic_dir()) if target in NOMIC_MODELS else resolve_backbone(target)
    encoder = OnnxInt8Encoder(path, name=spec, batch_size=batch_size, progress=progress)
    if name:
        encoder.name = name
    return encoder


def _load_folder(path: Path, name: str | None, batch_size: int, progress: bool, device: str | None) -> Encoder:
    """An exported zoo folder through ``trust_remote_code``; a plain transformers folder falls back to mean pooling."""
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"{path} has no config.json; it is not an exported model folder.\n{SPEC_HELP}")
    return _torch_encoders().folder_encoder(path, name, batch_size, progress, device)
