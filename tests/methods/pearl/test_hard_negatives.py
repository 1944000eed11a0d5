"""Hard negatives on a toy phrase list with a fake encoder whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.methods.pearl.hard_negatives import (
    MiningEncoder,
    duplicate_key,
    edit_candidates,
    mine_hard_negatives,
)

pytestmark = pytest.mark.usefixtures("fresh_cache")  # a fresh cache per test, as in tests/data/

PHRASES = [
    "New York Times",
    "New York Post",
    "New York Time",
    "new york times",
    "the New York Times",
    "York Times",
    "banana",
]
ANGLE = {  # position on the unit circle: cosine = cos(difference)
    "New York Times": 0.0,
    "New York Time": 0.1,  # cos 0.995: a paraphrase-like candidate, above max_similarity
    "York Times": 1.0,  # cos 0.54
    "New York Post": 1.4,  # cos 0.17: the hardest negative
    "new york times": 0.0,
    "the New York Times": 0.0,
    "banana": 3.0,
}


def fake_encode(texts):
    return np.asarray([[np.cos(ANGLE[t]), np.sin(ANGLE[t])] for t in texts], dtype=np.float32)


def test_duplicate_key():
    assert duplicate_key("The United-States") == duplicate_key("united states") == "unitedstates"


def test_edit_candidates_exclude_duplicates():
    cands = edit_candidates(PHRASES, score_cutoff=70, progress=False)
    first = [PHRASES[j] for j in cands[0]]
    assert set(first) == {"New York Post", "New York Time", "York Times"}  # no case/article duplicates, no banana
    assert first[0] == "New York Time"  # most similar spelling first
    assert len(cands[6]) == 0


def test_known_answer():
    out = mine_hard_negatives(PHRASES, fake_encode, per_anchor=2, progress=False)
    assert out[0] == ["New York Post", "York Times"]  # lowest cosine first, "New York Time" is too similar
    assert out[6] == []  # no candidate: fewer negatives (fallback "none")
    excluded = mine_hard_negatives(PHRASES, fake_encode, exclude=[["New York Post"]] + [[]] * 6, progress=False)
    assert excluded[0] == ["York Times"]  # a paraphrase never comes back as a negative
    filled = mine_hard_negatives(PHRASES, fake_encode, fallback="random", seed=3, progress=False)
    assert len(filled[6]) == 2 and "banana" not in filled[6]
    assert filled == mine_hard_negatives(PHRASES, fake_encode, fallback="random", seed=3, progress=False)
    assert all(len(n) <= 2 for n in out)


def test_mean_pooling_encoder():
    encode = MiningEncoder(progress=False, batch_size=2)
    texts = ["The New York Times", "a", "New York Post is a newspaper"]
    emb = encode(texts)
    assert emb.shape == (3, 384)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert np.allclose(encode([texts[2]])[0], emb[2], atol=1e-5)  # order restored after length sorting
