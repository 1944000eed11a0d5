"""What the tests of ``phrasezoo convert`` share: the file layouts releases use, and where each method's stand-ins are.

A method whose paper published weights keeps, in ``tests/methods/<name>/release_standins.py``, tiny random stand-ins
of its releases laid out file for file as the releases are, and a reference computation of the authors' forward
pass written from their code (not from the converter). That module defines:

- ``STANDINS``: ``{release repo id: () -> {path: bytes}}``, the stand-ins' files;
- ``PUSHED_AS``: ``{release repo id: repo id}``, where the tests push each converted export;
- ``INPUTS``: what the tests encode, and ``reference(folder, inputs) -> array``: the authors' vectors for them;
- optionally ``USER_CODE``: lines a user runs verbatim in a fresh process (they must set ``emb``), and
  ``USER_REPO``, the pushed repo id they load (one of ``PUSHED_AS``).

:func:`standin_modules` finds them through the registry, so the generic tests (``tests/hub/test_convert.py``) name no
method.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import torch
from transformers import AutoModel, AutoTokenizer

from phrasezoo.zoo.registry import list_methods


def standin_modules() -> dict[str, ModuleType]:
    """``{method: tests.methods.<method>.release_standins}`` for every method that has stand-ins of its releases."""
    found = {}
    for name in list_methods():
        module_name = f"tests.methods.{name}.release_standins"
        if importlib.util.find_spec(module_name) is not None:
            found[name] = importlib.import_module(module_name)
    return found


def write_files(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def sentence_transformers_files(max_seq_length: int, dim: int, card: str) -> dict[str, bytes]:
    """The files a sentence-transformers 2.x save adds around a transformer at the folder's root (mean pooling):
    ``modules.json``, ``sentence_bert_config.json``, ``config_sentence_transformers.json``,
    ``1_Pooling/config.json`` and the card."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    pooling = {"word_embedding_dimension": dim, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}  # fmt: skip
    return {
        "modules.json": json.dumps(modules, indent=2).encode(),
        "sentence_bert_config.json": json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}).encode(),
        "config_sentence_transformers.json": json.dumps({"__version__": {"sentence_transformers": "2.2.2"}}).encode(),
        "1_Pooling/config.json": json.dumps(pooling, indent=2).encode(),
        "README.md": card.encode(),
    }


def masked_mean(folder: Path, texts: list[str], max_length: int = 512) -> torch.Tensor:
    """Mean pooling as model cards of sentence encoders write it without sentence-transformers: the repository's
    ``AutoTokenizer`` and ``AutoModel``, the last hidden states averaged over the attention mask."""
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    batch = tokenizer(texts, max_length=max_length, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"][..., None].to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1)
