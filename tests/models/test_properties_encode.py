"""Property tests of ``encode``, the entry point every model type has (issue 34), on each method's tiny model.

Whatever a user's column holds (arbitrary unicode, blanks, None/NaN, numbers, bytes, very long strings, duplicates)
and whatever batch size they pass, ``encode`` either returns one finite unit vector per input, in input order, or
raises a ``ValueError`` that names the bad text or argument. The method-specific entry points (span search,
mentions in context, facets, phrase types) have their own property tests in ``tests/methods/<m>/``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phrasezoo.zoo.registry import get_method, list_methods
from tests.properties import (
    SETTINGS,
    batch_sizes,
    cells,
    definitely_bad,
    named_indices,
    phrases,
    valid_batch_size,
)

METHODS = list_methods()


@pytest.fixture(scope="module", params=METHODS)
def model(request):
    torch.set_num_threads(1)
    return get_method(request.param).tiny_model().eval()


def _tokenless(model, text) -> bool:
    """True for a string of which the tokenizer keeps no token (a model may reject it or embed it)."""
    return (
        isinstance(text, str)
        and not definitely_bad(text)
        and not model.tokenizer(text, add_special_tokens=False)["input_ids"]
    )


@SETTINGS
@given(inputs=st.lists(cells, max_size=6), batch_size=batch_sizes)
def test_encode_returns_a_row_per_input_or_names_the_bad_one(model, inputs, batch_size):
    bad = [i for i, x in enumerate(inputs) if definitely_bad(x)]
    try:
        vectors = model.encode(inputs, batch_size=batch_size)
    except ValueError as error:
        message = str(error)
        if "batch_size" in message:
            assert not valid_batch_size(batch_size), message
            return
        if not inputs:
            assert "empty list" in message
            return
        named = named_indices(message)
        assert named, f"the error names no text: {message}"
        suspects = set(bad) | {i for i, x in enumerate(inputs) if _tokenless(model, x)}
        assert named <= suspects, f"{message} names a good text: {[inputs[i] for i in named - suspects]!r}"
        return
    assert inputs and not bad and valid_batch_size(batch_size), f"accepted bad input {inputs!r}, {batch_size!r}"
    assert vectors.shape[0] == len(inputs), "rows in != rows out"
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@SETTINGS
@given(texts=st.lists(phrases, min_size=1, max_size=8), batch_size=st.integers(1, 4), data=st.data())
def test_encode_keeps_input_order_and_duplicates(model, texts, batch_size, data):
    """A permutation of the inputs permutes the output rows; equal inputs get equal rows."""
    texts = texts + data.draw(st.lists(st.sampled_from(texts), max_size=3))  # duplicates
    permutation = data.draw(st.permutations(range(len(texts))))
    vectors = model.encode(texts, batch_size=batch_size)
    shuffled = model.encode([texts[i] for i in permutation], batch_size=batch_size)
    assert vectors.shape[0] == len(texts)
    np.testing.assert_allclose(shuffled, vectors[list(permutation)], atol=1e-5)
    first = {text: i for i, text in reversed(list(enumerate(texts)))}
    np.testing.assert_allclose(vectors, vectors[[first[t] for t in texts]], atol=1e-5)


@SETTINGS
@given(text=st.one_of(phrases, st.text(min_size=1, max_size=40)))
def test_a_single_string_gives_one_vector_or_a_clear_error(model, text):
    try:
        vector = model.encode(text)
    except ValueError as error:
        assert named_indices(str(error)) == {0}, str(error)
        assert definitely_bad(text) or _tokenless(model, text)
        return
    assert vector.ndim == 1 and np.isfinite(vector).all()
    np.testing.assert_allclose(np.linalg.norm(vector), 1.0, atol=1e-4)
