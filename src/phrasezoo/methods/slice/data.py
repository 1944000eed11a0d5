"""SLICE training triplets: (query, passage holding a span that matches the query, negative passage).

The paper trains on MS MARCO passage-ranking triples (no span annotation; the max over spans picks the span). Two
sources here:

* ``source: synthetic`` (offline, the CPU recipe, spec §7): passages of 1-3 consecutive sentences (20-100 words) of
  offline corpora parsed by spaCy (:func:`phrasezoo.data.corpus.phrases.parse_corpus`). In each passage a **target** span of
  3-10 words inside one sentence is chosen: a mention from the project's phrase miner (NP/PP/VP/ADJP/ADVP with up to
  10 tokens) or, when a passage has none, a random word n-gram. The **query** is a paraphrase of the target with at
  least one content word changed (rules of :class:`~phrasezoo.data.lexical.paraphrase.LexicalParaphraser` plus
  substitutions of words and 2-3-word units from the bilingual-pivot table and the WordNet/GloVe synonym table), or
  the target verbatim for ``verbatim_fraction`` of the passages (MS MARCO-like lexical overlap). The **negative**
  is, half of the time, a passage of another document; otherwise a hard negative from the same document: the
  positive passage itself with the target corrupted (1-2 content words replaced by random common words, so only a
  span of the right extent tells the two passages apart), or another passage of the document that does not hold the
  target and shares fewer than half of its content stems.
  ``valid_percent`` of the documents are held out (whole documents: no passage of a validation document is
  trained on). Triplets touching a test benchmark (STS-B-Context passages and sentences included) are dropped with
  :func:`phrasezoo.data.benchmark_filter.remove_benchmark_items`.
* ``source: msmarco`` (the paper's data, online): :func:`load_msmarco_triplets` reads a Hub triplet dataset
  (default ``sentence-transformers/msmarco-bm25``, subset ``triplet``: columns query/positive/negative, BM25
  negatives like the official ``triples.train.small.tsv``), a local copy of one laid out like the Hub repository, or
  the official headerless TSV.

The result is cached like the other builders (:func:`phrasezoo.data.cache.cached_dataset`).
"""

from __future__ import annotations

import logging
import random
import re
import sys
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from datasets import Dataset, Features, Value, load_dataset

from phrasezoo.data.benchmark_filter import remove_benchmark_items
from phrasezoo.data.cache import cached_dataset, code_version
from phrasezoo.data.corpus.phrases import parse_corpus, parse_params
from phrasezoo.data.corpus.spans import MiningOptions
from phrasezoo.data.lexical import paraphrase as _paraphrase_module
from phrasezoo.data.lexical.paraphrase import LexicalParaphraser
from phrasezoo.data.lexical.pivot import PivotParaphraser
from phrasezoo.data.lexical.synonym_tables import load_synonym_table
from phrasezoo.data.lexical.synonyms import STOP_WORDS

logger = logging.getLogger(__name__)

#: Bump when the meaning of the SLICE triplets changes (the code digest covers ordinary edits).
SLICE_DATA_VERSION = "1"
SOURCES = ("synthetic", "msmarco")
DEFAULT_CORPORA: dict[str, int | None] = {"embedded": None, "wiki-leads": 3000, "sotu": 25}
DEFAULT_MSMARCO = "sentence-transformers/msmarco-bm25"
TRIPLET_FEATURES = Features(
    {
        "query": Value("string"),
        "positive": Value("string"),
        "negative": Value("string"),
        "target": Value("string"),  # the span of `positive` the query was made from ("" for MS MARCO)
        "target_start": Value("int32"),  # character offsets of the target in `positive` (-1 for MS MARCO)
        "target_end": Value("int32"),
        "query_kind": Value("string"),  # paraphrase | verbatim | msmarco
        "negative_kind": Value("string"),  # other-document | same-document | msmarco
        "target_source": Value("string"),  # mention:<class> | ngram | msmarco
        "corpus": Value("string"),
        "doc_id": Value("int32"),
        "split": Value("string"),  # train | valid
    }
)
_TOKEN = re.compile(r"[^\W_]+")
_EDGE_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")


# ------------------------------------------------------------------------------------------------- text helpers
@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer  # lazy: keeps NLTK off the registry's scan

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _stemmer().stem(token)


def content_stems(text: str) -> frozenset[str]:
    """Lower-cased, Porter-stemmed word tokens of ``text`` that are not stop words."""
    return frozenset(_stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS)


def changes_content(target: str, query: str) -> bool:
    """Whether ``query`` differs from ``target`` in at least one content word (a dropped article does not count)."""
    a, b = content_stems(target), content_stems(query)
    return bool(b) and a != b


def _rng(seed: int, *parts: Any) -> random.Random:
    return random.Random(seed ^ zlib.crc32("\x1f".join(map(str, parts)).encode()))


# ---------------------------------------------------------------------------------------------------- passages
@dataclass
class Passage:
    """1-3 consecutive sentences of one paragraph, with the candidate targets found in them."""

    corpus: str
    doc_id: int
    text: str
    targets: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, source) in `text`
    ngram_slots: list[tuple[int, int]] = field(default_factory=list)  # character ranges of the sentences


def _word_count(text: str) -> int:
    return len(text.split())


def build_passages(
    sentences: Dataset,
    corpus: str,
    seed: int,
    passage_sentences: tuple[int, int] = (1, 3),
    passage_words: tuple[int, int] = (20, 100),
    target_words: tuple[int, int] = (3, 10),
) -> list[Passage]:
    """Passages of consecutive sentences of one paragraph (sizes drawn per passage), with their mention targets.

    Sentences are walked in order; each passage takes the next k sentences (k drawn from ``passage_sentences``, then
    smaller k until the passage has ``passage_words`` words); a sentence that fits in no passage is skipped.
    """
    lo_k, hi_k = passage_sentences
    lo_w, hi_w = passage_words
    columns = sentences.select_columns(["doc_id", "para_id", "sentence", "mentions"])[:]
    groups: dict[tuple[int, int], list[int]] = {}
    for i, key in enumerate(zip(columns["doc_id"], columns["para_id"])):
        groups.setdefault(key, []).append(i)
    passages: list[Passage] = []
    for (doc_id, para_id), rows in groups.items():
        rng = _rng(seed, corpus, doc_id, para_id)
        i = 0
        while i < len(rows):
            first = min(rng.randint(lo_k, hi_k), len(rows) - i)
            for k in range(first, lo_k - 1, -1):
                chosen = rows[i : i + k]
                text = " ".join(columns["sentence"][r].strip() for r in chosen)
                if lo_w <= _word_count(text) <= hi_w:
                    passages.append(_passage(columns, chosen, corpus, doc_id, target_words))
                    i += k
                    break
            else:
                i += 1
    return passages


def _passage(columns: Mapping[str, list], rows: list[int], corpus: str, doc_id: int, target_words) -> Passage:
    parts, targets, slots, offset = [], [], [], 0
    for r in rows:
        raw = columns["sentence"][r]
        sentence = raw.strip()
        shift = offset - (len(raw) - len(raw.lstrip()))
        for m in columns["mentions"][r]:
            start, end = m["start"] + shift, m["end"] + shift
            text = raw[m["start"] : m["end"]]
            if target_words[0] <= _word_count(text) <= target_words[1] and content_stems(text):
                targets.append((start, end, f"mention:{m['phrase_class']}"))
        slots.append((offset, offset + len(sentence)))
        parts.append(sentence)
        offset += len(sentence) + 1
    return Passage(corpus, doc_id, " ".join(parts), targets, slots)


def ngram_target(passage: Passage, rng: random.Random, target_words: tuple[int, int]) -> tuple[int, int] | None:
    """A random span of ``target_words`` words inside one sentence (edge punctuation trimmed), with 2+ content words."""
    for _ in range(10):
        a, b = passage.ngram_slots[rng.randrange(len(passage.ngram_slots))]
        words = [(m.start() + a, m.end() + a) for m in re.finditer(r"\S+", passage.text[a:b])]
        if len(words) < target_words[0]:
            continue
        n = rng.randint(target_words[0], min(target_words[1], len(words)))
        i = rng.randrange(len(words) - n + 1)
        start, end = words[i][0], words[i + n - 1][1]
        text = passage.text[start:end]
        lead = len(text) - len(text.lstrip(".,;:!?\"'()[]"))
        trail = len(text) - len(text.rstrip(".,;:!?\"'()[]"))
        start, end = start + lead, end - trail
        if end > start and len(content_stems(passage.text[start:end])) >= 2:
            return start, end
    return None


# ------------------------------------------------------------------------------------------------- paraphrases
class QueryParaphraser:
    """Paraphrases of a target span with at least one content word changed (see the module docstring).

    Candidates: the rules of :class:`LexicalParaphraser` on the whole span, then substitution variants: 1 to
    ``max_units`` units (2-3-word units first, then content words) replaced at once by a pivot paraphrase (score >=
    ``pivot_min_score``) or a synonym-table entry, drawn with weight ``1 / (rank + 1)``. Replacements made of
    uncommon words (wordfreq Zipf below ``min_zipf``) are not used.
    """

    def __init__(
        self,
        lexical=None,
        pivot=None,
        synonyms=None,
        pivot_min_score: float = 0.15,
        max_units: int = 3,
        min_zipf: float | None = 3.0,
    ):
        self.lexical = lexical
        self.pivot = pivot
        self.synonyms = synonyms
        self.pivot_min_score = pivot_min_score
        self.max_units = max_units
        self.min_zipf = min_zipf

    def common(self, text: str) -> bool:
        """Whether every word of ``text`` is common (wordfreq Zipf >= ``min_zipf``): the pivot and WordNet tables
        also hold rare or archaic words ("macerals", "adduced") that no real query would use."""
        if self.min_zipf is None:
            return True
        from wordfreq import zipf_frequency  # lazy: keeps wordfreq off the registry's scan

        return all(zipf_frequency(t, "en") >= self.min_zipf for t in _TOKEN.findall(text) if not t.isdigit())

    def _options(self, unit: str) -> list[str]:
        options: list[str] = []
        if self.pivot is not None:
            options += self.pivot.paraphrases(unit, limit=5, min_score=self.pivot_min_score)
        if self.synonyms is not None:
            options += self.synonyms.get(unit.lower())[:5]
        out, seen = [], {unit.lower()}
        for option in options:
            if option.lower() not in seen and changes_content(unit, option) and self.common(option):
                seen.add(option.lower())
                out.append(option)
        return out

    def _slots(self, words: list[str]) -> list[tuple[int, int, list[str]]]:
        slots, used = [], set()
        for n in (3, 2, 1):
            for i in range(len(words) - n + 1):
                if used & set(range(i, i + n)):
                    continue
                unit = " ".join(_EDGE_PUNCT.sub("", w) for w in words[i : i + n])
                if n == 1 and (not unit.isalpha() or unit.lower() in STOP_WORDS):
                    continue
                if n > 1 and not content_stems(unit):
                    continue
                options = self._options(unit)
                if options:
                    slots.append((i, i + n, options))
                    used.update(range(i, i + n))
        return sorted(slots)

    def candidates(self, target: str, rng: random.Random) -> list[str]:
        out: list[str] = []
        if self.lexical is not None:
            out += [c for c in self.lexical.candidates(target) if self.common(c)]
        words = target.split()
        slots = self._slots(words)
        for _ in range(3 if slots else 0):
            chosen = sorted(rng.sample(slots, rng.randint(1, min(self.max_units, len(slots)))))
            new, cursor = [], 0
            for start, end, options in chosen:
                new += words[cursor:start]
                replacement = rng.choices(options, weights=[1.0 / (r + 1) for r in range(len(options))])[0]
                last = words[end - 1]
                new += replacement.split()
                tail = last[len(last.rstrip(".,;:!?")) :]
                if tail:
                    new[-1] += tail
                cursor = end
            out.append(" ".join(new + words[cursor:]))
        seen, kept = {target.lower()}, []
        for candidate in (" ".join(c.split()) for c in out):
            if candidate and candidate.lower() not in seen and changes_content(target, candidate):
                seen.add(candidate.lower())
                kept.append(candidate)
        return kept


def make_query_paraphraser(
    targets: Sequence[str],
    paraphrasers: Sequence[str],
    glove: str | None,
    use_wordnet: bool,
    pivot_min_score: float,
    min_zipf: float | None,
    benchmarks_dir: str | None,
    cache: bool,
    progress: bool,
) -> QueryParaphraser:
    """The :class:`QueryParaphraser` from the named sources (``lexical``, ``pivot``), benchmark items removed."""
    unknown = set(paraphrasers) - {"lexical", "pivot"}
    if unknown:
        raise ValueError(f"Unknown SLICE paraphrasers {sorted(unknown)}; use 'lexical' and/or 'pivot'.")
    synonyms = lexical = pivot = None
    if "lexical" in paraphrasers:
        synonyms = load_synonym_table(list(targets), glove, use_wordnet, cache=cache)
        lexical = LexicalParaphraser(synonyms, progress=False)
    if "pivot" in paraphrasers:
        pivot = PivotParaphraser(
            min_score=pivot_min_score, benchmarks_dir=benchmarks_dir, progress=progress, exclude_benchmarks=True
        ).table
    return QueryParaphraser(lexical, pivot, synonyms, pivot_min_score, min_zipf=min_zipf)


# ---------------------------------------------------------------------------------------------------- triplets
def in_validation(corpus: str, doc_id: int, valid_percent: float, seed: int) -> bool:
    """Whether a document is held out (a stable hash of corpus, document and seed)."""
    return zlib.crc32(f"{seed}:{corpus}:{doc_id}".encode()) % 10_000 < valid_percent * 100


def make_triplets(
    passages: list[Passage],
    paraphraser: QueryParaphraser,
    seed: int = 0,
    target_words: tuple[int, int] = (3, 10),
    verbatim_fraction: float = 0.2,
    hard_negative_fraction: float = 0.5,
    valid_percent: float = 5.0,
    max_hard_overlap: float = 0.5,
    corrupted_fraction: float = 0.5,
    vocabulary: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One triplet per passage that yields a target and a query (see the module docstring); negatives come from the
    passage's own split (train/valid), so validation documents never appear in training triplets. ``vocabulary``:
    the content words that corrupted targets draw their replacements from."""
    split_of = ["valid" if in_validation(p.corpus, p.doc_id, valid_percent, seed) else "train" for p in passages]
    by_doc: dict[tuple[str, int], list[int]] = {}
    by_split: dict[str, list[int]] = {"train": [], "valid": []}
    for i, p in enumerate(passages):
        by_doc.setdefault((p.corpus, p.doc_id), []).append(i)
        by_split[split_of[i]].append(i)
    rows = []
    for i, p in enumerate(passages):
        rng = _rng(seed, "triplet", p.corpus, p.doc_id, i)
        options = list(p.targets)
        rng.shuffle(options)
        verbatim = rng.random() < verbatim_fraction
        chosen = None
        for start, end, source in options[:8]:
            target = p.text[start:end]
            query = target if verbatim else next(iter(_pick(paraphraser.candidates(target, rng), rng)), None)
            if query:
                chosen = (start, end, source, query)
                break
        if chosen is None:
            span = ngram_target(p, rng, target_words)
            if span is not None:
                target = p.text[span[0] : span[1]]
                query = target if verbatim else next(iter(_pick(paraphraser.candidates(target, rng), rng)), None)
                if query:
                    chosen = (span[0], span[1], "ngram", query)
        if chosen is None:
            continue
        start, end, source, query = chosen
        target = p.text[start:end]
        negative, kind = None, ""
        if vocabulary and rng.random() < hard_negative_fraction * corrupted_fraction:
            corrupted = corrupt_span(target, rng, vocabulary)
            if corrupted is not None:
                negative, kind = p.text[:start] + corrupted + p.text[end:], "corrupted-target"
        if negative is None:
            hard = (
                hard_negative_fraction
                * (1 - corrupted_fraction)
                / max(1e-9, 1 - hard_negative_fraction * corrupted_fraction)
            )
            negative, kind = _negative(i, p, target, query, passages, by_doc, by_split[split_of[i]], rng, hard,
                                       max_hard_overlap)  # fmt: skip
        if negative is None:
            continue
        rows.append(
            {
                "query": query,
                "positive": p.text,
                "negative": negative,
                "target": target,
                "target_start": start,
                "target_end": end,
                "query_kind": "verbatim" if verbatim else "paraphrase",
                "negative_kind": kind,
                "target_source": source,
                "corpus": p.corpus,
                "doc_id": p.doc_id,
                "split": split_of[i],
            }
        )
    return rows


def _pick(candidates: list[str], rng: random.Random) -> list[str]:
    return [rng.choice(candidates)] if candidates else []


def corrupt_span(target: str, rng: random.Random, vocabulary: Sequence[str], max_words: int = 2) -> str | None:
    """``target`` with 1..``max_words`` of its content words replaced by random vocabulary words of another stem
    (capitalisation and trailing punctuation kept): the same context with a near-miss phrase, a hard negative that
    only a span of the right extent tells apart (Phrase-BERT corrupts its negatives the same way)."""
    words = target.split()
    slots = [
        i
        for i, w in enumerate(words)
        if _EDGE_PUNCT.sub("", w).isalpha() and _EDGE_PUNCT.sub("", w).lower() not in STOP_WORDS
    ]
    if not slots:
        return None
    for i in rng.sample(slots, rng.randint(1, min(max_words, len(slots)))):
        core = _EDGE_PUNCT.sub("", words[i])
        for _ in range(10):
            new = rng.choice(vocabulary)
            if _stem(new) != _stem(core.lower()):
                break
        new = new.capitalize() if core[:1].isupper() else new
        words[i] = words[i].replace(core, new, 1)
    return " ".join(words)


def _negative(i, passage, target, query, passages, by_doc, pool, rng, hard_fraction, max_overlap):
    stems = content_stems(target) | content_stems(query)
    lowered = (target.lower(), query.lower())

    def clean(j: int) -> bool:
        text = passages[j].text.lower()
        return j != i and not any(s in text for s in lowered)

    if rng.random() < hard_fraction:
        same = [
            j
            for j in by_doc[(passage.corpus, passage.doc_id)]
            if clean(j) and len(stems & content_stems(passages[j].text)) < max_overlap * max(1, len(stems))
        ]
        if same:
            return passages[rng.choice(same)].text, "same-document"
    for _ in range(20):
        j = rng.choice(pool)
        if (passages[j].corpus, passages[j].doc_id) != (passage.corpus, passage.doc_id) and clean(j):
            return passages[j].text, "other-document"
    return None, ""


# -------------------------------------------------------------------------------------------------- the builder
@dataclass
class SliceData:
    """The triplet table (columns: :data:`TRIPLET_FEATURES`) and what was counted while building it."""

    triplets: Dataset
    stats: dict[str, Any]

    def split(self, name: str) -> Dataset:
        return self.triplets.filter(lambda s: s == name, input_columns="split")


def triplet_stats(triplets: Dataset) -> dict[str, Any]:
    """Counts for the model card: triplets per split, query/negative kinds, target sources, corpora."""
    columns = triplets.select_columns(["split", "query_kind", "negative_kind", "target_source", "corpus"])[:]
    stats: dict[str, Any] = {"triplets": len(triplets)}
    for name in ("split", "query_kind", "negative_kind", "corpus"):
        stats.update({f"{name} {k}": v for k, v in sorted(Counter(columns[name]).items())})
    sources = Counter(s.split(":")[0] for s in columns["target_source"])
    stats.update({f"target_source {k}": v for k, v in sorted(sources.items())})
    return stats


def build_slice_data(
    source: str = "synthetic",
    corpora: Mapping[str, int | None] | Sequence[str] | None = None,
    spacy_model: str = "en_core_web_sm",
    passage_sentences: Sequence[int] = (1, 3),
    passage_words: Sequence[int] = (20, 100),
    target_words: Sequence[int] = (3, 10),
    verbatim_fraction: float = 0.2,
    hard_negative_fraction: float = 0.5,
    max_hard_overlap: float = 0.5,
    corrupted_fraction: float = 0.5,
    paraphrasers: Sequence[str] = ("lexical", "pivot"),
    pivot_min_score: float = 0.15,
    min_zipf: float | None = 3.0,
    glove: str | None = "glove-6b-50d",
    use_wordnet: bool = True,
    valid_percent: float = 5.0,
    max_triplets: int | None = None,
    msmarco_dataset: str = DEFAULT_MSMARCO,
    msmarco_config: str | None = "triplet",
    msmarco_valid_rows: int = 1000,
    filter_mode: str = "strict",
    benchmarks_dir: str | None = None,
    seed: int = 0,
    cache: bool = True,
    progress: bool = True,
) -> SliceData:
    """Build (or load from the cache) SLICE's training triplets; see the module docstring.

    Args:
        source: ``synthetic`` (offline corpora) or ``msmarco`` (the paper's data; needs the Hub or a local copy).
        corpora: corpus names for :func:`phrasezoo.resources.iter_corpus` with an optional document cap each
            (default :data:`DEFAULT_CORPORA`: the embedded corpus, 3,000 Wikipedia vital-article leads and the first
            25 State of the Union texts).
        passage_sentences, passage_words: sentences per passage and allowed passage length in words.
        target_words: allowed target length in words. verbatim_fraction: queries that are the target itself.
        hard_negative_fraction: hard negatives from the same document (else a passage of another document); of
            these, ``corrupted_fraction`` are the positive passage itself with the target corrupted (1-2 content words
            replaced by random common words), the rest other passages of the document that share fewer than
            ``max_hard_overlap`` of the target/query content stems.
        paraphrasers: ``lexical`` (LexicalParaphraser rules + synonym table) and/or ``pivot`` (dict-de-en pivot
            table, score >= ``pivot_min_score``); replacements need every word at wordfreq Zipf >= ``min_zipf``
            (``None``: no check). glove, use_wordnet: the synonym table's sources.
        valid_percent: documents held out for validation. max_triplets: cap (after shuffling, seeded).
        msmarco_dataset, msmarco_config, msmarco_valid_rows: the ``msmarco`` source (see
            :func:`load_msmarco_triplets`); the last ``msmarco_valid_rows`` rows are held out.
        filter_mode: benchmark filter mode (``strict`` or ``multiword``), benchmarks_dir: where the test files are.
        seed: every random choice derives from it.
    """
    if source not in SOURCES:
        raise ValueError(f"Unknown SLICE data source '{source}'; use one of {', '.join(SOURCES)}.")
    if not 0.0 <= verbatim_fraction <= 1.0 or not 0.0 <= hard_negative_fraction <= 1.0:
        raise ValueError("verbatim_fraction and hard_negative_fraction must be in [0, 1].")
    if source == "msmarco":
        return _msmarco_data(msmarco_dataset, msmarco_config, msmarco_valid_rows, max_triplets, seed)
    corpora = dict(DEFAULT_CORPORA) if corpora is None else corpora
    corpora = {name: None for name in corpora} if not isinstance(corpora, Mapping) else dict(corpora)
    return _synthetic_data(
        corpora, spacy_model, passage_sentences, passage_words, target_words, verbatim_fraction,
        hard_negative_fraction, max_hard_overlap, corrupted_fraction, paraphrasers, pivot_min_score, min_zipf, glove,
        use_wordnet, valid_percent, max_triplets, filter_mode, benchmarks_dir, seed, cache, progress,
    )  # fmt: skip


def _synthetic_data(
    corpora: dict[str, int | None],
    spacy_model: str,
    passage_sentences: Sequence[int],
    passage_words: Sequence[int],
    target_words: Sequence[int],
    verbatim_fraction: float,
    hard_negative_fraction: float,
    max_hard_overlap: float,
    corrupted_fraction: float,
    paraphrasers: Sequence[str],
    pivot_min_score: float,
    min_zipf: float | None,
    glove: str | None,
    use_wordnet: bool,
    valid_percent: float,
    max_triplets: int | None,
    filter_mode: str,
    benchmarks_dir: str | None,
    seed: int,
    cache: bool,
    progress: bool,
) -> SliceData:
    """The ``synthetic`` source of :func:`build_slice_data` (same arguments): triplets from the offline corpora,
    benchmark-filtered, shuffled and capped, cached under all the options and this module's code."""
    options = MiningOptions(max_tokens=max(10, int(target_words[1])))
    params = {
        "corpora": {n: parse_params(n, spacy_model, cap, options) for n, cap in sorted(corpora.items())},
        "passage_sentences": list(passage_sentences),
        "passage_words": list(passage_words),
        "target_words": list(target_words),
        "verbatim_fraction": verbatim_fraction,
        "hard_negative_fraction": hard_negative_fraction,
        "max_hard_overlap": max_hard_overlap,
        "corrupted_fraction": corrupted_fraction,
        "paraphrasers": sorted(paraphrasers),
        "pivot_min_score": pivot_min_score,
        "min_zipf": min_zipf,
        "glove": glove,
        "use_wordnet": use_wordnet,
        "valid_percent": valid_percent,
        "max_triplets": max_triplets,
        "filter_mode": filter_mode,
        "seed": seed,
        "code": code_version(SLICE_DATA_VERSION, [sys.modules[__name__], _paraphrase_module]),
    }
    report: dict[str, Any] = {}

    def build() -> Dataset:
        passages: list[Passage] = []
        for name, cap in sorted(corpora.items()):  # the order of the cache key
            sentences = parse_corpus(name, spacy_model, cap, options=options, cache=cache, progress=progress)
            passages += build_passages(sentences, name, seed, tuple(passage_sentences), tuple(passage_words),
                                       tuple(target_words))  # fmt: skip
        targets = sorted({p.text[a:b] for p in passages for a, b, _ in p.targets})
        paraphraser = make_query_paraphraser(
            targets, paraphrasers, glove, use_wordnet, pivot_min_score, min_zipf, benchmarks_dir, cache, progress
        )
        rows = make_triplets(passages, paraphraser, seed, tuple(target_words), verbatim_fraction,
                             hard_negative_fraction, valid_percent, max_hard_overlap, corrupted_fraction,
                             corruption_vocabulary(targets, paraphraser))  # fmt: skip
        kept = filter_and_cap(rows, benchmarks_dir, filter_mode, seed, max_triplets)
        report.update(passages=len(passages), built=len(rows), dropped_by_benchmark_filter=len(rows) - len(kept))
        return Dataset.from_list(kept, features=TRIPLET_FEATURES)

    triplets = cached_dataset("slice-triplets", params, build, enabled=cache)
    stats = triplet_stats(triplets)
    stats.update({k: v for k, v in report.items()})
    return SliceData(triplets, stats)


def corruption_vocabulary(targets: Sequence[str], paraphraser: QueryParaphraser) -> list[str]:
    """The words a corrupted target may take: the targets' common alphabetic non-stop words, sorted."""
    vocabulary = sorted({w for t in targets for w in _TOKEN.findall(t.lower()) if w.isalpha() and w not in STOP_WORDS})
    return [w for w in vocabulary if paraphraser.common(w)]


def filter_and_cap(
    rows: list[dict], benchmarks_dir: str | None, filter_mode: str, seed: int, max_triplets: int | None
) -> list[dict]:
    """``rows`` without the triplets that touch a test benchmark (query, target, both passages), shuffled (seeded),
    the training split capped at ``max_triplets``: the filter runs first, so the cap counts clean triplets only."""
    kept, filter_report = remove_benchmark_items(
        rows, benchmarks_dir, key=lambda r: (r["query"], r["target"], r["positive"], r["negative"]), mode=filter_mode
    )
    random.Random(seed).shuffle(kept)
    if max_triplets is not None:
        train = [r for r in kept if r["split"] == "train"][:max_triplets]
        kept = train + [r for r in kept if r["split"] == "valid"]
    logger.info("SLICE triplets: %d built, %d kept; benchmark filter: %s", len(rows), len(kept), filter_report)
    return kept


# ------------------------------------------------------------------------------------------------------ MS MARCO
def load_msmarco_triplets(
    dataset: str = DEFAULT_MSMARCO, config: str | None = "triplet", split: str = "train", max_rows: int | None = None
) -> Dataset:
    """MS MARCO (query, positive, negative) rows from the Hub, a local copy of a Hub repository, or a TSV file.

    * a Hub id or a local folder laid out like one (``<config>/train-*.parquet`` plus a README with ``configs``):
      ``datasets.load_dataset(dataset, config, split=split)``; columns ``query``/``positive``/``negative`` (or
      ``anchor`` for ``query``);
    * a ``.tsv`` / ``.tsv.gz`` file: the official ``triples.train.small.tsv`` layout (query, positive, negative,
      tab-separated, no header).
    """
    path = Path(dataset)
    if path.suffix in (".tsv", ".gz") and path.is_file():
        rows = load_dataset("csv", data_files=str(path), delimiter="\t", column_names=["query", "positive", "negative"],
                            quoting=3, split="train")  # fmt: skip
    else:
        rows = load_dataset(dataset, config, split=split)
    if "anchor" in rows.column_names and "query" not in rows.column_names:
        rows = rows.rename_column("anchor", "query")
    missing = {"query", "positive", "negative"} - set(rows.column_names)
    if missing:
        raise ValueError(
            f"{dataset} ({config}) has columns {rows.column_names}; SLICE needs query, positive and negative. "
            "Use a triplet subset (e.g. sentence-transformers/msmarco-bm25, config 'triplet')."
        )
    rows = rows.select_columns(["query", "positive", "negative"])
    if max_rows is not None:
        rows = rows.select(range(min(max_rows, len(rows))))
    return rows


def _msmarco_data(dataset: str, config: str | None, valid_rows: int, max_rows: int | None, seed: int) -> SliceData:
    rows = load_msmarco_triplets(dataset, config, max_rows=None if max_rows is None else max_rows + valid_rows)
    n = len(rows)
    valid_rows = min(valid_rows, n // 10)

    def extend(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        size = len(indices)
        return {
            **batch,
            "target": [""] * size,
            "target_start": [-1] * size,
            "target_end": [-1] * size,
            "query_kind": ["msmarco"] * size,
            "negative_kind": ["msmarco"] * size,
            "target_source": ["msmarco"] * size,
            "corpus": [dataset] * size,
            "doc_id": indices,
            "split": ["valid" if i >= n - valid_rows else "train" for i in indices],
        }

    triplets = rows.map(extend, batched=True, with_indices=True, features=TRIPLET_FEATURES)
    stats = triplet_stats(triplets)
    stats["source"] = f"{dataset} ({config})"
    return SliceData(triplets, stats)
