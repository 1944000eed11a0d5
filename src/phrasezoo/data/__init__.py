"""Method-agnostic training-data pieces: phrase mining, synonyms, paraphrases, caching, the benchmark filter.

Each method's own data builder lives in ``phrasezoo.methods.<name>.data`` and composes these pieces; what serves one
method only (e.g. PEARL's augmentation and hard negatives) lives in that method's folder.

Names are imported lazily (PEP 562) so that light modules such as :mod:`phrasezoo.data.worker`, which every
parser process imports, do not pull in ``datasets``/``transformers``/``torch``.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    # mining
    "MiningOptions": "spans",
    "extract_mentions": "spans",
    "parse_corpus": "phrases",
    "parse_texts": "phrases",
    "phrase_table": "phrases",
    "phrase_contexts": "phrases",
    "mentions_table": "phrases",
    "phrase_keys": "phrases",
    "parse_params": "phrases",
    "split_paragraphs": "text",
    # synonyms and paraphrases
    "SynonymTable": "synonyms",
    "WordNetFilter": "synonyms",
    "get_wordnet": "wordnet",
    "Paraphraser": "paraphrase",
    "HubParaphraser": "paraphrase",
    "ConstrainedHubParaphraser": "paraphrase",
    "DiverseLexicalParaphraser": "paraphrase",
    "LexicalParaphraser": "paraphrase",
    "NoParaphraser": "paraphrase",
    "get_paraphraser": "paraphrase",
    "load_synonym_table": "synonym_tables",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
