"""Stand-ins of the published PEARL checkpoints, ``Lihuchen/pearl_small`` and ``Lihuchen/pearl_base``, and the
authors' use of them (see :mod:`tests.hub.release_layouts` for what this module provides).

Each release is a sentence-transformers folder with the transformer at its root: ``config.json`` of a ``BertModel``,
``model.safetensors`` (the pooler included), the WordPiece tokenizer, ``modules.json`` (Transformer, Pooling),
``sentence_bert_config.json`` (512 tokens), ``config_sentence_transformers.json``, ``1_Pooling/config.json`` (mean)
and the card. Two sizes, as the releases (E5-small-v2 and E5-base-v2 size), tiny here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch.nn.functional as F

from tests.hub.release_layouts import masked_mean, sentence_transformers_files
from tests.recipes_offline.hub_files import bert_repo

CARD = "---\nlicense: apache-2.0\ntags:\n- sentence-transformers\n---\n# PEARL (stand-in)\n"


def release(seed: int, hidden: int) -> dict[str, bytes]:
    files = bert_repo(seed, hidden_size=hidden, intermediate_size=2 * hidden)
    return {**files, **sentence_transformers_files(512, hidden, CARD)}


STANDINS = {"Lihuchen/pearl_small": lambda: release(5, 32), "Lihuchen/pearl_base": lambda: release(6, 48)}
PUSHED_AS = {"Lihuchen/pearl_small": "org/pearl-small", "Lihuchen/pearl_base": "org/pearl-base"}
INPUTS = ["The New York Times", "new york post", "machine learning models", "Paris!",
          "the trade agreement signed in london", "studies of climate change at the university"]  # fmt: skip
#: the brief's line, verbatim, on the converted PEARL-small stand-in pushed as org/pearl-small
USER_CODE = """
from transformers import AutoModel
model = AutoModel.from_pretrained("org/pearl-small", trust_remote_code=True)
emb = model.encode(["The New York Times", "NYTimes", "New York Post"])
"""
USER_REPO = "org/pearl-small"


def reference(folder: Path, texts: list[str]) -> np.ndarray:
    """The authors' use: ``AutoModel`` + attention-masked mean pooling (max_length 512) + L2 normalisation."""
    return F.normalize(masked_mean(folder, texts), dim=-1).numpy()
