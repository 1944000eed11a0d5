"""Optional WordNet access for the data pipeline (see :func:`phrasezoo.resources.load_wordnet`)."""

from __future__ import annotations

from phrasezoo.resources import load_wordnet


def get_wordnet():
    """NLTK's WordNet reader over the system WordNet files, or ``None`` when WordNet (or NLTK) is unavailable."""
    return load_wordnet()
