"""Documents and vocabulary building on hand-made inputs."""

from __future__ import annotations

from collections import Counter

import pytest

from phrasezoo.methods.phrase_bert.pntm.corpus import Vocabulary, build_vocabulary, documents_from_sentences, tokenize


def test_tokenize():
    assert tokenize("The song's composition, 1999!") == ["the", "song", "s", "composition", "1999"]


def test_documents_pack_sentences_per_document():
    doc_ids = [0, 0, 0, 1]
    sentences = ["a b c", "d e", "f g h i", "j k"]
    assert documents_from_sentences(doc_ids, sentences, max_words=5, min_words=2) == ["a b c d e", "f g h i", "j k"]
    assert documents_from_sentences(doc_ids, sentences, max_words=5, min_words=3) == ["a b c d e", "f g h i"]


def test_build_vocabulary_filters_words_and_phrases():
    sentences = ["The big house stood there.", "A big house, 1999.", "The big house burned.", "Big news."]
    phrases = Counter({"the big house": 3, "big": 5, "of the": 4, "x y z a b c d": 3, "rare phrase": 1})
    vocabulary = build_vocabulary(sentences, phrases, min_word_count=1, n_sentences=2, seed=0)
    words = [t for t, k in zip(vocabulary.terms, vocabulary.kinds) if k == "word"]
    assert words == ["big", "house"]  # seen more than once, not stop words, not numbers
    assert [t for t, k in zip(vocabulary.terms, vocabulary.kinds) if k == "phrase"] == ["the big house"]
    assert sum(k == "sentence" for k in vocabulary.kinds) == 2
    assert vocabulary.counts[:2] == [4, 3]


def test_vocabulary_validation():
    vocabulary = Vocabulary.from_terms(["cat", "big  house", "cat", " "])
    assert vocabulary.terms == ["cat", "big house"] and vocabulary.kinds == ["word", "phrase"]
    assert Vocabulary.from_dict(vocabulary.to_dict()) == vocabulary
    with pytest.raises(ValueError, match="unique"):
        Vocabulary(["a", "a"], ["word", "word"])
    with pytest.raises(ValueError, match="kinds"):
        Vocabulary(["a"], ["noun"])
