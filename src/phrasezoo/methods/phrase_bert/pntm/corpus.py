"""Documents and the word + phrase vocabulary of a topic model, from a corpus mined with spaCy (paper, A.2).

* **Documents**: the mined sentences of each corpus document, in order, packed into chunks of at most
  ``max_words`` words (a Wikipedia article of 5,000 words becomes ~25 documents of the length the paper's Wiki
  set has on average, ~400 tokens being too long for a 256-token encoder).
* **Vocabulary**: words seen more than ``min_word_count`` times (the paper: more than five) that are not stop words,
  numbers or single characters, plus the most frequent mined NP/VP/ADJP/ADVP phrases of two to ``max_phrase_words``
  words (lower-cased, counted over their mentions), optionally plus sentences for sentence-level topic reading.

Every comparison of terms and documents (topic coherence, the LDA baseline's counts) uses one tokenizer,
:func:`tokenize`, so that a phrase and the text it was mined from always match.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from phrasezoo.core.errors import InputError
from phrasezoo.data.corpus.phrases import mentions_table, parse_corpus, parse_texts
from phrasezoo.data.corpus.text import split_paragraphs
from phrasezoo.data.lexical.synonyms import STOP_WORDS

PHRASE_CLASSES = ("NP", "VP", "ADJP", "ADVP")
_TOKEN = re.compile(r"[^\W_]+")
KINDS = ("word", "phrase", "sentence")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (runs of letters and digits): the one tokenizer of topic evaluation."""
    return _TOKEN.findall(text.lower())


def is_content_word(token: str) -> bool:
    """A token worth listing in a topic: not a stop word, not a number, at least two characters."""
    return len(token) > 1 and token not in STOP_WORDS and not token.isdigit() and token.isalnum()


@dataclass
class Vocabulary:
    """Terms that describe topics: ``terms[i]`` is a ``kinds[i]`` (word, phrase or sentence) seen ``counts[i]`` times."""

    terms: list[str]
    kinds: list[str]
    counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * len(self.terms)
        if not (len(self.terms) == len(self.kinds) == len(self.counts)):
            raise ValueError("Vocabulary terms, kinds and counts must have the same length.")
        bad = set(self.kinds) - set(KINDS)
        if bad:
            raise ValueError(f"Unknown vocabulary kinds {sorted(bad)}; use {KINDS}.")
        if len(set(self.terms)) != len(self.terms):
            raise ValueError("Vocabulary terms must be unique.")

    def __len__(self) -> int:
        return len(self.terms)

    def select(self, kinds: Iterable[str]) -> list[int]:
        """Indices of the terms of the given kinds."""
        wanted = set(kinds)
        return [i for i, kind in enumerate(self.kinds) if kind in wanted]

    def to_dict(self) -> dict:
        return {"terms": self.terms, "kinds": self.kinds, "counts": self.counts}

    @classmethod
    def from_dict(cls, data: dict) -> Vocabulary:
        return cls(list(data["terms"]), list(data["kinds"]), list(data.get("counts", [])))

    @classmethod
    def from_terms(cls, terms: Sequence[str]) -> Vocabulary:
        """A vocabulary from plain strings: one-token terms are words, longer ones phrases."""
        unique = list(dict.fromkeys(" ".join(t.split()) for t in terms if t.strip()))
        return cls(unique, ["word" if len(tokenize(t)) == 1 else "phrase" for t in unique])


def documents_from_sentences(
    doc_ids: Sequence[int], sentences: Sequence[str], max_words: int = 200, min_words: int = 20
) -> list[str]:
    """Pack consecutive sentences of each document into chunks of at most ``max_words`` words.

    A sentence longer than ``max_words`` is a chunk of its own; chunks shorter than ``min_words`` are dropped
    (they carry too little text to have a topic).
    """
    documents: list[str] = []
    current: list[str] = []
    length, last_doc = 0, None

    def flush() -> None:
        if current and length >= min_words:
            documents.append(" ".join(current))
        current.clear()

    for doc_id, sentence in zip(doc_ids, sentences):
        n = len(sentence.split())
        if doc_id != last_doc or length + n > max_words:
            flush()
            length = 0
        current.append(sentence)
        length += n
        last_doc = doc_id
    flush()
    return documents


def build_vocabulary(
    sentences: Sequence[str],
    phrase_counts: Counter | None = None,
    min_word_count: int = 5,
    min_phrase_count: int = 2,
    max_phrases: int | None = 20_000,
    max_phrase_words: int = 6,
    n_sentences: int = 0,
    seed: int = 0,
) -> Vocabulary:
    """Words of ``sentences`` seen more than ``min_word_count`` times plus the ``max_phrases`` most frequent phrases.

    ``phrase_counts`` maps lower-cased mined phrases to their mention counts (see :func:`mined_phrase_counts`).
    Phrases keep 2..``max_phrase_words`` tokens, at least one of them a content word, and are dropped when they
    are a vocabulary word themselves. ``n_sentences`` random sentences (seeded) are added for sentence-level
    topic reading (the paper's appendix A.4).
    """
    word_counts = Counter(t for s in sentences for t in tokenize(s))
    words = sorted(
        (w for w, c in word_counts.items() if c > min_word_count and is_content_word(w)),
        key=lambda w: (-word_counts[w], w),
    )
    terms, kinds, counts = list(words), ["word"] * len(words), [word_counts[w] for w in words]
    seen = set(terms)
    phrases = []
    for phrase, count in (phrase_counts or Counter()).items():
        tokens = tokenize(phrase)
        if count < min_phrase_count or not 2 <= len(tokens) <= max_phrase_words:
            continue
        if not any(is_content_word(t) for t in tokens) or phrase in seen:
            continue
        phrases.append((phrase, count))
    phrases.sort(key=lambda pc: (-pc[1], pc[0]))
    for phrase, count in phrases[:max_phrases]:
        terms.append(phrase)
        kinds.append("phrase")
        counts.append(count)
        seen.add(phrase)
    if n_sentences:
        pool = [s for s in dict.fromkeys(" ".join(s.split()) for s in sentences) if s not in seen]
        for sentence in random.Random(seed).sample(pool, min(n_sentences, len(pool))):
            terms.append(sentence)
            kinds.append("sentence")
            counts.append(1)
    return Vocabulary(terms, kinds, counts)


def mined_phrase_counts(sentences_dataset, classes: Sequence[str] = PHRASE_CLASSES) -> Counter:
    """Lower-cased, whitespace-normalised phrase -> mention count, over mentions of ``classes``."""
    table = mentions_table(sentences_dataset)
    counts: Counter = Counter()
    wanted = set(classes)
    for text, cls in zip(table.column("text").to_pylist(), table.column("phrase_class").to_pylist()):
        if cls in wanted:
            counts[" ".join(text.lower().split())] += 1
    return counts


@dataclass
class TopicCorpus:
    """What a topic-model run needs from a corpus: its documents, sentences and vocabulary."""

    name: str
    documents: list[str]
    sentences: list[str]
    vocabulary: Vocabulary


def load_topic_corpus(
    corpus: str = "embedded",
    spacy_model: str = "en_core_web_sm",
    max_words: int = 200,
    min_words: int = 20,
    min_word_count: int = 5,
    max_phrases: int | None = 20_000,
    n_sentences: int = 0,
    max_documents: int | None = None,
    progress: bool = True,
) -> TopicCorpus:
    """Parse ``corpus`` (cached by :func:`phrasezoo.data.parse_corpus`), chunk it into documents and build the
    vocabulary (see the module docstring)."""
    parsed = parse_corpus(corpus, spacy_model, max_documents=max_documents, progress=progress)
    sentences = list(parsed["sentence"])
    documents = documents_from_sentences(list(parsed["doc_id"]), sentences, max_words, min_words)
    if len(documents) < 2:
        raise InputError(
            f"The corpus {corpus} gives {len(documents)} document(s) of at least {min_words} words; a topic model "
            "needs two or more (give more text, or a lower min_words)."
        )
    vocabulary = build_vocabulary(
        sentences,
        mined_phrase_counts(parsed),
        min_word_count=min_word_count,
        max_phrases=max_phrases,
        n_sentences=n_sentences,
    )
    return TopicCorpus(corpus, documents, sentences, vocabulary)


def vocabulary_from_documents(
    documents: Sequence[str],
    spacy_model: str = "en_core_web_sm",
    min_word_count: int = 5,
    max_phrases: int | None = 20_000,
    n_sentences: int = 0,
    progress: bool = True,
) -> Vocabulary:
    """Parse ``documents`` with spaCy (not cached) and build their vocabulary: what ``PNTM.fit`` does when it is
    given documents only."""
    paragraphs = [(d, p, text) for d, doc in enumerate(documents) for p, text in enumerate(split_paragraphs(doc))]
    parsed = parse_texts(paragraphs, spacy_model, progress=progress)
    sentences = list(parsed["sentence"])
    return build_vocabulary(
        sentences,
        mined_phrase_counts(parsed),
        min_word_count=min_word_count,
        max_phrases=max_phrases,
        n_sentences=n_sentences,
    )
