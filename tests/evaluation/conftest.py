"""Fixtures for the evaluation suite's tests: hand-set fake encoders."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.encoders import SIMILARITY, TOKENS, VECTORS, Encoder

# benchmarks_dir, the quiet environment and the isolated cache come from tests/conftest.py


class FakeEncoder(Encoder):
    """Vectors set by hand: ``vectors[text]``; unknown strings get a deterministic random unit vector.

    ``tokens[text]`` (optional) gives ``(embeddings, offsets)`` for ``encode_tokens``. ``calls`` records what
    :meth:`_encode` was asked for, to check the cache.
    """

    def __init__(self, vectors: dict[str, list[float]] | None = None, dim: int = 4, tokens: dict | None = None):
        super().__init__(name="fake", revision="test", progress=False)
        self.vectors = {k: np.asarray(v, dtype=np.float32) for k, v in (vectors or {}).items()}
        self.dim = dim if not self.vectors else len(next(iter(self.vectors.values())))
        self.tokens = tokens or {}
        self.calls: list[list[str]] = []
        caps = {VECTORS, SIMILARITY}
        if self.tokens:
            caps.add(TOKENS)
        self.capabilities = frozenset(caps)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            if text in self.vectors:
                rows.append(self.vectors[text])
            else:
                seed = sum(ord(c) * (i + 1) for i, c in enumerate(text)) % (2**32)
                rows.append(np.random.default_rng(seed).normal(size=self.dim))
        return np.asarray(rows, dtype=np.float32)

    def _encode_tokens(self, texts: list[str]) -> list[dict[str, np.ndarray]]:
        return [{"embeddings": self.tokens[t][0], "offsets": self.tokens[t][1]} for t in texts]


@pytest.fixture
def fake_encoder():
    return FakeEncoder
