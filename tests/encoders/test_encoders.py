"""Encoder protocol: cache, capabilities, spec strings, the Jaccard baseline and the real mean-pooling baseline."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.encoders import (
    MENTIONS,
    TOKENS,
    VECTORS,
    Encoder,
    MeanPoolingEncoder,
    ModelEncoder,
    load_encoder,
)
from phrasezoo.encoders.char_jaccard import CharJaccardEncoder
from tests.evaluation.conftest import FakeEncoder


def test_cache_encodes_each_string_once_and_normalises():
    enc = FakeEncoder({"a": [3, 0], "b": [0, 2], "c": [1, 1]})
    first = enc.encode(["a", "b", "a"])
    second = enc.encode(["b", "c", "c"])
    assert enc.calls == [["a", "b"], ["c"]]  # only unseen strings, deduplicated, one call each time
    assert enc.encoded_count == 3
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(first[0], [1, 0])
    np.testing.assert_allclose(second[1], second[2])
    assert first.dtype == np.float32
    enc.encode(["a", "b", "c"])
    assert len(enc.calls) == 2  # everything cached


def test_encoding_without_the_cache_keeps_nothing_and_reads_what_is_cached():
    enc = FakeEncoder({"a": [3, 0], "b": [0, 2], "c": [1, 1]})
    enc.encode(["a"])
    rows = enc.encode(["a", "b", "c", "b"], cache=False)
    assert enc.calls == [["a"], ["b", "c"]] and set(enc._cache) == {"a"}
    np.testing.assert_allclose(rows, enc.encode(["a", "b", "c", "b"]), atol=1e-7)


def test_default_similarity_is_dot_product():
    enc = FakeEncoder({"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    sims = enc.similarity(["a"], ["a", "b", "c"])
    np.testing.assert_allclose(sims, [[1.0, 0.0, np.sqrt(0.5)]], atol=1e-6)
    np.testing.assert_allclose(enc.paired_similarity(["a", "b"], ["c", "b"]), [np.sqrt(0.5), 1.0], atol=1e-6)
    assert enc.nearest(["a", "b"], ["c", "b", "a"]).tolist() == [2, 1]


class _Zoo:
    """Stands in for an exported zoo model: encode + encode_tokens, no encode_mentions."""

    def encode(self, texts, batch_size=32, normalize=True, show_progress_bar=False, convert_to_numpy=True):
        return np.ones((len(texts), 3), dtype=np.float32) * np.arange(1, len(texts) + 1)[:, None]

    def encode_tokens(self, texts, batch_size=8):
        return [{"embeddings": np.ones((2, 3)), "offsets": np.array([[0, 1], [1, 2]])} for _ in texts]


def test_model_object_capabilities_detected():
    enc = load_encoder(_Zoo(), name="zoo")
    assert isinstance(enc, ModelEncoder)
    assert enc.name == "zoo"
    assert {VECTORS, TOKENS} <= enc.capabilities and MENTIONS not in enc.capabilities
    assert enc.encode(["x", "y"]).shape == (2, 3)
    assert enc.encode_tokens(["xy"])[0]["offsets"].shape == (2, 2)

    class Plain:
        def encode(self, texts):
            return np.eye(len(texts), 4)

    plain = load_encoder(Plain())
    assert TOKENS not in plain.capabilities
    assert plain.encode(["a", "b"]).shape == (2, 4)


def test_encoder_instance_passes_through():
    enc = FakeEncoder()
    assert load_encoder(enc) is enc


def test_bare_name_without_export_says_how_to_train(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="train"):
        load_encoder("some-mini")
    (tmp_path / "outputs" / "some-mini").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_encoder("some-mini")  # resolved to outputs/some-mini/, which is not an export


def test_char_jaccard_similarity_only():
    enc = load_encoder("baseline:char-jaccard")
    assert isinstance(enc, CharJaccardEncoder) and VECTORS not in enc.capabilities
    sims = enc.similarity(["new york"], ["New York", "new yorker", "boston"])
    assert sims[0, 0] == pytest.approx(1.0)  # lowercased
    assert sims[0, 0] > sims[0, 1] > sims[0, 2] == 0.0
    pair = enc.paired_similarity(["abc", "abcd"], ["abc", "xyz"])
    np.testing.assert_allclose(pair, [1.0, 0.0])
    # nearest in chunks gives the same answer as the dense matrix
    keys = [f"item number {i}" for i in range(50)]
    queries = [f"itme number {i}" for i in range(50)]
    enc.chunk_size = 7
    assert enc.nearest(queries, keys).tolist() == enc.similarity(queries, keys).argmax(1).tolist()
    with pytest.raises(NotImplementedError):
        enc.encode(["a"])


def test_jaccard_value_matches_set_definition():
    enc = CharJaccardEncoder(n=3)
    a, b = "night", "nacht"
    grams = lambda s: {f" {s} "[i : i + 3] for i in range(len(s))}  # noqa: E731 - char_wb trigrams of one word
    expected = len(grams(a) & grams(b)) / len(grams(a) | grams(b))
    assert enc.paired_similarity([a], [b])[0] == pytest.approx(expected)


@pytest.fixture(scope="module")
def minilm() -> MeanPoolingEncoder:
    enc = load_encoder("baseline:minilm-l6", progress=False)
    assert isinstance(enc, MeanPoolingEncoder)
    return enc


def test_minilm_baseline_vectors_and_tokens(minilm):
    assert minilm.name == "baseline:minilm-l6" and minilm.revision
    texts = ["New York Times", "the cat sat on the mat, quietly."]
    vecs = minilm.encode(texts)
    assert vecs.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    tokens = minilm.encode_tokens(texts)
    for text, out in zip(texts, tokens):
        assert out["embeddings"].shape[0] == out["offsets"].shape[0] > 0
        pieces = [text[s:e] for s, e in out["offsets"]]
        assert all(pieces) and "[CLS]" not in pieces and "[SEP]" not in pieces
        assert pieces[0].lower() == text.split()[0].lower()[: len(pieces[0])]
    # batching order must not change results
    again = load_encoder("baseline:minilm-l6", batch_size=1, progress=False).encode(texts[::-1])[::-1]
    np.testing.assert_allclose(vecs, again, atol=1e-5)


def test_base_encoder_without_hooks_raises():
    enc = Encoder("bare")
    with pytest.raises(NotImplementedError):
        enc.encode_tokens(["x"])
