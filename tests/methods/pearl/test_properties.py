"""Property tests of PEARL's phrase-type prediction (issue 34) on the tiny model: arbitrary phrases give ``top_k``
ranked types each, in input order, or a ``ValueError`` that names the bad phrase or argument."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phrasezoo.zoo.registry import get_method
from tests.properties import SETTINGS, batch_sizes, cells, definitely_bad, named_indices, phrases, valid_batch_size


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return get_method("pearl").tiny_model().eval()


@SETTINGS
@given(
    texts=st.lists(st.one_of(phrases, cells), max_size=5),
    top_k=st.one_of(st.integers(-1, 120), st.none(), st.floats(0, 3)),
    batch_size=batch_sizes,
)
def test_predict_type_ranks_types_for_every_phrase_or_names_the_bad_one(model, texts, top_k, batch_size):
    try:
        predictions = model.predict_type(texts, top_k=top_k, batch_size=batch_size)
    except ValueError as error:
        message = str(error)
        if "top_k" in message or "batch_size" in message:
            assert not (valid_batch_size(top_k) and valid_batch_size(batch_size)), message
        elif texts:
            named = named_indices(message)
            tokenless = {i for i, t in enumerate(texts) if isinstance(t, str) and not definitely_bad(t)
                         and not model.tokenizer(t, add_special_tokens=False)["input_ids"]}  # fmt: skip
            assert named and all(definitely_bad(texts[i]) or i in tokenless for i in named), message
        return
    assert texts and not any(definitely_bad(t) for t in texts)
    assert len(predictions) == len(texts), "rows in != rows out"
    labels = set(model.config.type_labels)
    for ranked in predictions:
        assert len(ranked) == min(top_k, len(labels))
        probabilities = [p for _, p in ranked]
        assert probabilities == sorted(probabilities, reverse=True) and all(0 <= p <= 1 for p in probabilities)
        assert {label for label, _ in ranked} <= labels


@SETTINGS
@given(texts=st.lists(phrases, min_size=1, max_size=6), data=st.data())
def test_predict_type_keeps_input_order(model, texts, data):
    permutation = data.draw(st.permutations(range(len(texts))))
    predictions = model.predict_type(texts, top_k=2, batch_size=data.draw(st.integers(1, 3)))
    shuffled = model.predict_type([texts[i] for i in permutation], top_k=2)
    for i, j in enumerate(permutation):
        assert [label for label, _ in shuffled[i]] == [label for label, _ in predictions[j]]
