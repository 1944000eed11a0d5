"""Method-agnostic training-data pieces: phrase mining, synonyms, paraphrases, caching, the benchmark filter.

Each method's own data builder lives in ``phrasezoo.methods.<name>.data`` and composes these pieces; what serves one
method only (e.g. PEARL's augmentation and hard negatives) lives in that method's folder.

The pieces stand in sub-packages by job: ``corpus`` (downloads, Wikipedia links, parsing, phrase mining), ``lexical``
(WordNet, synonym tables, paraphrasers, the pivot table) and ``benchmarks`` (the name benchmark and the dev suite's
sets, which training keeps out); the cache and the benchmark filter, which all three use, stay at the top.

Names are imported lazily (PEP 562) so that light modules such as :mod:`phrasezoo.data.corpus.worker`, which every
parser process imports, do not pull in ``datasets``/``transformers``/``torch``.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    # mining
    "MiningOptions": "corpus.spans",
    "extract_mentions": "corpus.spans",
    "parse_corpus": "corpus.phrases",
    "parse_texts": "corpus.phrases",
    "phrase_table": "corpus.phrases",
    "phrase_contexts": "corpus.phrases",
    "mentions_table": "corpus.phrases",
    "phrase_keys": "corpus.phrases",
    "parse_params": "corpus.phrases",
    "split_paragraphs": "corpus.text",
    # synonyms and paraphrases
    "SynonymTable": "lexical.synonyms",
    "WordNetFilter": "lexical.synonyms",
    "get_wordnet": "lexical.wordnet",
    "Paraphraser": "lexical.paraphrase",
    "HubParaphraser": "lexical.paraphrase",
    "ConstrainedHubParaphraser": "lexical.paraphrase",
    "DiverseLexicalParaphraser": "lexical.paraphrase",
    "LexicalParaphraser": "lexical.paraphrase",
    "NoParaphraser": "lexical.paraphrase",
    "get_paraphraser": "lexical.paraphrase",
    "load_synonym_table": "lexical.synonym_tables",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
