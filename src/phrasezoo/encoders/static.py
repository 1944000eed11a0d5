"""Static embeddings (model2vec): a text's vector is the mean of its tokens' rows of one embedding table.

``baseline:potion-base-8m`` is potion-base-8M (256-d, distilled from bge-base-en-v1.5, MIT; DESIGN.md, wave 4),
about 150 times faster than MiniLM on a CPU: no transformer runs, only a tokenizer and a table look-up. It is the
hybrid matcher's cheap third channel. The folder layout is model2vec's / sentence-transformers' ``StaticEmbedding``
(``model.safetensors`` with an ``embeddings`` table, ``tokenizer.json``); tokens are taken without special tokens and
the mean is L2-normalised, as model2vec does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from .base import SIMILARITY, VECTORS, Encoder, l2_normalize, weights_digest

MAX_TOKENS = 512


class StaticEncoder(Encoder):
    """Mean of token embeddings from a static table, L2-normalised (model2vec's ``encode``)."""

    capabilities = frozenset({VECTORS, SIMILARITY})

    def __init__(self, folder: str | Path, name: str | None = None, progress: bool = True) -> None:
        folder = Path(folder)
        if not (folder / "model.safetensors").exists() or not (folder / "tokenizer.json").exists():
            raise FileNotFoundError(f"{folder} is not a static-embedding folder (model.safetensors, tokenizer.json).")
        self.table = load_file(str(folder / "model.safetensors"))["embeddings"].astype(np.float32)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        unk = self.tokenizer.token_to_id("[UNK]")
        self.unk = -1 if unk is None else unk
        super().__init__(name or f"baseline:{folder.name}", revision=weights_digest(folder), progress=progress)

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), 4096):
            batch = self.tokenizer.encode_batch(texts[start : start + 4096], add_special_tokens=False)
            ids = [[t for t in enc.ids[:MAX_TOKENS] if t != self.unk] for enc in batch]
            lengths = np.array([len(row) for row in ids])
            filled = np.flatnonzero(lengths)  # a text with no known token keeps a zero vector
            if filled.size:
                flat = np.fromiter((t for row in ids for t in row), dtype=np.int64, count=int(lengths.sum()))
                offsets = np.r_[0, np.cumsum(lengths[filled])[:-1]]
                sums = np.add.reduceat(self.table[flat], offsets, axis=0)
                out[start + filled] = sums / lengths[filled, None]
        return l2_normalize(out)
