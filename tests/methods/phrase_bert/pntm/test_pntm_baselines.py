"""The LDA baseline: phrase-aware counting on a hand example, topics on the planted corpus."""

from __future__ import annotations

from phrasezoo.methods.phrase_bert.pntm.baselines import LDABaseline, document_term_matrix, segment
from phrasezoo.methods.phrase_bert.pntm.corpus import Vocabulary

from .conftest import PLANTED


def test_segment_prefers_the_longest_phrase():
    phrases = {("new", "york"): 5, ("new", "york", "times"): 6}
    words = {"new": 0, "times": 2}
    assert segment(["new", "york", "times", "is", "new"], phrases, words, 3) == [6, 0]
    assert segment(["york", "new", "york"], phrases, words, 3) == [5]


def test_document_term_matrix_counts_phrases_as_tokens():
    vocabulary = Vocabulary.from_terms(["new", "york", "times", "new york", "new york times"])
    counts = document_term_matrix(["New York Times is new", "york, york"], vocabulary).toarray()
    assert counts.tolist() == [[1, 0, 0, 0, 1], [0, 2, 0, 0, 0]]


def test_lda_recovers_planted_topics(toy_corpus, toy_vocabulary):
    documents, _ = toy_corpus
    lda = LDABaseline(3, toy_vocabulary, max_iter=30, seed=0).fit(documents)
    found = []
    for topic in lda.get_topics(top_n=5):
        owners = {name for name, words in PLANTED.items() for term, _ in topic if term in words}
        assert len(owners) == 1
        found.append(owners.pop())
    assert sorted(found) == sorted(PLANTED)
    assert lda.transform(documents[:3]).shape == (3, 3)
    assert lda.term_vectors().shape == (len(toy_vocabulary), 3)
