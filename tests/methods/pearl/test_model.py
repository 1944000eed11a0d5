"""PEARL-specific behaviour of the model file (the generic contract is in test_contract.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from phrasezoo.models.pearl.configuration_pearl import DEFAULT_TYPE_LABELS, PearlConfig
from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.resources import resolve_backbone
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("pearl").tiny_model


@pytest.fixture(scope="module")
def minilm_pearl():
    return PearlModel.from_backbone(resolve_backbone("minilm-l6")).eval()


def test_from_backbone_phrase_part_equals_plain_mean_pooling(minilm_pearl):
    path = resolve_backbone("minilm-l6")
    tokenizer, plain = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    phrases = ["The New York Times", "machine learning"]
    batch = tokenizer(phrases, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = plain(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        expected = (hidden * mask).sum(1) / mask.sum(1)
        features = minilm_pearl.tokenize(phrases)
        got = minilm_pearl(**features).phrase_embeddings
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_cosine_is_the_documented_mixture_of_both_parts():
    model = tiny_model().eval()
    with torch.no_grad():
        out = model(**model.tokenize(["New York Times", "NYTimes"]))
    w = model.config.char_weight
    unit = torch.nn.functional.normalize
    cos_phrase = (unit(out.phrase_embeddings[0], dim=0) * unit(out.phrase_embeddings[1], dim=0)).sum()
    cos_char = (unit(out.char_embeddings[0], dim=0) * unit(out.char_embeddings[1], dim=0)).sum()
    cos = (out.embeddings[0] * out.embeddings[1]).sum()
    torch.testing.assert_close(cos, (cos_phrase + w**2 * cos_char) / (1 + w**2), atol=1e-5, rtol=0)


def test_words_are_whitespace_delimited_with_all_their_pieces():
    model = tiny_model()
    features = model.tokenize(["New-York (film)", "a b c"])
    assert features["word_phrase"].tolist() == [0, 0, 1, 1, 1]
    index = {c: i + 2 for i, c in enumerate(model.config.char_vocab)}
    first_word = [index[c] for c in "new-york"]  # case-folded by default
    assert features["char_ids"][0, : len(first_word)].tolist() == first_word
    assert (features["piece_ids"][0] != 0).sum() == 3  # new, -, york


def test_character_encoder_is_case_insensitive_by_default():
    model = tiny_model().eval()
    upper, lower = model.tokenize(["Famotidine SRC"]), model.tokenize(["famotidine src"])
    assert torch.equal(upper["char_ids"], lower["char_ids"])
    model.config.char_lowercase = False
    assert not torch.equal(model.tokenize(["Famotidine SRC"])["char_ids"], lower["char_ids"])


def test_word_limits_and_unknown_characters():
    model = tiny_model()
    many_words = " ".join(f"w{i}" for i in range(40))
    features = model.tokenize([many_words, "naïve ☃ snowman"])
    counts = torch.bincount(features["word_phrase"]).tolist()
    assert counts == [model.config.char_max_words, 3]
    snowman_row = features["char_ids"][model.config.char_max_words + 1]
    assert snowman_row[0].item() == 1  # unknown character id
    long_word = "x" * 100
    assert model.tokenize([long_word])["char_ids"].shape[1] == model.config.char_max_word_chars


def test_predict_type_returns_ranked_valid_labels():
    model = tiny_model()
    predictions = model.predict_type(["The New York Times", "very difficult"], top_k=3)
    assert len(predictions) == 2
    for ranked in predictions:
        labels, probs = zip(*ranked)
        assert set(labels) <= set(DEFAULT_TYPE_LABELS) and len(labels) == 3
        assert list(probs) == sorted(probs, reverse=True) and 0 < sum(probs) <= 1.0001
    assert len(model.predict_type("The Times", top_k=1)) == 1
    assert len(DEFAULT_TYPE_LABELS) == 95


def test_encode_tokens_offsets_point_into_the_text():
    model = tiny_model()
    text = "A man is slicing a bun."
    (result,) = model.encode_tokens([text])
    pieces = [text[s:e] for s, e in result["offsets"]]
    assert pieces[:4] == ["A", "man", "is", "slicing"]
    assert result["embeddings"].shape == (len(pieces), model.config.backbone_config.hidden_size)


def test_ablation_without_character_encoder():
    base = tiny_model()
    config = PearlConfig(backbone_config=base.config.backbone_config, use_char_encoder=False)
    model = PearlModel(config)
    model.set_tokenizer(base.tokenizer)
    vectors = model.encode(["New York", "York"])
    assert vectors.shape == (2, config.backbone_config.hidden_size) == (2, config.embedding_dim)
    assert model.char_encoder is None and "char_ids" not in model.tokenize(["x"])


def test_word_features_reject_multiword_input():
    model = tiny_model()
    assert model.word_features(["hello", "misspelling"])["char_ids"].shape[0] == 2
    with pytest.raises(ValueError, match="single words"):
        model.word_features(["two words"])


def test_single_string_gives_a_vector(minilm_pearl):
    vector = minilm_pearl.encode("The New York Times")
    assert vector.shape == (minilm_pearl.config.embedding_dim,)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)
