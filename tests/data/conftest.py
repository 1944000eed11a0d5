"""Shared fixtures of the data-pipeline tests: an isolated cache directory and the spaCy pipeline."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Every test writes its cached datasets under a fresh temporary PHRASEZOO_CACHE."""
    path = tmp_path_factory.mktemp("phrasezoo-cache")
    monkeypatch.setenv("PHRASEZOO_CACHE", str(path))
    return path


@pytest.fixture(scope="session")
def nlp():
    from phrasezoo.resources import load_spacy

    return load_spacy("en_core_web_sm")


@pytest.fixture(scope="session")
def wordnet():
    from phrasezoo.data.lexicon import get_wordnet

    return get_wordnet()
