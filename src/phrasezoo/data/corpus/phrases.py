"""Phrase mining: a corpus parsed by spaCy into sentences with typed phrase mentions, and the phrase table.

Two datasets, both plain ``datasets.Dataset`` objects so that every method of the zoo can reuse them:

* :func:`parse_corpus` gives one row per sentence: ``doc_id``, ``para_id``, ``sent_id`` (position in the document),
  ``sentence``, ``mentions`` (list of ``start``/``end`` character offsets in the sentence, ``text``, normalised
  ``phrase``, ``phrase_class``, ``entity_type``, ``lemma``) and ``entities`` (spaCy NER spans: ``start``, ``end``,
  ``label``). PEARL needs the phrases, Phrase-BERT phrases with contexts, UCTopic mentions with offsets and lemmas.
  The mention rules are documented in :mod:`phrasezoo.data.corpus.spans`; the result is cached on disk.
* :func:`phrase_table` aggregates mentions per phrase: majority class and entity type, PEARL's 95-way type label,
  frequency; :func:`phrase_contexts` samples sentence contexts per phrase. Both key mentions with
  :func:`phrase_keys` (the mention's ``phrase``, but a sentence-initial "The New York Times" joins the mid-sentence
  spelling when that spelling occurs).

Embedded corpus (gensim's Wikipedia sample + Lee news, ``en_core_web_sm``): 26,380 sentences, ~301k mentions,
~196k distinct phrases, ~25.6k seen at least twice; about two minutes to parse on two cores, a second to reload.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, Features, List, Value, concatenate_datasets
from tqdm.auto import tqdm

from phrasezoo.core.errors import InputError
from phrasezoo.resources import iter_corpus

from ..cache import cached_dataset, code_version, corpus_fingerprint
from . import spans as _spans_module
from . import text as _text_module
from . import worker as _worker_module
from .spans import MiningOptions
from .text import split_paragraphs
from .worker import init_worker, parse_batch

#: Bump when the output of :func:`parse_corpus` changes meaning (the source digest covers plain code edits).
PARSE_VERSION = "1"

MENTION_FEATURES = {
    "start": Value("int32"),
    "end": Value("int32"),
    "text": Value("string"),
    "phrase": Value("string"),
    "phrase_class": Value("string"),
    "entity_type": Value("string"),
    "lemma": Value("string"),
}
SENTENCE_FEATURES = Features(
    {
        "doc_id": Value("int32"),
        "para_id": Value("int32"),
        "sent_id": Value("int32"),
        "sentence": Value("string"),
        "mentions": List(MENTION_FEATURES),
        "entities": List({"start": Value("int32"), "end": Value("int32"), "label": Value("string")}),
    }
)
#: Phrase types of mined phrases: 5 lexical classes x (18 OntoNotes entity types + OTHER), e.g. ``NP-ORG``; a
#: model with a phrase-type head keeps its own copy of this list in its config (models are self-contained).
PHRASE_CLASSES = ("NP", "VP", "PP", "ADVP", "ADJP")
ENTITY_TYPES = (
    "CARDINAL", "DATE", "PERSON", "NORP", "GPE", "LAW", "PERCENT", "ORDINAL", "MONEY", "WORK_OF_ART", "FAC",
    "TIME", "QUANTITY", "PRODUCT", "LANGUAGE", "ORG", "LOC", "EVENT", "OTHER",
)  # fmt: skip
DEFAULT_TYPE_LABELS = tuple(f"{cls}-{ent}" for cls in PHRASE_CLASSES for ent in ENTITY_TYPES)
TYPE_ID = {label: i for i, label in enumerate(DEFAULT_TYPE_LABELS)}


# ------------------------------------------------------------------------------------------------------ parsing
def _paragraphs(corpus: str, max_documents: int | None, min_words: int, max_chars: int) -> list[tuple[int, int, str]]:
    out = []
    for doc_id, document in enumerate(iter_corpus(corpus, max_documents=max_documents)):
        for para_id, paragraph in enumerate(split_paragraphs(document, min_words=min_words, max_chars=max_chars)):
            out.append((doc_id, para_id, paragraph))
    return out


def parse_texts(
    paragraphs: Sequence[tuple[int, int, str]],
    spacy_model: str = "en_core_web_sm",
    options: MiningOptions | None = None,
    n_process: int = 1,
    batch_size: int = 128,
    progress: bool = True,
) -> Dataset:
    """Parse (doc_id, para_id, text) paragraphs into the sentence dataset of :func:`parse_corpus` (no caching).

    With ``n_process > 1`` the paragraphs are parsed *and* mined in a pool of worker processes (forked where the
    platform allows, spawned elsewhere), each with its own pipeline, so the mention extraction runs in parallel too;
    results keep the input order.
    """
    options = options or MiningOptions()
    batches = [list(paragraphs[i : i + batch_size]) for i in range(0, len(paragraphs), batch_size)]
    bar = tqdm(total=len(paragraphs), desc="parsing paragraphs", unit="para", disable=not progress)
    shards: list[Dataset] = []
    pending: list[dict] = []
    counters: dict[int, int] = defaultdict(int)

    def consume(batch: list[tuple[int, int, str]], rows: list[dict]) -> None:
        for row in rows:
            row["sent_id"] = counters[row["doc_id"]]
            counters[row["doc_id"]] += 1
        pending.extend(rows)
        bar.update(len(batch))
        if len(pending) >= 50_000:  # bound the Python-object memory: move rows into Arrow shards
            shards.append(Dataset.from_list(pending, features=SENTENCE_FEATURES))
            pending.clear()

    if n_process <= 1:
        init_worker(spacy_model, options, None)
        for batch in batches:
            consume(batch, parse_batch(batch))
    else:
        # fork (POSIX): workers start in milliseconds and callers need no `if __name__ == "__main__":` guard; the
        # workers only run spaCy/numpy, never torch or CUDA, so forking a process that imported torch is safe here.
        context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with context.Pool(n_process, initializer=init_worker, initargs=(spacy_model, options, 1)) as pool:
            for batch, rows in zip(batches, pool.imap(parse_batch, batches)):
                consume(batch, rows)
    bar.close()
    if pending or not shards:
        shards.append(Dataset.from_list(pending, features=SENTENCE_FEATURES))
    return shards[0] if len(shards) == 1 else concatenate_datasets(shards)


def parse_params(
    corpus: str = "embedded",
    spacy_model: str = "en_core_web_sm",
    max_documents: int | None = None,
    options: MiningOptions | None = None,
    min_words: int = 4,
    max_paragraph_chars: int = 20_000,
) -> dict:
    """Everything that determines the output of :func:`parse_corpus` (its cache key), code version included."""
    return {
        "corpus": corpus_fingerprint(corpus),
        "spacy_model": spacy_model,
        "max_documents": max_documents,
        "options": (options or MiningOptions()).__dict__,
        "min_words": min_words,
        "max_paragraph_chars": max_paragraph_chars,
        "code": code_version(PARSE_VERSION, [_text_module, _spans_module, _worker_module, parse_texts, _paragraphs]),
    }


def parse_corpus(
    corpus: str = "embedded",
    spacy_model: str = "en_core_web_sm",
    max_documents: int | None = None,
    n_process: int | None = None,
    options: MiningOptions | None = None,
    min_words: int = 4,
    max_paragraph_chars: int = 20_000,
    batch_size: int = 128,
    cache: bool = True,
    progress: bool = True,
) -> Dataset:
    """Parse a corpus into sentences with phrase mentions (see the module docstring for the columns).

    Args:
        corpus: a name for :func:`phrasezoo.resources.iter_corpus` (``"embedded"``, ``"embedded-wiki"``,
            ``"hub:<id>[:<config>]"``, a ``.txt`` path).
        spacy_model: a spaCy pipeline with parser and NER (``en_core_web_sm`` falls back to the embedded copy).
        max_documents: read only the first documents (handy for quick runs).
        n_process: parser processes; default ``min(2, cpu_count)``. Does not change the result.
        options: mention rules (length bounds, entity overlap, classes), see :class:`MiningOptions`.
        min_words, max_paragraph_chars: paragraph filter/splitting (see :func:`phrasezoo.data.corpus.text.split_paragraphs`);
            spaCy parses paragraphs, never whole documents, which keeps every text far below ``nlp.max_length``.
        batch_size: paragraphs per work unit (and per progress update).
        cache: reuse/save the result under ``cache_dir()/datasets/sentences-<hash>``; the hash covers the corpus
            (and, for a local file, its size and mtime), every parameter that changes the output and the code
            version (:data:`PARSE_VERSION` plus the code of the text/spans/worker modules and the parse functions).
        progress: show a progress bar.
    """
    options = options or MiningOptions()
    if n_process is None:
        n_process = max(1, min(2, os.cpu_count() or 1))
    params = parse_params(corpus, spacy_model, max_documents, options, min_words, max_paragraph_chars)

    def build() -> Dataset:
        paragraphs = _paragraphs(corpus, max_documents, min_words, max_paragraph_chars)
        if not paragraphs:  # an empty Dataset has no columns: every reader of it would fail deep in datasets
            raise InputError(f"The corpus {corpus} has no paragraph of at least {min_words} words: nothing to parse.")
        return parse_texts(paragraphs, spacy_model, options, n_process, batch_size, progress)

    return cached_dataset("sentences", params, build, enabled=cache)


# ------------------------------------------------------------------------------------------------- aggregation
def mentions_table(sentences: Dataset) -> pa.Table:
    """All mentions of a sentence dataset as one flat Arrow table with a ``row`` column (the sentence's row)."""
    if sentences._indices is not None:  # a selected/shuffled view: materialise the order first
        sentences = sentences.flatten_indices()
    column = sentences.data.table.column("mentions").combine_chunks()
    flat = pc.list_flatten(column)
    rows = pc.list_parent_indices(column)
    fields = {name: flat.field(name) for name in MENTION_FEATURES}
    return pa.table({"row": rows, **fields})


def phrase_keys(mentions: pa.Table) -> list[str]:
    """The phrase-table key of every mention: its ``phrase``, except that a sentence-initial mention whose
    capitalised form also occurs mid-sentence keeps the capital ("The New York Times" opening a sentence joins "The
    New York Times" written mid-sentence, while "The task" still joins "the task")."""
    phrases = mentions.column("phrase").to_pylist()
    texts = [" ".join(t.split()) for t in mentions.column("text").to_pylist()]
    mid_sentence = {p for p, t in zip(phrases, texts) if p == t}
    return [t if p != t and t in mid_sentence else p for p, t in zip(phrases, texts)]


def type_label(phrase_class: str, entity_type: str) -> str:
    """PEARL's phrase type, e.g. ``NP-ORG``."""
    return f"{phrase_class}-{entity_type}"


def phrase_table(
    sentences: Dataset,
    min_freq: int = 2,
    max_phrases: int | None = None,
    classes: Iterable[str] | None = None,
) -> Dataset:
    """Aggregate mentions per phrase (case-sensitive key from :func:`phrase_keys`) into PEARL's phrase table.

    Columns: ``phrase``, ``phrase_class`` and ``entity_type`` (majority over the phrase's mentions, ties to the first
    seen), ``type_label`` (e.g. ``NP-ORG``), ``type_id`` (index in ``DEFAULT_TYPE_LABELS``), ``lemma`` (most common
    lemma string), ``count`` (number of mentions). Phrases seen fewer than ``min_freq`` times are removed (the paper
    uses 2); rows are sorted by count, most frequent first (ties alphabetically), and cut to ``max_phrases``.
    ``classes`` keeps only mentions of those lexical classes.
    """
    table = mentions_table(sentences)
    phrases = phrase_keys(table)
    class_col = table.column("phrase_class").to_pylist()
    entity_col = table.column("entity_type").to_pylist()
    lemma_col = table.column("lemma").to_pylist()
    keep = set(classes) if classes is not None else None
    class_votes: dict[str, Counter] = defaultdict(Counter)
    entity_votes: dict[str, Counter] = defaultdict(Counter)
    lemma_votes: dict[str, Counter] = defaultdict(Counter)
    for phrase, cls, ent, lemma in zip(phrases, class_col, entity_col, lemma_col):
        if keep is not None and cls not in keep:
            continue
        class_votes[phrase][cls] += 1
        entity_votes[phrase][ent] += 1
        lemma_votes[phrase][lemma] += 1
    counts = {p: sum(v.values()) for p, v in class_votes.items()}
    ordered = sorted((p for p, c in counts.items() if c >= min_freq), key=lambda p: (-counts[p], p))
    if max_phrases is not None:
        ordered = ordered[:max_phrases]
    out: dict[str, list] = {k: [] for k in ("phrase", "phrase_class", "entity_type", "type_label", "type_id")}
    out.update(lemma=[], count=[])
    for phrase in ordered:
        cls = class_votes[phrase].most_common(1)[0][0]
        ent = entity_votes[phrase].most_common(1)[0][0]
        label = type_label(cls, ent)
        out["phrase"].append(phrase)
        out["phrase_class"].append(cls)
        out["entity_type"].append(ent)
        out["type_label"].append(label)
        out["type_id"].append(TYPE_ID[label])
        out["lemma"].append(lemma_votes[phrase].most_common(1)[0][0])
        out["count"].append(counts[phrase])
    features = Features(
        {
            "phrase": Value("string"),
            "phrase_class": Value("string"),
            "entity_type": Value("string"),
            "type_label": Value("string"),
            "type_id": Value("int32"),
            "lemma": Value("string"),
            "count": Value("int32"),
        }
    )
    return Dataset.from_dict(out, features=features)


CONTEXT_FEATURES = {
    "row": Value("int64"),
    "doc_id": Value("int32"),
    "sentence": Value("string"),
    "start": Value("int32"),
    "end": Value("int32"),
}


def phrase_contexts(
    sentences: Dataset, phrases: Sequence[str] | Dataset, max_contexts: int = 5, seed: int = 0
) -> Dataset:
    """Up to ``max_contexts`` sentence contexts per phrase, sampled without replacement, aligned with ``phrases``.

    Returns a dataset with ``phrase`` and ``contexts`` (list of ``row`` in ``sentences``, ``doc_id``, ``sentence``,
    ``start``/``end`` character offsets of the mention). Sampling is seeded per phrase (``seed`` mixed with a CRC of
    the phrase), so a phrase gets the same contexts whatever else is asked for. Add the column to a phrase table
    with ``table.add_column("contexts", phrase_contexts(sentences, table)["contexts"])``.
    """
    wanted = list(phrases["phrase"]) if isinstance(phrases, Dataset) else list(phrases)
    wanted_set = set(wanted)
    table = mentions_table(sentences)
    occurrences: dict[str, list[int]] = defaultdict(list)
    for i, phrase in enumerate(phrase_keys(table)):
        if phrase in wanted_set:
            occurrences[phrase].append(i)
    chosen: dict[str, list[int]] = {}
    for phrase in wanted:
        occ = occurrences.get(phrase, [])
        rng = random.Random(seed ^ zlib.crc32(phrase.encode()))
        chosen[phrase] = occ if len(occ) <= max_contexts else sorted(rng.sample(occ, max_contexts))
    needed = sorted({i for idx in chosen.values() for i in idx})
    rows = table.column("row").take(pa.array(needed, type=pa.int64())).to_pylist() if needed else []
    starts = table.column("start").take(pa.array(needed, type=pa.int64())).to_pylist() if needed else []
    ends = table.column("end").take(pa.array(needed, type=pa.int64())).to_pylist() if needed else []
    where = {m: (r, s, e) for m, r, s, e in zip(needed, rows, starts, ends)}
    sentence_rows = sorted({r for r, _, _ in where.values()})
    picked = sentences.select(sentence_rows) if sentence_rows else None
    text_of = dict(zip(sentence_rows, picked["sentence"])) if picked is not None else {}
    doc_of = dict(zip(sentence_rows, picked["doc_id"])) if picked is not None else {}
    contexts = []
    for phrase in wanted:
        items = []
        for m in chosen[phrase]:
            r, s, e = where[m]
            items.append({"row": r, "doc_id": doc_of[r], "sentence": text_of[r], "start": s, "end": e})
        contexts.append(items)
    features = Features({"phrase": Value("string"), "contexts": List(CONTEXT_FEATURES)})
    return Dataset.from_dict({"phrase": wanted, "contexts": contexts}, features=features)
