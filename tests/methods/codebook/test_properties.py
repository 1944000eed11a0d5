"""Property tests of the codebook model's facets (issue 34) on the tiny model: arbitrary texts give K unit facets,
words and word weights that point into the text, or a ``ValueError`` that names the bad text or argument."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phrasezoo.zoo.registry import get_method
from tests.properties import SETTINGS, cells, definitely_bad, named_indices, phrases

texts_strategy = st.lists(st.one_of(phrases, cells), max_size=5)


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return get_method("codebook").tiny_model().eval()


def _names_a_bad_text(message: str, texts) -> bool:
    named = named_indices(message)
    return (not texts and "empty list" in message) or bool(named) and all(definitely_bad(texts[i]) for i in named)


@SETTINGS
@given(texts=texts_strategy, top_n=st.one_of(st.integers(-1, 40), st.none(), st.floats(0, 3)))
def test_facets_and_facet_words_or_a_named_error(model, texts, top_n):
    try:
        facets = model.facets(texts)
    except ValueError as error:
        assert _names_a_bad_text(str(error), texts), str(error)
        return
    k, dim = model.config.n_facets, model.config.word_dim
    assert facets.shape == (len(texts), k, dim), "rows in != rows out"
    np.testing.assert_allclose(np.linalg.norm(facets, axis=-1), 1.0, atol=1e-4)
    try:
        words = model.facet_words(texts, top_n=top_n)
    except ValueError as error:
        assert "top_n" in str(error)
        assert not (isinstance(top_n, int) and top_n >= 1)
        return
    assert len(words) == len(texts)
    for per_text in words:
        assert len(per_text) == k
        for per_facet in per_text:
            cosines = [c for _, c in per_facet]
            assert 1 <= len(per_facet) <= top_n and cosines == sorted(cosines, reverse=True)
            assert all(w not in ("<pad>", "<unk>", "<eos>") for w, _ in per_facet)


@SETTINGS
@given(texts=texts_strategy)
def test_word_importance_points_into_each_text(model, texts):
    try:
        result = model.word_importance(texts)
    except ValueError as error:
        assert _names_a_bad_text(str(error), texts), str(error)
        return
    assert len(result) == len(texts)
    for text, words in zip(texts, result):
        for item in words:
            assert text[item["start"] : item["end"]] == item["word"]
            assert item["weight"] >= 0 and np.isfinite(item["weight"])


@SETTINGS
@given(document=st.one_of(st.lists(phrases, min_size=1, max_size=6).map(". ".join), cells), n=st.integers(-1, 5))
def test_summaries_pick_sentences_of_the_document(model, document, n):
    try:
        summary = model.summarize(document, n=n)
    except ValueError as error:
        assert any(w in str(error) for w in ("n must", "document", "sentences", "vocabulary")), str(error)
        return
    sentences = summary["all_sentences"]
    assert isinstance(document, str) and n >= 1
    assert len(summary["indices"]) == len(set(summary["indices"])) <= min(n, len(sentences))
    assert [sentences[i] for i in summary["indices"]] == summary["sentences"]
