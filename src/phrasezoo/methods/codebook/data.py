"""Training data of the multi-facet codebook model (Chang et al., AAAI 2021): texts with their co-occurring words.

Two kinds of examples, as in the paper (section "Self-supervision signal") and its released code:

* ``sentence``: a sentence of at most ``max_sentence_words`` words (plus ``<eos>``); its targets are the
  non-stop, in-vocabulary words of the previous and the next sentence of the same document (a set, at most
  ``max_targets``; a seeded random sample when there are more);
* ``phrase``: a maximal noun-phrase chunk of the tag pattern ``<JJ.*>*<VBG>*<NN.*>+`` over spaCy's PTB tags,
  lowercased and cut to its last ``max_phrase_words`` words; its targets are the words at most ``window`` positions
  left and right of it inside the sentence, stop words removed.

Pipeline: documents of a corpus (:func:`phrasezoo.resources.iter_corpus`; ``offline-all`` = embedded Wikipedia +
news + Wikipedia vital-article leads + State of the Union) are split into prose paragraphs, tagged and
sentence-split by spaCy (tagger + senter only: the dependency parser and NER are not needed and are 5x slower), and
cached on disk. A seeded 5% of the documents is held out (``split == "valid"``): it never reaches training and is
what the held-out reconstruction evaluation reads. The vocabulary is the training split's words (the model
tokenizer's pre-tokenization, lowercased) seen at least ``min_count`` times that have a word vector.

What is never trained on: the Wikipedia articles of the summarisation evaluation (and their vital-article leads);
through the project's benchmark filter (:mod:`phrasezoo.data.benchmark_filter`, ``multiword`` mode) every sentence
that equals or contains a benchmark sentence (STS-B-Context pairs and passages, CoNLL/BC5CDR test sentences) and
every multi-word phrase that equals a benchmark item (Turney bigrams, BiRD terms, PPDB phrases, ...), plus the
reversed Turney bigrams of Turney(10). Single words stay: they are the word2vec-like part of the signal and the
Turney unigrams are ordinary English words.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasets import Dataset, Features, List, Value, concatenate_datasets
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from phrasezoo.data.benchmark_filter import BENCHMARKS, default_benchmarks_dir, load_blocklist
from phrasezoo.data.cache import cached_dataset, code_version, corpus_fingerprint
from phrasezoo.data.corpus.text import split_paragraphs
from phrasezoo.data.lexical.synonyms import STOP_WORDS
from phrasezoo.methods.codebook.wiki_articles import embedded_wiki_articles, summarization_articles
from phrasezoo.resources import iter_corpus, load_spacy_tagger
from phrasezoo.resources.corpora import CORPUS_GROUPS, iter_wiki_leads

from .vectors import lookup_vectors, most_frequent_words

#: Bump when the meaning of the cached tables changes (the source digest covers plain code edits).
DATA_VERSION = "1"

#: The paper's noun-phrase tag pattern, one letter per token: J = JJ*, G = VBG, N = NN*.
NP_PATTERN = re.compile(r"J*G*N+")
_WORD = re.compile(r"\w+|[^\w\s]+")
_HAS_ALNUM = re.compile(r"[^\W_]")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)

TAGGED_FEATURES = Features(
    {
        "doc_id": Value("int32"),
        "source": Value("string"),
        "split": Value("string"),
        "sent_index": Value("int32"),
        "text": Value("string"),
        "words": List(Value("string")),
        "tags": List(Value("string")),
    }
)
EXAMPLE_FEATURES = Features(
    {
        "doc_id": Value("int32"),
        "split": Value("string"),
        "text": Value("string"),
        "targets": List(Value("string")),
    }
)


def stop_words() -> frozenset[str]:
    """spaCy's English stop-word list (the official list of the paper is not published), lowercased."""
    return frozenset(w.lower() for w in STOP_WORDS)


def word_tokens(text: str, lowercase: bool = True) -> list[str]:
    """The model tokenizer's pre-tokenization of ``text``: lowercased runs of word characters or of punctuation.

    Matches a ``tokenizers`` ``Lowercase`` normaliser followed by the ``Whitespace`` pre-tokenizer (``\\w+|[^\\w\\s]+``).
    """
    text = unicodedata.normalize("NFKC", text)
    return _WORD.findall(text.lower() if lowercase else text)


def normalize_item(text: str) -> str:
    """Matching form for benchmark items: NFKC, lower case, non-alphanumerics to one space."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


# ------------------------------------------------------------------------------------------------- benchmark items
@dataclass
class EvaluationItems:
    """What training must not see: the project's benchmark blocklist (``multiword`` mode) plus reversed Turney
    bigrams (the extra candidates of Turney(10))."""

    blocklist: Any
    reversed_bigrams: frozenset[str] = frozenset()
    benchmarks: tuple[str, ...] = ()

    def sentence_blocked(self, text: str) -> set[str]:
        """Benchmarks whose item ``text`` is or contains (STS-B/CoNLL/BC5CDR sentences of >= 5 words)."""
        return self.blocklist.matches(text, mode="multiword")

    def phrase_blocked(self, phrase: str) -> set[str]:
        """Benchmarks holding the multi-word ``phrase`` (single words stay: they are ordinary English words)."""
        found = self.blocklist.matches(phrase, mode="multiword")
        if normalize_item(phrase) in self.reversed_bigrams:
            found = found | {"turney"}
        return found


def load_evaluation_items(
    benchmarks_dir: str | os.PathLike | None = None, benchmarks: Iterable[str] | None = None
) -> EvaluationItems:
    """The shared benchmark blocklist (:mod:`phrasezoo.data.benchmark_filter`) of ``benchmarks`` (all by default).

    A missing benchmark file raises ``FileNotFoundError`` naming the folder to point ``benchmarks_dir`` at: a guard
    that silently skipped a benchmark would let its items into training.
    """
    names = tuple(benchmarks) if benchmarks is not None else BENCHMARKS
    blocklist = load_blocklist(benchmarks_dir, names)
    reversed_bigrams: set[str] = set()
    if "turney" in names:
        root = Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
        for line in (root / "turney" / "turney.txt").read_text(encoding="utf8").splitlines():
            query = normalize_item(line.split(" | ")[0])
            if " " in query:
                reversed_bigrams.add(" ".join(reversed(query.split())))
    return EvaluationItems(blocklist, frozenset(reversed_bigrams), names)


# ------------------------------------------------------------------------------------------------------ documents
def iter_documents(corpus: str, max_documents: int | None = None) -> Iterator[tuple[str, str]]:
    """``(source, text)`` of every document of ``corpus``, without the summarisation-evaluation articles.

    ``source`` names the part of a corpus group (``embedded-wiki``, ``wiki-leads``, ...). Excluded: the embedded
    Wikipedia articles of :func:`summarization_articles` and the vital-article leads with the same titles.
    """
    groups = {"embedded": ("embedded-wiki", "embedded-news"), **CORPUS_GROUPS}
    held = summarization_articles()
    held_texts = {a.text for a in held}
    held_titles = {a.title.lower() for a in held}
    count = 0
    for part in groups.get(corpus, (corpus,)):
        if part == "wiki-leads":
            docs: Iterable[str] = (lead.lead for lead in iter_wiki_leads() if lead.title.lower() not in held_titles)
        else:
            docs = iter_corpus(part)
        for text in docs:
            if part == "embedded-wiki" and text in held_texts:
                continue
            if max_documents is not None and count >= max_documents:
                return
            count += 1
            yield part, text


def is_held_out(doc_id: int, source: str, seed: int, valid_percent: float) -> bool:
    """Deterministic document-level split: a seeded hash of (seed, source, position) below ``valid_percent``."""
    return zlib.crc32(f"{seed}:{source}:{doc_id}".encode()) % 10_000 < valid_percent * 100


# --------------------------------------------------------------------------------------------------------- tagging
_TAGGER: dict[str, Any] = {}


def _init_tagger(spacy_model: str, threads: int | None) -> None:
    if threads is not None:
        _TAGGER["limits"] = threadpool_limits(threads)
    _TAGGER["nlp"] = load_tagger(spacy_model)


def load_tagger(spacy_model: str = "en_core_web_sm"):
    """A spaCy pipeline with the tagger and the statistical sentence splitter only (see ``load_spacy_tagger``)."""
    return load_spacy_tagger(spacy_model)


def _tag_batch(batch: list[tuple[int, str, str, str]]) -> list[dict]:
    """Tag (doc_id, source, split, paragraph) items into sentence rows (``sent_index`` filled in by the caller)."""
    nlp = _TAGGER["nlp"]
    rows = []
    items = ((text, (doc_id, source, split)) for doc_id, source, split, text in batch)
    for doc, (doc_id, source, split) in nlp.pipe(items, as_tuples=True, batch_size=64):
        for sent in doc.sents:
            words = [t.text for t in sent if not t.is_space]
            if not words:
                continue
            rows.append(
                {
                    "doc_id": doc_id,
                    "source": source,
                    "split": split,
                    "sent_index": -1,
                    "text": sent.text.strip(),
                    "words": words,
                    "tags": [t.tag_ for t in sent if not t.is_space],
                }
            )
    return rows


def tag_corpus(
    corpus: str = "offline-all",
    spacy_model: str = "en_core_web_sm",
    max_documents: int | None = None,
    valid_percent: float = 5.0,
    seed: int = 0,
    n_process: int | None = None,
    cache: bool = True,
    progress: bool = True,
) -> Dataset:
    """Every sentence of ``corpus`` with its words and PTB tags, in document order, with the document split."""
    params = {
        "corpus": corpus_fingerprint(corpus),
        "spacy_model": spacy_model,
        "max_documents": max_documents,
        "valid_percent": valid_percent,
        "seed": seed,
        "code": code_version(
            DATA_VERSION, [iter_documents, summarization_articles, embedded_wiki_articles, _tag_batch, load_tagger]
        ),  # tag_corpus itself is left out: how the work is scheduled does not change the rows
    }
    n_process = n_process or max(1, min(2, os.cpu_count() or 1))

    def paragraphs() -> Iterator[tuple[int, str, str, str]]:
        for doc_id, (source, text) in enumerate(iter_documents(corpus, max_documents)):
            split = "valid" if is_held_out(doc_id, source, seed, valid_percent) else "train"
            for paragraph in split_paragraphs(text, max_chars=5_000):
                yield doc_id, source, split, paragraph

    def batches() -> Iterator[list[tuple[int, str, str, str]]]:
        batch: list[tuple[int, str, str, str]] = []
        for item in paragraphs():
            batch.append(item)
            if len(batch) == 256:
                yield batch
                batch = []
        if batch:
            yield batch

    def build() -> Dataset:
        bar = tqdm(desc="tagging paragraphs", unit="para", disable=not progress)
        shards: list[Dataset] = []
        pending: list[dict] = []
        counters: Counter = Counter()

        def consume(batch, rows) -> None:
            for row in rows:  # documents arrive in order, so sentence positions can be numbered on the fly
                row["sent_index"] = counters[row["doc_id"]]
                counters[row["doc_id"]] += 1
            pending.extend(rows)
            bar.update(len(batch))
            if len(pending) >= 100_000:  # bound Python-object memory on large corpora: move rows into Arrow
                shards.append(Dataset.from_list(pending, features=TAGGED_FEATURES))
                pending.clear()

        if n_process <= 1:
            _init_tagger(spacy_model, None)
            for batch in batches():
                consume(batch, _tag_batch(batch))
        else:
            context = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
            with context.Pool(n_process, initializer=_init_tagger, initargs=(spacy_model, 1)) as pool:
                window: list[list] = []
                for batch in batches():  # submit a bounded window at a time: Pool.imap would read the corpus eagerly
                    window.append(batch)
                    if len(window) == 8 * n_process:
                        for done, rows in zip(window, pool.imap(_tag_batch, window)):
                            consume(done, rows)
                        window = []
                for done, rows in zip(window, pool.imap(_tag_batch, window)):
                    consume(done, rows)
        bar.close()
        if pending or not shards:
            shards.append(Dataset.from_list(pending, features=TAGGED_FEATURES))
        return shards[0] if len(shards) == 1 else concatenate_datasets(shards)

    return cached_dataset("codebook-tagged", params, build, enabled=cache)


# -------------------------------------------------------------------------------------------------------- examples
@dataclass
class CodebookData:
    """Examples (``train`` and ``valid`` splits), the vocabulary and facts for the model card."""

    kind: str
    examples: Dataset
    vocabulary: list[str]
    counts: dict[str, int] = field(default_factory=dict)  # training-split counts of the vocabulary words
    stats: dict[str, Any] = field(default_factory=dict)

    def split(self, name: str) -> Dataset:
        return self.examples.filter(lambda s: [x == name for x in s], input_columns="split", batched=True)


def noun_phrases(tags: list[str]) -> list[tuple[int, int]]:
    """Maximal ``<JJ.*>*<VBG>*<NN.*>+`` chunks as (start, end) token indices, leftmost-longest like NLTK's chunker."""
    letters = "".join(
        "J" if t.startswith("JJ") else "G" if t == "VBG" else "N" if t.startswith("NN") else "x" for t in tags
    )
    return [m.span() for m in NP_PATTERN.finditer(letters)]


def build_vocabulary(
    texts: Iterable[str], word_vectors: str, min_count: int = 2, progress: bool = False, lowercase: bool = True
) -> tuple[list[str], dict[str, int]]:
    """Words (model pre-tokenization) seen at least ``min_count`` times that have a vector, most frequent first."""
    counts: Counter = Counter()
    for text in tqdm(texts, desc="counting words", unit="text", disable=not progress):
        counts.update(word_tokens(text, lowercase))
    frequent = [w for w, c in counts.items() if c >= min_count]
    has_vector = set(lookup_vectors(word_vectors, frequent))
    words = sorted((w for w in frequent if w in has_vector), key=lambda w: (-counts[w], w))
    return words, {w: counts[w] for w in words}


def _sample(targets: list[str], limit: int, rng: random.Random) -> list[str]:
    return targets if len(targets) <= limit else rng.sample(targets, limit)


def _content(words: Iterable[str], vocab: set[str], stops: frozenset[str], lowercase: bool = True) -> list[str]:
    """Distinct lowercased words that are in the vocabulary, not stop words and not punctuation, in order."""
    out = []
    for word in words:
        w = word.lower() if lowercase else word
        if w in vocab and w.lower() not in stops and _HAS_ALNUM.search(w):
            out.append(w)
    return list(dict.fromkeys(out))


def _add_example(
    out: list[dict], drops: Counter, example: dict, targets: list[str], max_targets: int, seed: int, position: int
) -> None:
    """Append ``example`` with its ``targets`` (a sample of ``max_targets``, seeded by ``seed`` and the example's
    ``position`` in the corpus, so that it does not depend on the other examples), or count it as having none."""
    if not targets:
        drops["no targets"] += 1
        return
    rng = random.Random(seed * 1_000_003 + position)
    out.append({**example, "targets": _sample(targets, max_targets, rng)})


#: ``found(columns, i, drops)``: the candidates of tagged sentence ``i`` as ``(text, context words, position)``,
#: counting in ``drops`` what it skips and why
Finder = Callable[[dict[str, list], int, Counter], Iterator[tuple[str, list[str], int]]]


def sentence_finder(items: EvaluationItems, options: Mapping[str, Any]) -> Finder:
    """One candidate per sentence of at most ``max_sentence_words`` words, its context the neighbouring sentences'
    words (see the module docstring)."""
    max_sentence_words, lowercase = options["max_sentence_words"], options["lowercase"]

    def found(cols: dict[str, list], i: int, drops: Counter) -> Iterator[tuple[str, list[str], int]]:
        docs, texts, words = cols["doc_id"], cols["text"], cols["words"]
        n_words = len(word_tokens(texts[i], lowercase))
        if n_words == 0 or n_words > max_sentence_words:
            drops["too long or empty"] += 1
            return
        if i > 0 and docs[i - 1] == docs[i] and texts[i - 1] == texts[i]:
            drops["consecutive duplicate"] += 1
            return
        blocked = items.sentence_blocked(texts[i])
        if blocked:
            drops.update(f"benchmark item: {b}" for b in blocked)
            return
        neighbours = [w for j in (i - 1, i + 1) if 0 <= j < len(texts) and docs[j] == docs[i] for w in words[j]]
        yield texts[i], neighbours, i

    return found


def phrase_finder(items: EvaluationItems, options: Mapping[str, Any]) -> Finder:
    """One candidate per noun-phrase occurrence (its last ``max_phrase_words`` words), its context the +-``window``
    words around it."""
    window, max_phrase_words, lowercase = options["window"], options["max_phrase_words"], options["lowercase"]

    def found(cols: dict[str, list], i: int, drops: Counter) -> Iterator[tuple[str, list[str], int]]:
        sent_words = cols["words"][i]
        for start, end in noun_phrases(cols["tags"][i]):
            pieces = word_tokens(" ".join(sent_words[start:end]), lowercase)[-max_phrase_words:]
            if not pieces:
                continue
            phrase = " ".join(pieces)
            blocked = items.phrase_blocked(phrase)
            if blocked:
                drops.update(f"benchmark item: {b}" for b in blocked)
                continue
            context = sent_words[max(0, start - window) : start] + sent_words[end : end + window]
            yield phrase, context, i * 101 + start

    return found


#: the candidate finder of each example kind
FINDERS: dict[str, Callable[[EvaluationItems, Mapping[str, Any]], Finder]] = {
    "sentence": sentence_finder,
    "phrase": phrase_finder,
}


def kind_examples(
    tagged: Dataset, vocab: set[str], items: EvaluationItems, options: Mapping[str, Any], seed: int, progress: bool
) -> tuple[list[dict], Counter]:
    """The examples of ``options["kind"]``: every candidate its finder (:data:`FINDERS`) yields becomes an example
    with the content words of its context as targets (at most ``max_targets``); also what was dropped and why."""
    kind, lowercase = options["kind"], options["lowercase"]
    found = FINDERS[kind](items, options)
    stops = stop_words()
    drops: Counter = Counter()
    out: list[dict] = []
    cols = tagged[:]  # plain lists: per-row access to dataset columns is slow
    for i in tqdm(range(len(cols["text"])), desc=f"{kind} examples", unit="sent", disable=not progress):
        for text, context, position in found(cols, i, drops):
            example = {"doc_id": cols["doc_id"][i], "split": cols["split"][i], "text": text}
            targets = _content(context, vocab, stops, lowercase)
            _add_example(out, drops, example, targets, options["max_targets"], seed, position)
    return out, drops


def extra_words(vocab: set[str], word_vectors: str, extra_vocabulary: int, lowercase: bool = True) -> list[str]:
    """The words among the ``extra_vocabulary`` most frequent of ``word_vectors`` that ``vocab`` lacks and the
    tokenizer can produce (GloVe also lists "'s", "u.s." or "<unk>", which it splits): common words a small corpus
    leaves out of a min-count vocabulary."""
    top = most_frequent_words(word_vectors, extra_vocabulary)
    return [w for w in top if w not in vocab and word_tokens(w, lowercase) == [w]]


def examples_cache_key(tagged: Dataset, options: dict[str, Any], items: EvaluationItems, seed: int) -> dict:
    """The examples' cache key: the tagged corpus, the example options, the guarded benchmarks and the code."""
    return {
        "tagged": tagged._fingerprint,
        **options,
        "guarded": {"benchmarks": list(items.benchmarks), "sizes": items.blocklist.sizes()},
        "seed": seed,
        "code": code_version(
            DATA_VERSION,
            [
                word_tokens,
                noun_phrases,
                _content,
                _add_example,
                _sample,
                sentence_finder,
                phrase_finder,
                kind_examples,
                build_vocabulary,
            ],
        ),
    }


def build_examples(
    tagged: Dataset,
    vocab: set[str],
    items: EvaluationItems,
    options: dict[str, Any],
    seed: int,
    progress: bool,
    drops: Counter,
    corpus: str,
) -> Dataset:
    """The examples of ``options["kind"]`` (guarded against the benchmarks), counting what was dropped and why into
    ``drops``; a corpus that gives none raises ``ValueError``."""
    kind = options["kind"]
    rows, found = kind_examples(tagged, vocab, items, options, seed, progress)
    drops.update(found)
    if not rows:
        raise ValueError(
            f"No {kind} examples could be built from {corpus!r}: the corpus is too small or its training words "
            f"miss the vocabulary (min_count={options['min_count']}, {len(vocab)} words). Use a larger corpus or a "
            "lower min_count."
        )
    return Dataset.from_list(rows, features=EXAMPLE_FEATURES)


def example_stats(
    examples: Dataset, valid_percent: float, vocabulary: list[str], rule: str, items: EvaluationItems
) -> dict[str, Any]:
    """The card's facts about the examples: how many train and held out, the vocabulary and what was kept out."""
    n_valid = sum(1 for s in examples["split"][:] if s == "valid")
    return {
        "examples (train)": len(examples) - n_valid,
        "examples (held out)": n_valid,
        "held-out documents": f"{valid_percent:g}% (seeded by document)",
        "vocabulary": len(vocabulary),
        "vocabulary rule": rule,
        "mean targets per example": round(sum(len(t) for t in examples["targets"][:]) / max(1, len(examples)), 2),
        "never trained on": "the summarisation-evaluation articles; sentences equal to or containing a benchmark "
        f"sentence and multi-word phrases equal to a benchmark item ({', '.join(items.benchmarks)}), reversed "
        "Turney bigrams",
    }


def build_codebook_data(
    kind: str = "sentence",
    corpus: str = "offline-all",
    spacy_model: str = "en_core_web_sm",
    word_vectors: str = "glove-6b-50d",
    max_documents: int | None = None,
    valid_percent: float = 5.0,
    min_count: int = 2,
    extra_vocabulary: int = 0,
    max_sentence_words: int = 49,
    max_phrase_words: int = 5,
    window: int = 5,
    max_targets: int = 30,
    lowercase: bool = True,
    benchmarks_dir: str | None = None,
    guard_benchmarks: Iterable[str] | None = None,
    seed: int = 0,
    n_process: int | None = None,
    cache: bool = True,
    progress: bool = True,
) -> CodebookData:
    """Tag the corpus (cached), build the vocabulary from the training split and the examples of ``kind``.

    Args:
        kind: ``"sentence"`` (neighbouring sentences' words) or ``"phrase"`` (noun phrases, +-``window`` words).
        corpus: a corpus name for :func:`iter_documents` (``offline-all``, ``embedded``, ``hub:<id>``, a file).
        word_vectors: the frozen target space (:func:`phrasezoo.resources.load_word_vectors` name or path).
        valid_percent: share of documents held out (never trained on; the reconstruction evaluation's data).
        min_count: vocabulary threshold on training-split counts (the paper: 100 on full Wikipedia).
        extra_vocabulary: also give the model the ``extra_vocabulary`` most frequent words of ``word_vectors`` that
            the corpus vocabulary lacks (appended after it). A small corpus leaves common words out of a
            min-count vocabulary, and a model can only read words it has; these start from their word vectors
            like every input word. Training examples and targets do not change (they use the corpus vocabulary).
        max_sentence_words: longest sentence kept, in model words without ``<eos>`` (the paper: 50 with it).
        max_targets: at most this many target words per example (a seeded sample; the paper: 30).
        lowercase: lowercase inputs and targets (uncased vectors such as GloVe 6B/42B; the paper's sentence
            model keeps case with GloVe 840B). Must match the model's ``lowercase``.
        n_process: tagging processes (default: up to 2); does not change the data.
        benchmarks_dir, guard_benchmarks: where the benchmark files are and which benchmarks' items are kept out
            of training (default: all of :data:`phrasezoo.data.benchmark_filter.BENCHMARKS`).
    """
    if kind not in ("sentence", "phrase"):
        raise ValueError(f"kind must be 'sentence' or 'phrase', got {kind!r}.")
    tagged = tag_corpus(corpus, spacy_model, max_documents, valid_percent, seed, n_process, cache, progress)
    items = load_evaluation_items(benchmarks_dir, guard_benchmarks)
    options = {
        "kind": kind,
        "word_vectors": word_vectors,
        "min_count": min_count,
        "max_sentence_words": max_sentence_words,
        "max_phrase_words": max_phrase_words,
        "window": window,
        "max_targets": max_targets,
        "lowercase": lowercase,
    }
    cols = tagged.select_columns(["text", "split", "doc_id"])[:]
    train_texts = [t for t, s in zip(cols["text"], cols["split"]) if s == "train"]
    vocabulary, counts = build_vocabulary(train_texts, word_vectors, min_count, progress, lowercase)
    drops: Counter = Counter()
    examples = cached_dataset(
        f"codebook-{kind}",
        examples_cache_key(tagged, options, items, seed),
        lambda: build_examples(tagged, set(vocabulary), items, options, seed, progress, drops, corpus),
        enabled=cache,
    )
    rule = f"training-split words with count >= {min_count} that have a {word_vectors} vector"
    if extra_vocabulary:
        extra = extra_words(set(vocabulary), word_vectors, extra_vocabulary, lowercase)
        vocabulary = vocabulary + extra
        rule += f", then the {len(extra):,} words of its {extra_vocabulary:,} most frequent that are not among them"
    stats = {"corpus": corpus, "documents": len(set(cols["doc_id"])), "sentences tagged": len(tagged)}
    stats.update(example_stats(examples, valid_percent, vocabulary, rule, items))
    stats.update({f"dropped: {k}": v for k, v in drops.items()})
    return CodebookData(kind=kind, examples=examples, vocabulary=vocabulary, counts=counts, stats=stats)


# ---------------------------------------------------------------------------------------------- held-out examples
@dataclass
class HeldOut:
    """Examples of the held-out documents of a recipe, for the held-out reconstruction evaluation."""

    texts: list[str]
    targets: list[list[str]]
    frequent_targets: list[str]  # the training split's most frequent target words (a non-learned control)
    word_vectors: str
    description: str


def heldout_examples(recipe, max_examples: int = 2000, seed: int = 0, top: int = 100) -> HeldOut:
    """Up to ``max_examples`` held-out examples (seeded sample) of ``recipe``'s data, never trained on.

    The data is the recipe's own (:func:`build_codebook_data` with ``recipe.data``, from the cache when built).
    """
    options = dict(recipe.data)
    built = build_codebook_data(**options, progress=False)
    columns = built.examples[:]
    valid = [i for i, s in enumerate(columns["split"]) if s == "valid"]
    picked = sorted(random.Random(seed).sample(valid, min(max_examples, len(valid))))
    counts = Counter(w for s, ws in zip(columns["split"], columns["targets"]) if s == "train" for w in ws)
    return HeldOut(
        texts=[columns["text"][i] for i in picked],
        targets=[columns["targets"][i] for i in picked],
        frequent_targets=[w for w, _ in counts.most_common(top)],
        word_vectors=options.get("word_vectors", "glove-6b-50d"),
        description=f"{options.get('kind', 'sentence')} examples of {len(set(columns['doc_id'][i] for i in valid))} "
        f"held-out documents of {options.get('corpus', 'offline-all')}",
    )
