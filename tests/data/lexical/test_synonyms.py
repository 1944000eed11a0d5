"""Synonym table: vector neighbours on a tiny hand-made table, filters, WordNet part (when installed)."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.data.lexical.synonyms import SynonymTable, WordNetFilter, is_trivial_variant, proper_nouns, vocabulary
from phrasezoo.resources import WordVectors


@pytest.fixture
def vectors() -> WordVectors:
    rows = {
        "the": [1.0, 0.02, 0.0, 0.0],  # a stop word right next to "big": never a synonym
        "big": [1.0, 0.0, 0.0, 0.0],
        "large": [0.98, 0.1, 0.0, 0.0],
        "huge": [0.95, 0.2, 0.0, 0.05],
        "bigger": [1.0, -0.03, 0.0, 0.0],  # an inflection: never a synonym
        "car": [0.0, 0.0, 1.0, 0.0],
        "auto": [0.0, 0.05, 0.97, 0.1],
        "small": [0.3, 1.0, 0.0, 0.0],
        "a1b2": [1.0, 0.01, 0.0, 0.0],  # not alphabetic: not in the neighbour pool
    }
    return WordVectors(words=list(rows), vectors=np.asarray(list(rows.values()), dtype=np.float32))


def test_vector_neighbours(vectors):
    table = SynonymTable.build(
        ["big", "car", "small", "the"], vectors=vectors, wordnet=None, threshold=0.9, mutual_k=None
    )
    assert table.get("big") == ["large", "huge"]  # by decreasing cosine; not itself, "bigger", "the", "a1b2"
    assert table.get("BIG") == table.get("big")  # case-insensitive lookup
    assert table.get("car") == ["auto"]
    assert table.get("small") == [] and "small" not in table
    assert table.get("the") == []  # stop words are not queried
    strict = SynonymTable.build(["big"], vectors=vectors, wordnet=None, threshold=0.99, mutual_k=None)
    assert strict.get("big") == ["large"]
    pool = SynonymTable.build(["big"], vectors=vectors, wordnet=None, threshold=0.9, max_candidates=3, mutual_k=None)
    assert pool.get("big") == ["large"]  # "huge" is outside the 3 most frequent words


def test_mutual_neighbours_and_proper_nouns(vectors):
    mutual = SynonymTable.build(["big"], vectors=vectors, wordnet=None, threshold=0.9, top_k=3, mutual_k=1)
    # "huge"'s nearest pool word is "large", not "big": a one-way neighbour is dropped
    assert mutual.get("big") == ["large"]
    names = SynonymTable.build(["car"], vectors=vectors, wordnet=None, threshold=0.9, proper_nouns=["car"])
    assert names.get("car") == []


def test_helpers(tmp_path, vectors):
    assert is_trivial_variant("city", "cities") and is_trivial_variant("big", "bigger")
    assert is_trivial_variant("Left-wing", "left wing") and not is_trivial_variant("big", "large")
    assert vocabulary(["the New York Times", "big 2"]) == sorted(
        ["big", "new", "new york", "new york times", "the", "the new", "the new york", "times", "york", "york times"]
    )
    assert proper_nouns(["New York", "new ideas", "Times"]) == {"york", "times"}
    table = SynonymTable.build(["big"], vectors=vectors, wordnet=None, threshold=0.9, mutual_k=None)
    table.save(tmp_path / "syn.json")
    assert SynonymTable.load(tmp_path / "syn.json").synonyms == table.synonyms


def test_wordnet_synonyms_and_filter(wordnet):
    if wordnet is None:
        pytest.skip("WordNet is not installed (optional)")
    table = SynonymTable.build(["new york", "difficult", "united states"], vectors=None)
    assert "New York City" in table.get("new york")
    assert table.get("difficult")[0] == "hard"
    assert "USA" in table.get("united states")
    check = WordNetFilter(wordnet)
    assert check.compatible("car", "automobile")
    assert check.compatible("dog", "canine")  # an ancestor
    assert not check.compatible("red", "blue")
    assert not check.compatible("increase", "decrease")
    assert not check.compatible("flute", "clarinet")
    assert check.same_lemma("sell", "sold")
