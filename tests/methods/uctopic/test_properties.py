"""Property tests of UCTopic's mention-in-context encoding (issue 34) on the tiny model: arbitrary sentences and
character spans give one vector per mention, or a ``ValueError`` that names the bad mention."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from phrasezoo.zoo.registry import get_method
from tests.properties import SETTINGS, batch_sizes, cells, definitely_bad, named_indices, phrases, valid_batch_size

offsets = st.one_of(st.integers(-3, 60), st.none(), st.floats(0, 5), st.just("3"))
mentions = st.one_of(
    st.tuples(st.one_of(phrases, cells), st.tuples(offsets, offsets)),
    st.builds(lambda s, a, n: (s, (a, a + n)), phrases, st.integers(0, 8), st.integers(1, 12)),  # mostly in range
    st.one_of(phrases, cells),  # a phrase without context
    st.tuples(phrases),  # a malformed pair
)


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return get_method("uctopic").tiny_model().eval()


def plausible(model, mention) -> bool:
    """A mention the model must embed: a readable phrase, or a sentence with an integer span that covers a token."""
    if isinstance(mention, str):
        sentence, start, end = mention, 0, len(mention)
    elif isinstance(mention, tuple) and len(mention) == 2 and isinstance(mention[1], tuple) and len(mention[1]) == 2:
        sentence, (start, end) = mention
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
            return False
    else:
        return False
    if definitely_bad(sentence) or not (0 <= start < end <= len(sentence)) or not sentence[start:end].strip():
        return False
    encoding = model.tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)
    return any(a < end and b > start and b > a for a, b in encoding["offset_mapping"])


@SETTINGS
@given(items=st.lists(mentions, max_size=5), batch_size=batch_sizes, mask=st.booleans())
def test_encode_mentions_gives_a_row_per_mention_or_names_the_bad_one(model, items, batch_size, mask):
    good = [plausible(model, m) for m in items]
    try:
        vectors = model.encode(items, batch_size=batch_size, mask_mention=mask)
    except ValueError as error:
        message = str(error)
        if "batch_size" in message:
            assert not valid_batch_size(batch_size)
        elif not items:
            assert "empty list" in message
        elif len(items) == 1 and isinstance(items[0], tuple) and len(items[0]) == 2:
            assert not good[0] or "batch_size" in message, message  # a lone pair is one mention, not a list
        else:
            named = named_indices(message)
            assert named and not any(good[i] for i in named if i < len(items)), message
        return
    single = isinstance(items, tuple)
    assert items and all(good) and valid_batch_size(batch_size), f"accepted {items!r}, {batch_size!r}"
    assert not single and vectors.shape[0] == len(items), "rows in != rows out"
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@SETTINGS
@given(sentence=phrases, data=st.data())
def test_the_same_mention_gets_the_same_vector_wherever_it_is_in_the_list(model, sentence, data):
    words = sentence.split()
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    first = len(" ".join(words[:start])) + (1 if start else 0)
    span = (first, first + len(" ".join(words[start:end])))
    items = [(sentence, span), sentence, (sentence, span), " ".join(words[start:end])]
    vectors = model.encode(items, batch_size=data.draw(st.integers(1, 3)))
    assert vectors.shape[0] == len(items)
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-5)
    np.testing.assert_allclose(model.encode([items[1]])[0], vectors[1], atol=1e-5)
