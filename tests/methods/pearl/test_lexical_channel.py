"""PEARL's optional lexical channel: hashed character n-gram TF-IDF inside the ``encode`` vectors (issue 36)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.feature_extraction.text import TfidfVectorizer
from transformers import AutoModel

from phrasezoo.models.pearl.modeling_pearl import _hashed_ngrams, char_wb_ngrams
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("pearl").tiny_model
CORPUS = ["The New York Times", "New York Post", "Washington Post", "apple pie", "banana bread", "2012 Summer Olympics"]


@pytest.mark.parametrize("text", ["New York  Times", "a b", "I-165 (1928 film)", "x", "Ünïcode wörds"])
def test_ngrams_are_scikit_learns_char_wb(text):
    analyzer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).build_analyzer()
    assert sorted(char_wb_ngrams(text, 2, 4)) == sorted(analyzer(text))


def test_off_by_default_and_the_joint_part_is_unchanged():
    model = tiny_model().eval()
    assert model.config.lexical_dim == 0 and "lexical" not in model.tokenize(["apple pie"])
    before = model.encode(["apple pie", "New York"], normalize=False)
    model.set_lexical_channel(CORPUS, dim=256, weight=0.7)
    after = model.encode(["apple pie", "New York"], normalize=False)
    assert after.shape[1] == before.shape[1] + 256
    np.testing.assert_allclose(after[:, : before.shape[1]], before, atol=1e-6)
    lexical = after[:, before.shape[1] :] / 0.7
    np.testing.assert_allclose(np.linalg.norm(lexical, axis=1), 1.0, atol=1e-5)


def test_lexical_cosine_follows_the_idf_weighted_ngram_overlap():
    model = tiny_model().eval()
    model.set_lexical_channel(CORPUS, dim=4096, weight=1.0)
    lex = model.lexical_vectors(["New York Times", "New York Tmes", "banana bread"]).numpy()
    assert lex[0] @ lex[1] > 0.6 > lex[0] @ lex[2]
    rows, columns, values = _hashed_ngrams(["aaa"], 16, 2, 4)  # " aaa " -> " a", "aa" x2, "a ", " aa", ...
    assert len(rows) == len(set(char_wb_ngrams("aaa", 2, 4))) and max(abs(v) for v in values) > 1.0


def test_the_channel_survives_save_and_load(tmp_path):
    model = tiny_model().eval()
    model.set_lexical_channel(CORPUS, dim=128, weight=0.5)
    model.save_pretrained(tmp_path)
    model.tokenizer.save_pretrained(tmp_path)
    loaded = AutoModel.from_pretrained(str(tmp_path), trust_remote_code=True).eval()
    assert loaded.config.lexical_dim == 128 and loaded.config.lexical_weight == 0.5
    torch.testing.assert_close(loaded.lexical_idf, model.lexical_idf)
    texts = ["New York Times", "apple pies"]
    np.testing.assert_allclose(loaded.encode(texts), model.encode(texts), atol=1e-5)
    assert loaded.predict_type("apple pie")[0][0] == model.predict_type("apple pie")[0][0]


def test_bad_arguments_raise():
    model = tiny_model()
    with pytest.raises(ValueError, match="no lexical channel"):
        model.lexical_vectors(["x"])
    with pytest.raises(ValueError, match="dim must be"):
        model.set_lexical_channel(CORPUS, dim=0)
    with pytest.raises(ValueError, match="empty"):
        model.set_lexical_channel(["ok", "  "])
