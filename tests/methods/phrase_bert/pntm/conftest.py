"""A toy corpus with three planted topics and a toy encoder that knows them (fast, deterministic)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from phrasezoo.methods.phrase_bert.pntm import Vocabulary

PLANTED = {
    "sport": ["football", "goal", "match", "team", "player", "league", "coach", "stadium"],
    "music": ["guitar", "album", "song", "band", "concert", "singer", "melody", "drum"],
    "space": ["rocket", "orbit", "planet", "astronaut", "moon", "launch", "galaxy", "telescope"],
}
PHRASES = ["football match", "rock band", "space rocket"]


class ToyEncoder:
    """Mean of word vectors; each word's vector is its topic's centre plus noise, so topics are recoverable."""

    def __init__(self, dim: int = 16, seed: int = 0):
        rng = np.random.default_rng(seed)
        centres = {topic: rng.normal(size=dim) for topic in PLANTED}
        self.vectors = {"rock": rng.normal(size=dim), "space": centres["space"] + 0.5 * rng.normal(size=dim)}
        for topic, words in PLANTED.items():
            for word in words:
                self.vectors[word] = centres[topic] + 0.5 * rng.normal(size=dim)
        self.dim = dim

    def encode(self, texts):
        rows = []
        for text in texts:
            known = [self.vectors[w] for w in text.lower().split() if w in self.vectors]
            rows.append(np.mean(known, axis=0) if known else np.ones(self.dim))
        return np.asarray(rows, dtype=np.float32)


def planted_documents(n: int = 240, words: int = 12, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` documents, each drawn from one planted topic (round robin); returns documents and their topics."""
    rng = random.Random(seed)
    topics = [list(PLANTED)[i % 3] for i in range(n)]
    return [" ".join(rng.choices(PLANTED[t], k=words)) for t in topics], topics


@pytest.fixture
def toy_encoder():
    return ToyEncoder()


@pytest.fixture
def toy_corpus():
    return planted_documents()


@pytest.fixture
def toy_vocabulary():
    return Vocabulary.from_terms([w for words in PLANTED.values() for w in words] + PHRASES)
