"""UCTopic's pretraining data: phrase mentions grouped by phrase, so that two sentences of a phrase form a positive pair.

The paper's assumption: two mentions of the same phrase in two different sentences mean the same thing, so the two
sentences (mention masked in the anchor) are a positive pair. What counts as "the same phrase" depends on the source
(``sources``):

* ``hyperlinks``: Wikipedia anchors grouped by link target (the paper's choice: same Wikipedia entity). Read from
  a Wikipedia XML dump: the embedded gensim sample (``wiki_dump="embedded"``), a local ``.xml.bz2`` file or a
  ``https://`` URL of a dump (downloaded once into the cache, needs a network);
* ``entities``: spaCy named entities of the selected labels, grouped by their exact text;
* ``noun_phrases``: noun-phrase mentions of :func:`phrasezoo.data.parse_corpus`, grouped by their lower-cased lemma,
  leading determiners and possessives removed from both span and key ("the United States" -> "United States",
  key ``united states``). An NP whose span is also a kept entity is left to the entity.

Keys carry their source (``link:Plato``, ``entity:Plato``, ``np:plato``). A phrase is kept when it occurs in at least
``min_sentences`` different sentences; at most ``max_instances_per_phrase`` of its mentions are kept (seeded
sample) so that frequent phrases do not dominate a small corpus. :func:`build_uctopic_dataset` returns one row per
mention (``sentence``, ``start``, ``end`` character offsets, ``key``, ``source``, ``sentence_id``), cached on disk.
"""

from __future__ import annotations

import inspect
import random
import re
import sys
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset, Features, Value

from phrasezoo.data.cache import cached_dataset, code_version, corpus_fingerprint
from phrasezoo.data.corpus import wiki_links
from phrasezoo.data.corpus.phrases import parse_corpus, parse_params

# the Wikipedia link reader lives in phrasezoo.data.corpus.wiki_links; these names stay importable from here
from phrasezoo.data.corpus.wiki_links import (  # noqa: F401
    _PLACEHOLDER,
    _WIKILINK,
    _resolve_placeholders,
    link_target,
    resolve_wiki_dump,
    wiki_link_sentences,
    wikitext_with_links,
)

#: Bump when the meaning of the dataset changes (the code digest covers ordinary edits).
UCTOPIC_DATA_VERSION = "1"

SOURCES = ("hyperlinks", "entities", "noun_phrases")
#: Named-entity labels that name things (not numbers, dates or amounts).
DEFAULT_ENTITY_LABELS = (
    "PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE",
)  # fmt: skip
LEADING_DETERMINERS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "my", "his", "her", "its", "our", "their", "your"}
)
_LEADING_WORD = re.compile(r"^(\S+)\s+")

FEATURES = Features(
    {
        "sentence": Value("string"),
        "start": Value("int32"),
        "end": Value("int32"),
        "key": Value("string"),
        "source": Value("string"),
        "sentence_id": Value("int64"),
    }
)


# ------------------------------------------------------------------------------------------------ noun phrases
def strip_leading_determiner(text: str) -> int:
    """Number of leading characters to drop so that ``text`` loses a leading determiner or possessive ("the ",
    "their "); 0 when there is none or when the determiner is the whole text."""
    match = _LEADING_WORD.match(text)
    if match and match.group(1).lower() in LEADING_DETERMINERS and match.end() < len(text):
        return match.end()
    return 0


def _lemma_key(lemma: str) -> str:
    words = lemma.split()
    if len(words) > 1 and words[0] in LEADING_DETERMINERS:
        words = words[1:]
    return " ".join(words)


def corpus_mentions(
    sentences: Dataset,
    sources: Sequence[str] = ("entities", "noun_phrases"),
    entity_labels: Sequence[str] = DEFAULT_ENTITY_LABELS,
) -> list[tuple[str, int, int, str, str]]:
    """``(sentence, start, end, key, source)`` of the entity and noun-phrase mentions of a parsed corpus.

    ``sentences`` is the output of :func:`phrasezoo.data.parse_corpus` (``sentence``, ``mentions``, ``entities``).
    """
    keep_labels = set(entity_labels)
    out = []
    for row in sentences.select_columns(["sentence", "mentions", "entities"]):
        sentence = row["sentence"]
        entity_spans = set()
        if "entities" in sources:
            for entity in row["entities"]:
                if entity["label"] not in keep_labels:
                    continue
                start, end = entity["start"], entity["end"]
                text = " ".join(sentence[start:end].split())
                if text:
                    entity_spans.add((start, end))
                    out.append((sentence, start, end, f"entity:{text}", "entities"))
        if "noun_phrases" in sources:
            for mention in row["mentions"]:
                if mention["phrase_class"] != "NP":
                    continue
                start = mention["start"] + strip_leading_determiner(mention["text"])
                end = mention["end"]
                key = _lemma_key(mention["lemma"])
                if (start, end) in entity_spans or not key:
                    continue
                out.append((sentence, start, end, f"np:{key}", "noun_phrases"))
    return out


# -------------------------------------------------------------------------------------------------- hyperlinks
def hyperlink_mentions(
    dump: str | Path, max_documents: int | None = None, progress: bool = True
) -> list[tuple[str, int, int, str, str]]:
    """``(sentence, start, end, key, "hyperlinks")`` for every article link of a Wikipedia dump (key ``link:<title>``)."""
    return [
        (sentence, start, end, f"link:{target}", "hyperlinks")
        for sentence, spans in wiki_link_sentences(dump, max_documents=max_documents, progress=progress)
        for start, end, target in spans
    ]


# ---------------------------------------------------------------------------------------------------- grouping
def select_instances(
    mentions: Iterable[tuple[str, int, int, str, str]],
    min_sentences: int = 2,
    max_instances_per_phrase: int | None = 10,
    seed: int = 0,
) -> list[tuple[str, int, int, str, str, int]]:
    """Mentions of the phrases seen in at least ``min_sentences`` different sentences, at most
    ``max_instances_per_phrase`` per phrase (sampled with a per-phrase seed, spread over different sentences first).

    Returns ``(sentence, start, end, key, source, sentence_id)`` sorted by key then sentence; ``sentence_id`` numbers
    the distinct sentence texts, so "a different sentence" means a different text.
    """
    by_key: dict[str, list[tuple[str, int, int, str, str]]] = defaultdict(list)
    seen: set[tuple[str, int, int, str]] = set()
    for sentence, start, end, key, source in mentions:
        if (sentence, start, end, key) in seen or not any(ch.isalnum() for ch in sentence[start:end]):
            continue  # a repeat, or a span of only symbols/invisible characters (U+2060 in the wiki leads)
        seen.add((sentence, start, end, key))
        by_key[key].append((sentence, start, end, key, source))
    sentence_ids: dict[str, int] = {}
    selected = []
    for key in sorted(by_key):
        group = sorted(by_key[key], key=lambda m: (m[0], m[1], m[2]))
        if len({m[0] for m in group}) < min_sentences:
            continue
        rng = random.Random(seed ^ zlib.crc32(key.encode()))
        rng.shuffle(group)
        if max_instances_per_phrase is not None and len(group) > max_instances_per_phrase:
            # one mention per sentence first, so that the kept mentions still come from different sentences
            first_of_sentence, rest, used = [], [], set()
            for mention in group:
                (rest if mention[0] in used else first_of_sentence).append(mention)
                used.add(mention[0])
            group = (first_of_sentence + rest)[:max_instances_per_phrase]
            if len({m[0] for m in group}) < min_sentences:
                continue
        for mention in sorted(group, key=lambda m: (m[0], m[1], m[2])):
            sentence_id = sentence_ids.setdefault(mention[0], len(sentence_ids))
            selected.append((*mention, sentence_id))
    return selected


# ------------------------------------------------------------------------------------------------- entry point
def uctopic_params(**options: Any) -> dict:
    """Everything that determines the output of ``build_uctopic_dataset(**options)`` (its cache key): its arguments,
    defaults filled in from its signature (the one list of them), less the dump's checksum, caching and progress."""
    bound = inspect.signature(build_uctopic_dataset).bind(**options)
    bound.apply_defaults()
    args = bound.arguments
    corpus, sources, wiki_dump, spacy_model = args["corpus"], args["sources"], args["wiki_dump"], args["spacy_model"]
    max_documents = args["max_documents"]
    unknown = set(sources) - set(SOURCES)
    if unknown:
        raise ValueError(f"Unknown UCTopic phrase sources {sorted(unknown)}; use some of {SOURCES}.")
    if not sources:
        raise ValueError(f"Name at least one phrase source among {SOURCES}.")
    parsed = parse_params(corpus, spacy_model, max_documents) if {"entities", "noun_phrases"} & set(sources) else None
    dump = None
    if "hyperlinks" in sources:
        dump = wiki_dump or ("embedded" if corpus in ("embedded", "embedded-wiki") else None)
        if dump is None:
            raise ValueError("The hyperlinks source needs wiki_dump: 'embedded', a dump file or a dump URL.")
    return {
        "parsed": parsed,
        "sources": sorted(sources),
        "wiki_dump": corpus_fingerprint(dump) if dump else None,
        "entity_labels": sorted(args["entity_labels"]),
        "min_sentences": args["min_sentences"],
        "max_instances_per_phrase": args["max_instances_per_phrase"],
        "max_documents": max_documents,
        "seed": args["seed"],
        "code": code_version(UCTOPIC_DATA_VERSION, [sys.modules[__name__], wiki_links]),
    }


def build_uctopic_dataset(
    corpus: str = "embedded",
    sources: Sequence[str] = ("entities", "noun_phrases"),
    wiki_dump: str | None = None,
    spacy_model: str = "en_core_web_sm",
    entity_labels: Sequence[str] = DEFAULT_ENTITY_LABELS,
    min_sentences: int = 2,
    max_instances_per_phrase: int | None = 10,
    max_documents: int | None = None,
    seed: int = 0,
    wiki_dump_sha1: str | None = None,
    cache: bool = True,
    progress: bool = True,
) -> Dataset:
    """UCTopic's pretraining mentions (one row per mention; see the module docstring), cached on disk.

    Args:
        corpus: corpus of :func:`phrasezoo.data.parse_corpus` for the ``entities`` / ``noun_phrases`` sources.
        sources: any of ``hyperlinks``, ``entities``, ``noun_phrases``.
        wiki_dump: Wikipedia XML dump for ``hyperlinks`` (default ``"embedded"`` when ``corpus`` is embedded).
        spacy_model: pipeline of the parse (entities, noun phrases).
        entity_labels: spaCy labels kept by the ``entities`` source.
        min_sentences: a phrase needs mentions in this many different sentences.
        max_instances_per_phrase: cap on the mentions kept per phrase (``None``: all).
        max_documents: read only the first documents of the corpus and of the dump.
        seed: seed of the per-phrase sampling.
        wiki_dump_sha1: sha1 a downloaded ``wiki_dump`` URL must have (default: the one the Wikimedia dump
            directory lists in its ``sha1sums.txt``; see :func:`phrasezoo.data.corpus.download.download`).
    """
    params = uctopic_params(**locals())  # the arguments as given: nothing else is bound yet

    def build() -> Dataset:
        mentions: list[tuple[str, int, int, str, str]] = []
        if "hyperlinks" in sources:
            dump = resolve_wiki_dump(wiki_dump or "embedded", sha1=wiki_dump_sha1)  # a URL: downloaded, checked
            mentions += hyperlink_mentions(dump, max_documents=max_documents, progress=progress)
        if {"entities", "noun_phrases"} & set(sources):
            sentences = parse_corpus(corpus, spacy_model, max_documents=max_documents, progress=progress)
            mentions += corpus_mentions(sentences, sources, entity_labels)
        rows = select_instances(mentions, min_sentences, max_instances_per_phrase, seed)
        columns = list(zip(*rows)) if rows else [[] for _ in FEATURES]
        return Dataset.from_dict(dict(zip(FEATURES, map(list, columns))), features=FEATURES)

    return cached_dataset("uctopic", params, build, enabled=cache)
