"""NPMI, diversity and the lexical-diversity metrics on hand-computed examples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from phrasezoo.methods.phrase_bert.pntm.metrics import (
    DocumentIndex,
    levenshtein,
    lexical_diversity,
    longest_common_substring,
    nearest_neighbours,
    neighbour_lexical_diversity,
    npmi,
    sample_query_phrases,
    token_diversity,
    topic_coherence,
    topic_diversity,
)


@pytest.fixture
def index():
    return DocumentIndex(["a b", "a b", "A, c!", "d", "new york is big", "york new"])


def test_npmi_by_hand(index):
    # P(a) = 3/6, P(b) = 2/6, P(a, b) = 2/6: log((1/3) / (1/2 * 1/3)) / -log(1/3)
    assert npmi(index, "a", "b") == pytest.approx(math.log(2) / math.log(3))
    assert npmi(index, "b", "d") == -1.0
    assert npmi(index, "a", "never") is None
    assert npmi(DocumentIndex(["x y", "x y"]), "x", "y") == 1.0


def test_phrases_match_contiguous_tokens(index):
    assert index.containing("new york") == {4}
    assert index.containing("York  New") == {5}
    assert index.containing("a") == {0, 1, 2}


def test_topic_coherence_and_diversity(index):
    result = topic_coherence([["a", "b", "d"], ["a", "unknown"]], index, top_n=3)
    assert result["per_topic"][0] == pytest.approx((math.log(2) / math.log(3) - 2) / 3)
    assert math.isnan(result["per_topic"][1]) and result["terms_not_in_corpus"] == 1
    assert result["npmi"] == pytest.approx(result["per_topic"][0])
    assert topic_diversity([["a", "b"], ["b", "c"]], top_n=2) == 0.75
    assert token_diversity([["new york", "york"], ["new"]]) == 0.5


def test_string_metrics():
    assert longest_common_substring("pulls the trigger", "pulled the trigger") == len(" the trigger")
    assert longest_common_substring("", "abc") == 0
    assert levenshtein("kitten", "sitting") == 3
    metrics = lexical_diversity("pulls the trigger", ["pulled the trigger"])
    assert metrics["new_tokens"] == pytest.approx(1 / 3)  # "pulled" is new; 3 query tokens
    assert metrics["lcs_precision"] == pytest.approx(100 * 12 / 18)
    assert metrics["levenshtein"] == 2
    with pytest.raises(ValueError):
        lexical_diversity("x", [])


def test_nearest_neighbours_and_their_diversity():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    assert nearest_neighbours(vectors, [0, 3], k=2) == [[1, 2], [2, 1]]
    terms = ["big house", "large home", "big houses", "cat"]
    result = neighbour_lexical_diversity(terms, vectors, [0], k=1)
    assert result == lexical_diversity("big house", ["large home"])
    assert sample_query_phrases(terms, ["phrase", "phrase", "phrase", "word"], n=2, seed=0) in ([0, 1], [0, 2], [1, 2])
