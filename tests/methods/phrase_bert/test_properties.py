"""Property tests of Phrase-BERT's token vectors and similarity (issue 34) on the tiny model (``encode`` itself is
covered for every model by ``tests/models/test_properties_encode.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phrasezoo.zoo.registry import get_method
from tests.properties import SETTINGS, batch_sizes, cells, definitely_bad, named_indices, phrases, valid_batch_size


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return get_method("phrase_bert").tiny_model().eval()


@SETTINGS
@given(texts=st.lists(st.one_of(phrases, cells), max_size=5), batch_size=batch_sizes)
def test_encode_tokens_gives_every_text_its_tokens_or_names_the_bad_one(model, texts, batch_size):
    try:
        results = model.encode_tokens(texts, batch_size=batch_size)
    except ValueError as error:
        message = str(error)
        named = named_indices(message)
        assert (
            ("batch_size" in message and not valid_batch_size(batch_size))
            or (not texts and "empty list" in message)
            or (named and all(definitely_bad(texts[i]) for i in named))
        ), message
        return
    assert valid_batch_size(batch_size) and len(results) == len(texts), "rows in != rows out"
    for text, result in zip(texts, results):
        assert len(result["embeddings"]) == len(result["offsets"])
        assert all(0 <= a < b <= len(text) for a, b in result["offsets"].tolist())


@SETTINGS
@given(a=st.lists(phrases, min_size=1, max_size=4), b=st.lists(phrases, min_size=1, max_size=4))
def test_similarity_is_a_symmetric_cosine_matrix(model, a, b):
    forward, backward = model.similarity(a, b), model.similarity(b, a)
    assert forward.shape == (len(a), len(b))
    np.testing.assert_allclose(forward, backward.T, atol=1e-5)
    assert (np.abs(forward) <= 1 + 1e-5).all()
