"""The PNTM facade: planted topics are recovered; transform, save/load and errors behave."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from phrasezoo.methods.phrase_bert.pntm import PNTM

from .conftest import PLANTED


@pytest.fixture
def fitted(toy_encoder, toy_corpus, toy_vocabulary):
    documents, _ = toy_corpus
    return PNTM(encoder=toy_encoder, n_topics=3, epochs=25, seed=0, progress=False).fit(documents, toy_vocabulary)


def test_planted_topics_are_recovered(fitted, toy_corpus):
    owners = []
    for topic in fitted.get_topics(top_n=6, kinds=("word",)):
        found = {name for name, words in PLANTED.items() for term, _ in topic if term in words}
        assert len(found) == 1, topic
        owners.append(found.pop())
    assert sorted(owners) == sorted(PLANTED)
    documents, labels = toy_corpus
    assigned = fitted.transform(documents).argmax(1)
    for name in PLANTED:  # every planted topic maps to one learned topic
        ids = Counter(int(a) for a, label in zip(assigned, labels) if label == name)
        assert ids.most_common(1)[0][1] / sum(ids.values()) > 0.95
    assert fitted.history[-1]["hinge"] < fitted.history[0]["hinge"]


def test_topics_mix_words_and_phrases(fitted):
    terms = [t for topic in fitted.get_topics(top_n=12) for t, _ in topic]
    assert "football match" in terms
    scores = [s for _, s in fitted.get_topic(0, top_n=5)]
    assert scores == sorted(scores, reverse=True)
    mixture = fitted.transform(["football goal team"])
    assert mixture.shape == (1, 3) and mixture.sum() == pytest.approx(1.0, abs=1e-5)
    assert fitted.topic_sizes(fitted.transform(["moon orbit", "song album"])).sum() == pytest.approx(1.0)


def test_save_load_round_trip(fitted, toy_encoder, tmp_path):
    fitted.save(tmp_path / "pntm")
    assert sorted(p.name for p in (tmp_path / "pntm").iterdir()) == ["pntm.json", "pntm.safetensors"]
    loaded = PNTM.load(tmp_path / "pntm")
    assert loaded.get_topics(top_n=5) == fitted.get_topics(top_n=5)
    vectors = toy_encoder.encode(["moon orbit rocket", "guitar song"])
    np.testing.assert_allclose(loaded.transform(document_vectors=vectors), fitted.transform(document_vectors=vectors))
    with pytest.raises(ValueError, match="no encoder"):
        loaded.transform(["moon orbit"])
    with_encoder = PNTM.load(tmp_path / "pntm", encoder=toy_encoder)
    np.testing.assert_allclose(with_encoder.transform(["moon orbit"]), fitted.transform(["moon orbit"]), atol=1e-6)
    assert loaded.config() == {**fitted.config(), "encoder": None}


def test_errors(toy_encoder, tmp_path):
    model = PNTM(encoder=toy_encoder, n_topics=2, progress=False)
    with pytest.raises(ValueError, match="not trained"):
        model.get_topics()
    with pytest.raises(ValueError, match="at least two"):
        model.fit(["only one document"], ["word"])
    with pytest.raises(FileNotFoundError):
        PNTM.load(tmp_path)
    fitted = model.fit(["moon orbit", "song album", "goal team"], ["moon", "song", "goal"])
    with pytest.raises(ValueError, match="kinds"):
        fitted.get_topics(kinds=("sentence",))
    with pytest.raises(ValueError, match="does not exist"):
        fitted.get_topic(5)
