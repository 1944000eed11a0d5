"""Cached synonym tables for a list of phrases (WordNet + word-vector synonyms of their words).

Shared by every data builder that augments or corrupts phrases (PEARL's augmenter, Phrase-BERT's paraphrases).
"""

from __future__ import annotations

from collections.abc import Mapping

from phrasezoo.data.cache import cache_key, code_version
from phrasezoo.data.lexical import dev_compound as _dev_compound_module
from phrasezoo.data.lexical import synonyms as _synonyms_module
from phrasezoo.data.lexical.synonyms import SynonymTable, proper_nouns, vocabulary
from phrasezoo.resources import cache_dir, load_word_vectors

SYNONYMS_VERSION = "1"

#: Default options of :meth:`SynonymTable.build` used by the pipeline (overridable with ``synonym_options``).
DEFAULT_SYNONYM_OPTIONS: dict = {
    "threshold": 0.80,
    "top_k": 10,
    "mutual_k": 10,
    "max_candidates": 50_000,
    "max_synonyms": 8,
    "wordnet_max_senses": 1,
    "strict_wordnet": True,
}


def load_synonym_table(
    phrases: list[str],
    glove: str | None = "glove-6b-50d",
    use_wordnet: bool = True,
    synonym_options: Mapping | None = None,
    cache: bool = True,
) -> SynonymTable:
    """The :class:`SynonymTable` for the words of ``phrases`` (cached as JSON under ``cache_dir()/synonyms``).

    ``glove`` names the word vectors (``None``: WordNet only); ``use_wordnet=False`` gives vectors only;
    ``synonym_options`` override :data:`DEFAULT_SYNONYM_OPTIONS`. Same inputs give the same table, so the dataset
    builder and :func:`build_augmenter` share one cache entry.
    """
    options = {**DEFAULT_SYNONYM_OPTIONS, **dict(synonym_options or {})}
    keys = vocabulary(phrases)
    names = sorted(proper_nouns(phrases))
    params = {
        "vocabulary": cache_key({"keys": keys}),
        "proper": cache_key({"names": names}),
        "glove": glove,
        "wordnet": use_wordnet,
        "options": options,
        "code": code_version(SYNONYMS_VERSION, [_synonyms_module, _dev_compound_module]),
    }
    path = cache_dir() / "synonyms" / f"synonyms-{cache_key(params)}.json"
    if cache and path.exists():
        return SynonymTable.load(path)
    vectors = load_word_vectors(glove) if glove else None
    table = SynonymTable.build(
        keys, vectors=vectors, wordnet="auto" if use_wordnet else None, proper_nouns=names, **options
    )
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        table.save(tmp)
        tmp.rename(path)
    return table
