"""Synonym table for token-level augmentation and the offline paraphraser: WordNet lemmas plus GloVe neighbours.

PEARL draws synonyms from WordNet and from word-vector neighbours above a cosine threshold. The embedded vectors
are GloVe 6B 50-d, whose nearest neighbours are mostly *related* words rather than synonyms (north -> south,
monday -> tuesday, two -> three, increase -> decrease, barcelona -> madrid). Positive pairs built from those teach
the encoder that antonyms and co-hyponyms are paraphrases, so vector neighbours are filtered:

1. cosine >= ``threshold`` (default 0.80) among the ``top_k`` (10) nearest words;
2. *mutual* neighbours only: the word must also be among the neighbour's ``mutual_k`` (10) nearest words, which
   removes hub words ("saying", "coming") that are close to everything;
3. neighbours come from the ``max_candidates`` (50k) most frequent GloVe words that are alphabetic, two letters or
   more and not stop words; stop words and proper nouns (words only seen capitalised) are never queried;
4. trivial variants are excluded: case, hyphen and space variants, inflections (big/bigger, city/cities, same
   Porter stem, same WordNet base form: sell/sold);
5. with WordNet, :class:`WordNetFilter`: for words WordNet knows, a neighbour must be confirmed by WordNet (a
   shared sense, one word an ancestor of the other, similar adjectives) and not be an antonym; words WordNet does
   not know keep the neighbours that passed 1-4 (a lenient mode only rejects conflicts: other part of speech,
   antonyms, co-hyponyms).

WordNet synonyms (lemmas of the ``wordnet_max_senses`` most frequent senses, by SemCor counts; multiword lemmas such
as "New York City" included) come first, then vector neighbours by decreasing cosine. Keys are lower-cased words or
space-separated multiword expressions; values keep WordNet's spelling ("U.S.", "New York City").

The vector search is a blocked matrix product over normalised vectors (no Python loop over the 400k rows).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from phrasezoo.resources import WordVectors, load_word_vectors

from .wordnet import get_wordnet

_WORD = re.compile(r"^[a-z]+$")
_INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "est", "r", "st", "ly", "ies", "ied", "ier", "iest", "ily")


def _stop_words() -> frozenset[str]:
    try:
        from spacy.lang.en.stop_words import STOP_WORDS  # lazy: optional here (a short list stands in without it)
    except ImportError:  # spaCy is a hard dependency of the zoo, but keep this module usable without it
        STOP_WORDS = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "at", "for", "with", "by", "is", "was"}
    return frozenset(STOP_WORDS)


STOP_WORDS = _stop_words()


@lru_cache(maxsize=1)
def _stemmer():
    try:
        from nltk.stem import PorterStemmer  # lazy: NLTK takes seconds to import, at the first stem

        return PorterStemmer()
    except ImportError:
        return None


def is_trivial_variant(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` up to case, an inflection or a spelling of the same stem (so not a useful synonym)."""
    a, b = a.lower(), b.lower()
    if a == b or re.sub(r"[\W_]+", "", a) == re.sub(r"[\W_]+", "", b):
        return True
    short, long = sorted((a, b), key=len)
    if long.startswith(short) and long[len(short) :] in _INFLECTIONS:
        return True
    # doubled final consonant (big -> bigger) or y -> i (city -> cities)
    if len(short) >= 3 and long.startswith(short[:-1]):
        rest = long[len(short) - 1 :]
        if short[-1] == "y" and rest[0] == "i" and rest[1:] in _INFLECTIONS + ("",):
            return True
        if rest[:2] == short[-1] * 2 and rest[2:] in _INFLECTIONS:
            return True
    if short.endswith("e") and long.startswith(short[:-1]) and long[len(short) - 1 :] in _INFLECTIONS:
        return True
    stemmer = _stemmer()
    return stemmer is not None and " " not in a + b and stemmer.stem(a) == stemmer.stem(b)


def vocabulary(phrases: Iterable[str], max_ngram: int = 3) -> list[str]:
    """Lower-cased keys worth looking up for ``phrases``: alphabetic words, plus word n-grams up to ``max_ngram``
    (for WordNet multiword entries such as "new york" or "prime minister"). Sorted for determinism."""
    keys: set[str] = set()
    for phrase in phrases:
        words = phrase.lower().split()
        for n in range(1, max_ngram + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                if n == 1 and not _WORD.match(gram[0]):
                    continue
                if n > 1 and not all(re.match(r"^[a-z.'-]+$", w) for w in gram):
                    continue
                keys.add(" ".join(gram))
    return sorted(keys)


def proper_nouns(phrases: Iterable[str]) -> set[str]:
    """Lower-cased words that occur in ``phrases`` only capitalised (names: "Barcelona", "Phillips", "NATO")."""
    lower_seen: set[str] = set()
    upper_seen: set[str] = set()
    for phrase in phrases:
        for word in phrase.split():
            (upper_seen if word[:1].isupper() else lower_seen).add(word.lower())
    return upper_seen - lower_seen


@dataclass
class SynonymTable:
    """Synonyms per lower-cased word or multiword expression, best first.

    Build it with :meth:`build`; look up with :meth:`get` (case-insensitive). ``params`` records how the table was
    built (saved with it).
    """

    synonyms: dict[str, list[str]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    def get(self, key: str) -> list[str]:
        """Synonyms of a word or multiword expression (case-insensitive), best first; ``[]`` when unknown."""
        return self.synonyms.get(" ".join(key.lower().split()), [])

    def __contains__(self, key: str) -> bool:
        return bool(self.get(key))

    def __len__(self) -> int:
        return len(self.synonyms)

    def save(self, path: str | Path) -> None:
        """Write the table as JSON."""
        Path(path).write_text(json.dumps({"params": self.params, "synonyms": self.synonyms}, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | Path) -> SynonymTable:
        """Read a table written by :meth:`save`."""
        data = json.loads(Path(path).read_text())
        return cls(synonyms=data["synonyms"], params=data.get("params", {}))

    @classmethod
    def from_phrases(cls, phrases: Iterable[str], max_ngram: int = 3, **kwargs) -> SynonymTable:
        """Build the table for the words and n-grams of ``phrases`` (see :func:`vocabulary`); words only ever seen
        capitalised are treated as proper nouns (WordNet synonyms only). ``kwargs`` go to :meth:`build`."""
        phrases = list(phrases)
        return cls.build(vocabulary(phrases, max_ngram), proper_nouns=proper_nouns(phrases), **kwargs)

    @classmethod
    def build(
        cls,
        words: Iterable[str],
        vectors: WordVectors | str | None = "glove-6b-50d",
        wordnet: object | str | None = "auto",
        threshold: float = 0.80,
        top_k: int = 10,
        mutual_k: int | None = 10,
        max_candidates: int = 50_000,
        max_synonyms: int = 8,
        wordnet_max_senses: int = 1,
        block_size: int = 2048,
        proper_nouns: Iterable[str] = (),
        strict_wordnet: bool = True,
    ) -> SynonymTable:
        """Build the table for ``words`` (keys as returned by :func:`vocabulary`; other strings are lower-cased).

        Args:
            vectors: a :class:`WordVectors`, a name for :func:`load_word_vectors`, or ``None`` for WordNet only.
            wordnet: an NLTK WordNet reader, ``"auto"`` (:func:`~phrasezoo.data.lexical.wordnet.get_wordnet`, ``None`` when absent) or ``None``.
            threshold: minimum cosine for a vector neighbour (0.80 suits GloVe 50-d; larger vectors need less).
            top_k: how many nearest neighbours are considered per word before thresholding.
            mutual_k: keep a neighbour only if the word is also among the neighbour's ``mutual_k`` nearest pool
                words (``None`` disables the check).
            max_candidates: neighbours are searched among the most frequent words of the vector table only.
            max_synonyms: cap per key.
            wordnet_max_senses: how many of a word's most frequent WordNet senses contribute their lemmas.
            block_size: rows per matrix-product block (memory: block_size x max_candidates floats).
            proper_nouns: words that get no vector neighbours (the neighbours of a name are other names:
                barcelona -> madrid); :meth:`from_phrases` fills it with words only ever seen capitalised.
            strict_wordnet: a vector neighbour of a word WordNet knows must be *confirmed* by WordNet (shared sense,
                ancestor, similar adjective); with ``False`` it only must not conflict (see :class:`WordNetFilter`).
        """
        keys = sorted({" ".join(w.lower().split()) for w in words if w and w.strip()})
        wn = get_wordnet() if wordnet == "auto" else wordnet
        if isinstance(vectors, str):
            vectors = load_word_vectors(vectors)
        from_wordnet = _wordnet_synonyms(keys, wn, wordnet_max_senses) if wn is not None else {}
        checker = WordNetFilter(wn) if wn is not None else None
        proper = {w.lower() for w in proper_nouns}
        from_vectors = (
            _vector_neighbours(
                [k for k in keys if " " not in k and k not in proper],
                vectors,
                threshold,
                top_k,
                mutual_k,
                max_candidates,
                block_size,
            )
            if vectors is not None
            else {}
        )
        table: dict[str, list[str]] = {}
        for key in keys:
            merged = _merge_synonyms(key, from_wordnet.get(key, []), from_vectors.get(key, []), checker, strict_wordnet)
            if merged:
                table[key] = merged[:max_synonyms]
        params = {
            "vectors": "custom" if vectors is None or not hasattr(vectors, "words") else len(vectors.words),
            "wordnet": wn is not None,
            "threshold": threshold,
            "top_k": top_k,
            "mutual_k": mutual_k,
            "max_candidates": max_candidates,
            "max_synonyms": max_synonyms,
            "wordnet_max_senses": wordnet_max_senses,
            "strict_wordnet": strict_wordnet,
            "proper_nouns": len(proper),
        }
        return cls(synonyms=table, params=params)


def _merge_synonyms(
    key: str, wordnet: list[str], vectors: list[str], checker: WordNetFilter | None, strict_wordnet: bool
) -> list[str]:
    """``key``'s WordNet synonyms, then its vector neighbours that WordNet allows, without repeats, trivial variants
    (case, plural, ...) or forms of ``key`` itself: one table entry, in order of trust."""
    merged: list[str] = []
    seen: set[str] = set()
    allowed = [w for w in vectors if checker is None or checker.compatible(key, w, strict_wordnet)]
    for candidate in wordnet + allowed:
        low = candidate.lower()
        if low in seen or is_trivial_variant(key, candidate) or (checker and checker.same_lemma(key, low)):
            continue
        seen.add(low)
        merged.append(candidate)
    return merged


# ------------------------------------------------------------------------------------------------------ GloVe part
def candidate_rows(vectors: WordVectors, max_candidates: int) -> np.ndarray:
    """Row ids of the neighbour pool: the first ``max_candidates`` rows that are alphabetic non-stop words."""
    rows = [
        i
        for i, w in enumerate(vectors.words[:max_candidates])
        if len(w) >= 2 and _WORD.match(w) and w not in STOP_WORDS
    ]
    return np.asarray(rows, dtype=np.int64)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-8)


def _kth_similarity(matrix: np.ndarray, pool_matrix: np.ndarray, k: int, block_size: int) -> np.ndarray:
    """For each row, its k-th largest cosine to the pool, not counting the row itself (the largest, ~1.0)."""
    out = np.empty(len(matrix), dtype=np.float32)
    kk = min(k + 1, pool_matrix.shape[0])
    for lo in range(0, len(matrix), block_size):
        sims = matrix[lo : lo + block_size] @ pool_matrix.T
        part = np.partition(-sims, kk - 1, axis=1)[:, :kk]
        out[lo : lo + block_size] = -np.max(part, axis=1)  # the kk-th largest = k-th neighbour after itself
    return out


def _vector_neighbours(
    words: list[str],
    vectors: WordVectors,
    threshold: float,
    top_k: int,
    mutual_k: int | None,
    max_candidates: int,
    block_size: int,
) -> dict[str, list[str]]:
    """Nearest pool words above ``threshold`` for each query word, by decreasing cosine, trivial variants removed.

    With ``mutual_k``, a neighbour is kept only when the query word is at least as close to it as its own
    ``mutual_k``-th nearest pool word (mutual nearest neighbours): this removes "hub" words such as "saying" or
    "coming" that are close to everything.
    """
    index = vectors.index
    queries = [w for w in words if w in index and _WORD.match(w) and w not in STOP_WORDS]
    if not queries:
        return {}
    pool = candidate_rows(vectors, max_candidates)
    pool_words = [vectors.words[i] for i in pool]
    pool_matrix = _normalise(vectors.vectors[pool])
    query_matrix = _normalise(vectors.vectors[np.asarray([index[w] for w in queries])])
    k = min(top_k + 1, len(pool))  # +1: the word itself is usually its own nearest neighbour
    pairs: list[tuple[str, int, float]] = []
    for lo in range(0, len(queries), block_size):
        sims = query_matrix[lo : lo + block_size] @ pool_matrix.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top_sims = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_sims, axis=1, kind="stable")
        top, top_sims = np.take_along_axis(top, order, axis=1), np.take_along_axis(top_sims, order, axis=1)
        rows, cols = np.nonzero(top_sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist()):
            pairs.append((queries[lo + r], int(top[r, c]), float(top_sims[r, c])))
    pairs = [(w, j, s) for w, j, s in pairs if not is_trivial_variant(w, pool_words[j])]
    if mutual_k:
        used = sorted({j for _, j, _ in pairs})
        kth = dict(zip(used, _kth_similarity(pool_matrix[used], pool_matrix, mutual_k, block_size).tolist()))
        pairs = [(w, j, s) for w, j, s in pairs if s >= kth[j] - 1e-6]
    out: dict[str, list[str]] = {}
    for word, j, _ in pairs:  # already ordered by query, then by decreasing cosine
        out.setdefault(word, []).append(pool_words[j])
    return out


# ---------------------------------------------------------------------------------------------------- WordNet part
def _ranked_synsets(wn, lemma_key: str) -> list:
    """Synsets of a word, most frequent sense first (SemCor counts of the word's own lemma; ties keep WordNet's
    order, which lists nouns, verbs, adjectives, adverbs)."""
    synsets = wn.synsets(lemma_key)

    def count(synset) -> int:
        return sum(lem.count() for lem in synset.lemmas() if lem.name().lower() == lemma_key)

    return sorted(synsets, key=lambda s: -count(s))


def _wordnet_synonyms(keys: list[str], wn, max_senses: int) -> dict[str, list[str]]:
    """Lemmas of the ``max_senses`` most frequent synsets of each key ("new york" -> "New York City"); the synsets
    of the compound dev set (:func:`phrasezoo.data.lexical.dev_compound.compound_dev_synsets`) give none."""
    from .dev_compound import compound_dev_synsets  # lazy: kept in place, this module's code keys cached tables

    held_out = compound_dev_synsets(wn)
    out: dict[str, list[str]] = {}
    for key in keys:
        lemma_key = key.replace(" ", "_")
        found: list[str] = []
        for synset in _ranked_synsets(wn, lemma_key)[:max_senses]:
            if synset.name() in held_out:
                continue
            for lemma in synset.lemma_names():
                name = lemma.replace("_", " ")
                if name.lower() != key and name not in found:
                    found.append(name)
        if found:
            out[key] = found
    return out


@dataclass(frozen=True)
class _SenseInfo:
    pos: str  # part of speech of the most frequent sense ("n", "v", "a", "r")
    synsets: frozenset[str]
    antonyms: frozenset[str]
    hypernyms: frozenset[str]  # (instance) hypernyms up to ``depth`` levels of the most frequent noun/verb senses
    similar: frozenset[str]  # similar_to synsets of its adjective senses


class WordNetFilter:
    """WordNet check of a vector neighbour (results cached per word).

    Strict mode (the default of :meth:`SynonymTable.build`): when WordNet knows both words, the neighbour is kept
    only if WordNet links them: a shared sense (in any sense, so GloVe picks the *common* synonyms: mistakes ->
    errors), one an ancestor of the other within ``depth`` hypernym levels (car -> vehicle), or adjectives in one
    ``similar_to`` cluster. Antonyms are always rejected. So for known words the vectors rank and select WordNet
    relations, and only words WordNet lacks take raw neighbours.

    Lenient mode: a neighbour is rejected only when their most frequent senses differ in part of
    speech; they are antonyms; they are co-hyponyms (the most frequent noun/verb senses share an ancestor within
    ``depth`` (instance) hypernym levels, and neither is an ancestor of the other: red/blue, madrid/barcelona,
    flute/clarinet); or they are adjectives that WordNet does not put in one synset or in ``similar_to`` clusters
    (GloVe's adjective neighbours are mostly antonyms and co-hyponyms: short/long, western/southern). Words that
    share a sense, or where one is an ancestor of the other (car -> vehicle), pass; so do words unknown to WordNet.
    """

    def __init__(self, wordnet, depth: int = 3) -> None:
        self.wordnet = wordnet
        self.depth = depth
        self._cache: dict[str, _SenseInfo | None] = {}

    def info(self, word: str) -> _SenseInfo | None:
        if word not in self._cache:
            self._cache[word] = self._compute(word)
        return self._cache[word]

    def _compute(self, word: str) -> _SenseInfo | None:
        synsets = _ranked_synsets(self.wordnet, word)
        if not synsets:
            return None
        antonyms = {a.name().lower() for syn in synsets for lem in syn.lemmas() for a in lem.antonyms()}
        hypernyms: set[str] = set()
        for pos in ("n", "v"):
            frontier = [syn for syn in synsets if syn.pos() == pos][:1]
            for _ in range(self.depth):
                frontier = [h for syn in frontier for h in syn.hypernyms() + syn.instance_hypernyms()]
                hypernyms.update(h.name() for h in frontier)
        adjectives = [syn for syn in synsets if syn.pos() in ("a", "s")]
        similar = {t.name() for syn in adjectives for t in syn.similar_tos()}
        return _SenseInfo(
            pos=synsets[0].pos().replace("s", "a"),
            synsets=frozenset(syn.name() for syn in synsets),
            antonyms=frozenset(antonyms),
            hypernyms=frozenset(hypernyms),
            similar=frozenset(similar),
        )

    def base_forms(self, word: str) -> set[str]:
        """WordNet base forms of a word over all parts of speech ("sold" -> {"sell", "sold"})."""
        key = word.lower().replace(" ", "_")
        return {b for pos in ("n", "v", "a", "r") if (b := self.wordnet.morphy(key, pos))} | {key}

    def same_lemma(self, word: str, candidate: str) -> bool:
        """Whether two words share a WordNet base form (an inflection WordNet knows: sell/sold, mouse/mice)."""
        return bool(self.base_forms(word) & self.base_forms(candidate))

    def compatible(self, word: str, candidate: str, strict: bool = True) -> bool:
        """Whether ``candidate`` may stand as a synonym of ``word`` (see the class docstring).

        ``strict``: when WordNet knows both words, require a positive link (a shared sense, an ancestor, a
        ``similar_to`` adjective cluster) instead of only the absence of a conflict.
        """
        a, b = self.info(word), self.info(candidate)
        if a is None or b is None:
            return True
        if candidate in a.antonyms or word in b.antonyms:
            return False
        if a.synsets & b.synsets or a.synsets & b.hypernyms or b.synsets & a.hypernyms:
            return True  # shared sense, or one is an ancestor of the other (car -> vehicle)
        if a.synsets & b.similar or b.synsets & a.similar:
            return True  # adjectives in one similar_to cluster, one the head of the other (not two satellites)
        if strict or a.pos != b.pos or a.hypernyms & b.hypernyms:
            return False
        return a.pos != "a"
