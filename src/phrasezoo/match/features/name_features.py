"""Pair features that see how names are shortened: covered words, short forms, head words and soft initialisms.

The failures of a matcher fitted on spelling alone (issue 43): a sibling made of the query plus a qualifier wins over
a true alias ("Titanic (1997 film)" for "RMS Titanic"), a short name ("Dickens") loses to a longer sibling, an
acronym loses to a sibling that shares words with its expansion. Each feature here is a number per (query, candidate)
pair, computed from the words of the two names:

* ``cover_query`` / ``cover_candidate``: the share of one name's content words found in the other (a qualifier the
  query lacks lowers ``cover_candidate``);
* ``short_form``: 1 when the words of one name are those of the other in order, the last word kept, and each other
  word kept whole or as its initial ("Dickens", "C. Dickens", "Charles Dickens" / "Charles John Huffam Dickens");
* ``head_match``: 1 when both names end in the same content word (English names put the head last);
* ``acronym_soft``: 1 when an acronym's letters spell the other name's words in order, each word giving its initial
  and maybe more of its letters ("XML" / "eXtensible Markup Language", "MTTFF" / "Mean Time To First Failure");
* ``fuzzy_cover_query`` / ``fuzzy_cover_candidate``: ``cover`` where a word also counts as found when the other
  name has it with one typo ("Maon" / "Main", "vioce" / "voice") or as an abbreviation ("Intl" / "International",
  "Bwn" / "Brown"): a noisy query's words, matched one by one;
* ``token_sort``: rapidfuzz's ``token_sort_ratio`` / 100 on the normalised names (lower case, punctuation dropped),
  an edit similarity over the whole name with its words sorted, so reordered words cost nothing and a typo costs
  one edit ("Smith, John" / "John Smtih").
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, utils
from rapidfuzz.distance import DamerauLevenshtein

from .lexical import acronym_form

NAME_FEATURES = ("cover_query", "cover_candidate", "short_form", "head_match", "acronym_soft", "fuzzy_cover_query",
                 "fuzzy_cover_candidate", "token_sort")  # fmt: skip
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(["a", "an", "and", "at", "by", "de", "for", "from", "in", "of", "on", "or", "the", "to", "with"])


@lru_cache(maxsize=200_000)
def words_of(text: str) -> tuple[str, ...]:
    """Lower-case words of a name, in order (stop words kept)."""
    return tuple(w.lower() for w in _WORD.findall(text[:1000]))


@lru_cache(maxsize=200_000)
def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words_of(text) if w not in _STOP)


def cover(a: str, b: str) -> float:
    """The share of ``a``'s content words that are words of ``b`` (1 when ``a`` has none)."""
    wa = content_words(a)
    return sum(w in content_words(b) for w in wa) / len(wa) if wa else 1.0


@lru_cache(maxsize=500_000)
def _abbreviates(short: str, word: str) -> bool:
    """Whether ``short`` (2+ letters, shorter than ``word``) is an abbreviation of ``word``: same first letter, its
    letters in order among the word's ("intl" / "international", "dept" / "department")."""
    if len(short) < 2 or len(short) >= len(word) or short[0] != word[0]:
        return False
    letters = iter(word[1:])
    return all(char in letters for char in short[1:])


@lru_cache(maxsize=500_000)
def _fuzzy_equal(a: str, b: str) -> bool:
    """The same word up to one typo (words of 4+ letters: one insertion, deletion, substitution or swap), or one
    an abbreviation of the other."""
    if a == b:
        return True
    if min(len(a), len(b)) >= 4 and DamerauLevenshtein.distance(a, b, score_cutoff=1) <= 1:
        return True
    return _abbreviates(a, b) or _abbreviates(b, a)


def fuzzy_cover(a: str, b: str) -> float:
    """The share of ``a``'s content words found in ``b`` up to a typo or an abbreviation (1 when ``a`` has none)."""
    wa, wb = content_words(a), content_words(b)
    if not wa:
        return 1.0
    found = 0
    for w in wa:
        if w in wb:
            found += 1
            continue
        for v in wb:  # a typo keeps the length within one, an abbreviation the first letter: skip the rest unasked
            if (w[0] == v[0] or abs(len(w) - len(v)) <= 1) and _fuzzy_equal(w, v):
                found += 1
                break
    return found / len(wa)


def _short_of(short: tuple[str, ...], full: tuple[str, ...]) -> bool:
    if not short or len(short) > len(full) or short[-1] != full[-1] or short == full:
        return False
    i = 0
    for word in full[:-1]:
        if i < len(short) - 1 and (short[i] == word or (len(short[i]) == 1 and word.startswith(short[i]))):
            i += 1
    return i == len(short) - 1


def short_form(a: str, b: str) -> float:
    """1 when either name is a short form of the other (see the module docstring), else 0."""
    wa, wb = words_of(a), words_of(b)
    return float(_short_of(wa, wb) or _short_of(wb, wa))


def head_match(a: str, b: str) -> float:
    """1 when the two names' last content words are equal."""
    ca = [w for w in words_of(a) if w not in _STOP]
    cb = [w for w in words_of(b) if w not in _STOP]
    return float(bool(ca) and bool(cb) and ca[-1] == cb[-1])


@lru_cache(maxsize=200_000)
def _spells(letters: str, words: tuple[str, ...]) -> bool:
    """Whether ``letters`` spell ``words`` in order: each word gives its first letter and maybe more of its letters
    (in order); a stop word may give none."""
    if not words:
        return not letters
    word, rest = words[0], words[1:]
    if word in _STOP and _spells(letters, rest):
        return True
    if not letters or letters[0] != word[0]:
        return False
    consumed, j = [1], 1  # the initial, then further letters of this word taken in order
    for char in word[1:]:
        if j < len(letters) and letters[j] == char:
            j += 1
            consumed.append(j)
    return any(_spells(letters[p:], rest) for p in reversed(consumed))


def acronym_soft(a: str, b: str) -> float:
    """1 when one name reads as an acronym whose letters spell the other's words (see the module docstring)."""
    for short, long in ((a, b), (b, a)):
        form = acronym_form(short)
        words = words_of(long)
        if form is not None and acronym_form(long) is None and 1 < len(words) <= 12:
            letters = re.sub(r"[^a-z0-9]", "", form)
            if _spells(letters, words):
                return 1.0
    return 0.0


def initials_keys(text: str) -> tuple[str, ...]:
    """A name's initials, with and without stop words ("Bank of America" -> "boa", "ba"); empty for one word."""
    words = words_of(text)
    if len(words) < 2:
        return ()
    full = "".join(w[0] for w in words)
    short = "".join(w[0] for w in words if w not in _STOP)
    return tuple(dict.fromkeys(k for k in (full, short) if len(k) >= 2))


class InitialsIndex:
    """Reference rows by their initials: an acronym query's candidates are the rows it spells ("ANSI" -> "American
    National Standards Institute"), which neither embeddings nor character n-grams put among the nearest."""

    def __init__(self, reference: list[str]) -> None:
        self.rows: dict[str, list[int]] = {}
        for row, name in enumerate(reference):
            for key in initials_keys(name):
                self.rows.setdefault(key, []).append(row)

    def candidates(self, queries: list[str], k: int) -> np.ndarray:
        """``(n, k)`` rows whose initials equal each acronym query's letters (-1 padded; none for other queries)."""
        out = np.full((len(queries), k), -1, dtype=np.int64)
        for i, query in enumerate(queries):
            form = acronym_form(query)
            if form is not None:
                found = self.rows.get(re.sub(r"[^a-z0-9]", "", form), ())[:k]
                out[i, : len(found)] = found
        return out


def token_sort(a: str, b: str) -> float:
    """Edit similarity of the two names with their words sorted, in [0, 1] (rapidfuzz ``token_sort_ratio``)."""
    return fuzz.token_sort_ratio(a, b, processor=utils.default_process) / 100.0


FUNCTIONS = {"cover_query": cover, "cover_candidate": lambda q, c: cover(c, q), "short_form": short_form,
             "head_match": head_match, "acronym_soft": acronym_soft, "fuzzy_cover_query": fuzzy_cover,
             "fuzzy_cover_candidate": lambda q, c: fuzzy_cover(c, q), "token_sort": token_sort}  # fmt: skip


def name_feature_columns(names: set[str], queries: list[str], reference: list[str], q_rows: np.ndarray,
                         c_rows: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    """The wanted features of :data:`NAME_FEATURES` for pairs ``(queries[q_rows[i]], reference[c_rows[i]])``."""
    out = {}
    pairs = list(zip(q_rows.tolist(), c_rows.tolist()))
    for name in NAME_FEATURES:
        if name in names:
            fn = FUNCTIONS[name]
            out[name] = np.fromiter((fn(queries[q], reference[c]) for q, c in pairs), dtype=np.float32,
                                    count=len(pairs))  # fmt: skip
    return out
