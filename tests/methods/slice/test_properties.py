"""Property tests of SLICE's span search and token vectors (issue 34) on the tiny model: arbitrary queries,
passages and options give spans that really are in the passages, or a ``ValueError`` that names what is wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.methods.slice.test_model import tiny_slice_model
from tests.properties import SETTINGS, cells, definitely_bad, named_indices, phrases

#: passages: sentences of known words (several spans each), or anything a user may paste
passages_strategy = st.lists(
    st.one_of(st.lists(phrases, min_size=1, max_size=4).map(" . ".join), cells), min_size=0, max_size=4
)
ARGUMENT_WORDS = ("query", "passages", "min_words", "max_words", "top_k", "threshold", "batch_size")


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return tiny_slice_model()


@SETTINGS
@given(
    query=st.one_of(phrases, cells),
    passages=passages_strategy,
    top_k=st.one_of(st.integers(-1, 6), st.none()),
    min_words=st.one_of(st.none(), st.integers(-1, 5)),
    max_words=st.one_of(st.none(), st.integers(-1, 8)),
    threshold=st.one_of(st.none(), st.floats(-1.5, 1.5), st.just(math.nan)),
)
def test_find_spans_returns_spans_of_the_passages_or_names_the_bad_argument(
    model, query, passages, top_k, min_words, max_words, threshold
):
    try:
        matches = model.find_spans(
            query, passages, top_k=top_k, min_words=min_words, max_words=max_words, threshold=threshold
        )
    except ValueError as error:
        message = str(error)
        assert any(word in message for word in ARGUMENT_WORDS), message
        if message.startswith("Bad passages") and passages:
            named = named_indices(message)
            assert named and all(definitely_bad(passages[i]) for i in named), message
        return
    assert isinstance(query, str) and not definitely_bad(query)
    assert passages and not any(definitely_bad(p) for p in passages)
    low = model.config.min_span_words if min_words is None else min_words
    high = model.config.max_span_words if max_words is None else max_words
    assert len(matches) <= top_k
    cosines = [m.cosine for m in matches]
    assert cosines == sorted(cosines, reverse=True)
    for match in matches:
        passage = passages[match.passage_index]
        assert passage[match.char_start : match.char_end] == match.text and match.text.strip()
        assert low <= match.word_end - match.word_start <= high
        assert -1.0001 <= match.cosine <= 1.0001 and math.isfinite(match.cosine)
        assert threshold is None or match.cosine >= threshold - 1e-6


@SETTINGS
@given(texts=st.lists(st.one_of(phrases, cells), max_size=5), batch_size=st.integers(1, 3))
def test_encode_tokens_gives_every_text_its_tokens(model, texts, batch_size):
    try:
        results = model.encode_tokens(texts, batch_size=batch_size)
    except ValueError as error:
        named = named_indices(str(error))
        assert (not texts and "empty list" in str(error)) or (named and all(definitely_bad(texts[i]) for i in named))
        return
    assert len(results) == len(texts), "rows in != rows out"
    for text, result in zip(texts, results):
        offsets, words = result["offsets"], result["word_ids"]
        assert len(result["embeddings"]) == len(offsets) == len(words)
        assert np.isfinite(result["embeddings"]).all()
        assert all(0 <= a < b <= len(text) for a, b in offsets.tolist())
        assert list(words) == sorted(words)


@SETTINGS
@given(text=st.one_of(phrases, cells), min_words=st.integers(1, 3), extra=st.integers(0, 4))
def test_span_embeddings_cover_the_text(model, text, min_words, extra):
    try:
        spans = model.span_embeddings(text, min_words=min_words, max_words=min_words + extra)
    except ValueError as error:
        assert "span" in str(error) or "text" in str(error).lower(), str(error)
        return
    assert len(spans.vectors) == len(spans.texts) == len(spans.char_spans)
    np.testing.assert_allclose(np.linalg.norm(spans.vectors, axis=1), 1.0, atol=1e-4)
    for (a, b), piece in zip(spans.char_spans.tolist(), spans.texts):
        assert text[a:b] == piece
