"""A stand-in of the published Phrase-BERT checkpoint, ``whaleloops/phrase-bert``, and the authors' use of it (see
:mod:`tests.hub.release_layouts` for what this module provides).

The release is a sentence-transformers folder with the transformer at its root and its weights pickled in
``pytorch_model.bin`` (a state dict with the ``embeddings.position_ids`` buffer that transformers 4.x saved), the
WordPiece tokenizer, ``modules.json`` (Transformer, Pooling), ``sentence_bert_config.json``,
``config_sentence_transformers.json``, ``1_Pooling/config.json`` (mean) and the card.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load

from tests.hub.release_layouts import sentence_transformers_files
from tests.recipes_offline.hub_files import bert_repo


def release() -> dict[str, bytes]:
    files = bert_repo(7)
    state = dict(load(files.pop("model.safetensors")))
    state["embeddings.position_ids"] = torch.arange(512).unsqueeze(0)  # a buffer transformers 4.x saved
    buffer = io.BytesIO()
    torch.save(state, buffer)
    card = "---\ntags:\n- sentence-transformers\n---\n# whaleloops/phrase-bert (stand-in)\n"
    return {**files, "pytorch_model.bin": buffer.getvalue(), **sentence_transformers_files(128, 32, card)}


STANDINS = {"whaleloops/phrase-bert": release}
PUSHED_AS = {"whaleloops/phrase-bert": "org/phrase-bert"}
INPUTS = ["complete control", "full power of the system", "the new york times", "machine learning models",
          "studies of climate change at the university"]  # fmt: skip


def reference(folder: Path, texts: list[str]) -> np.ndarray:
    """The authors' call, ``SentenceTransformer(repo).encode(phrases)`` (unnormalised), L2-normalised as the zoo's
    ``encode`` returns it by default."""
    from sentence_transformers import SentenceTransformer

    vectors = SentenceTransformer(str(folder), device="cpu").encode(texts)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
