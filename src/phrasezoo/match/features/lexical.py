"""Lexical channels: TF-IDF over character n-grams or words, fitted on the table being matched, and the clues that
embeddings miss in names (numbers and years that must agree, acronyms and initials).

* :class:`TfidfChannel`: scikit-learn's ``TfidfVectorizer`` as PolyFuzz and skrub use it (``char_wb`` 2-4 grams,
  sublinear tf, L2-normalised rows), fitted on the reference table; cosine = dot product of sparse rows. Its
  vocabulary and IDF are plain arrays, so a fitted channel saves to JSON + npz and loads without refitting.
* :func:`numbers_of` / :func:`number_agreement`: the numbers of a name (digits, years, ordinals, Roman numerals
  after a capitalised word: "Henry VIII") and whether two names agree on them. AutoFJ's tables are full of sibling
  entities that differ only in a year or a number ("2012 Wisconsin Badgers football team" / "2013 ...").
* :func:`acronym_match`: whether one name is the initials of the other ("JPM" / "JPMorgan Chase", "NYT" / "The New
  York Times").
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from phrasezoo.core.machine import usable_cores

CHAR_ANALYZER = {"analyzer": "char_wb", "ngram_range": (2, 4)}
WORD_ANALYZER = {"analyzer": "word", "token_pattern": r"(?u)\b\w+\b", "ngram_range": (1, 1)}
ANALYZERS = {"char": CHAR_ANALYZER, "word": WORD_ANALYZER}
MAX_CHARS = 1000  # longer strings are cut for the lexical channels (a name is never this long; keeps n-grams bounded)

_NUMBER = re.compile(r"\d+")
_ROMAN = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_TOKEN = re.compile(r"\S+")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(("a", "an", "and", "at", "by", "de", "for", "in", "of", "on", "the", "to", "la", "le", "du", "des"))


class TfidfChannel:
    """TF-IDF cosine over character n-grams (``kind="char"``) or words (``kind="word"``), fitted on a table."""

    def __init__(self, kind: str = "char") -> None:
        if kind not in ANALYZERS:
            raise ValueError(f"Unknown TF-IDF channel {kind!r}; use one of {', '.join(ANALYZERS)}.")
        self.kind = kind
        self.vectorizer = None
        self._recent: dict[tuple, Any] = {}  # the last transformed lists (see remember)

    def _new_vectorizer(self, vocabulary: dict[str, int] | None = None):
        from sklearn.feature_extraction.text import TfidfVectorizer  # lazy: keeps sklearn off 'import phrasezoo.match'

        return TfidfVectorizer(**ANALYZERS[self.kind], sublinear_tf=True, lowercase=True, dtype=np.float32,
                               vocabulary=vocabulary)  # fmt: skip

    def fit(self, texts: Sequence[str]) -> TfidfChannel:
        self.vectorizer = self._new_vectorizer()
        self._recent.clear()
        try:
            matrix = self.vectorizer.fit_transform([t[:MAX_CHARS] for t in texts]).astype(np.float32).tocsr()
            self.remember(texts, matrix)
        except ValueError:  # no n-gram at all (e.g. only punctuation for the word channel): an empty vocabulary
            self.vectorizer = self._new_vectorizer({" ": 0})
            self.vectorizer.idf_ = np.ones(1, dtype=np.float32)
        return self

    def remember(self, texts: Sequence[str], matrix) -> None:
        """Keep the last few transformed lists: the hybrid matcher transforms the same table several times (fit,
        candidates, features), and n-gram counting is its costliest step after the encoder. Also how a caller that
        holds the rows of ``texts`` already (reference rows) spares their recount."""
        if len(self._recent) >= 4:
            self._recent.pop(next(iter(self._recent)))
        self._recent[(len(texts), hash(tuple(texts)))] = matrix

    def transform(self, texts: Sequence[str]):
        """L2-normalised sparse rows (CSR, float32); a text with no known n-gram is an all-zero row."""
        if self.vectorizer is None:
            raise RuntimeError("Fit the TF-IDF channel on the reference table before transforming.")
        key = (len(texts), hash(tuple(texts)))
        if key in self._recent:
            return self._recent[key]
        matrix = self.vectorizer.transform([t[:MAX_CHARS] for t in texts]).astype(np.float32).tocsr()
        self.remember(texts, matrix)
        return matrix

    def state(self) -> dict[str, Any]:
        """``{"kind", "vocabulary": [terms by column], "idf": float32 array}``: everything a fitted channel needs."""
        vocabulary = self.vectorizer.vocabulary_
        terms = [""] * len(vocabulary)
        for term, column in vocabulary.items():
            terms[column] = term
        return {"kind": self.kind, "vocabulary": terms, "idf": np.asarray(self.vectorizer.idf_, dtype=np.float32)}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TfidfChannel:
        channel = cls(state["kind"])
        channel.vectorizer = channel._new_vectorizer({t: i for i, t in enumerate(state["vocabulary"])})
        channel.vectorizer.idf_ = np.asarray(state["idf"], dtype=np.float64)
        return channel


def channel_state(prefix: str, channel) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    state = channel.state()
    return {prefix: {"kind": state["kind"], "vocabulary": state["vocabulary"]}}, {f"{prefix}_idf": state["idf"]}


def channel_from_state(meta: dict[str, Any], arrays: dict[str, np.ndarray], prefix: str):
    return TfidfChannel.from_state({**meta, "idf": arrays[f"{prefix}_idf"]})


#: queries per call of the top-k product (its output holds at most ``k + TIE_MARGIN`` entries per query)
QUERY_CHUNK = 4096
#: entries kept beyond ``k`` per query, so that ties at the k-th place are resolved by row id, as a full sort would
TIE_MARGIN = 8


def search_threads() -> int:
    """Threads of the character top-k product: ``OMP_NUM_THREADS`` when set (as faiss and torch read it), else every
    core this process may use (:func:`phrasezoo.core.machine.usable_cores`). Spark sets it in its Python workers (1 in
    each of ``local[2]``'s two, checked with pyspark 4.1), so partitions searched side by side do not oversubscribe."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return usable_cores()


def _exact_row(query_row, reference_t, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One query's best ``k`` (value, column) by a full product: for a row whose ties run past the margin."""
    row = (query_row @ reference_t).tocsr()
    return _best(row.data, row.indices, k)


def _best(values: np.ndarray, columns: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest values, ties broken by the lower column (row id): best first."""
    order = np.lexsort((columns, -values))[:k]
    return values[order], columns[order]


def sparse_top_k(queries, reference, k: int, chunk: int = QUERY_CHUNK, reference_t=None,
                 threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Best ``k`` reference rows per query by sparse dot product (cosine of L2-normalised rows).

    The product keeps only each query's best ``k + TIE_MARGIN`` entries as it goes (``sparse_dot_topn``, exact, in
    ``threads`` threads): at a million names a query shares an n-gram with about half the table, and the full
    product of a chunk of queries with it is billions of entries. Ties are broken by the lower row id; a query whose
    k-th value ties past the margin is recomputed in full, so the answer is the full sort's.

    Returns ``(scores, ids)`` of shape ``(n_queries, k)``, best first; id -1 (score -inf) where fewer than ``k``
    reference rows share an n-gram with the query. ``reference_t``: ``reference.T.tocsr()`` made once by a caller
    that searches the same table many times (at a million rows the transpose costs seconds per call).
    """
    from sparse_dot_topn import sp_matmul_topn  # lazy: it imports scipy

    n = queries.shape[0]
    k_eff = min(k, reference.shape[0])
    scores = np.full((n, k), -np.inf, dtype=np.float32)
    ids = np.full((n, k), -1, dtype=np.int64)
    ref_t = reference.T.tocsr() if reference_t is None else reference_t
    if n == 0 or k_eff == 0 or ref_t.nnz == 0:
        return scores, ids
    queries = queries.tocsr().astype(ref_t.dtype, copy=False)
    keep = min(k_eff + TIE_MARGIN, ref_t.shape[1])
    threads = search_threads() if threads is None else threads
    for start in range(0, n, chunk):
        part = queries[start : start + chunk]
        block = sp_matmul_topn(part, ref_t, top_n=keep, n_threads=threads if threads > 1 else None).tocsr()
        for row in range(block.shape[0]):
            lo, hi = block.indptr[row], block.indptr[row + 1]
            if lo == hi:
                continue
            values, columns = _best(block.data[lo:hi], block.indices[lo:hi].astype(np.int64), k_eff)
            if hi - lo == keep and block.data[lo:hi].min() >= values[-1]:  # the k-th value may tie past the margin
                values, columns = _exact_row(part[row], ref_t, k_eff)
            scores[start + row, : len(values)] = values
            ids[start + row, : len(values)] = columns
    return scores, ids


def paired_cosine(left, right) -> np.ndarray:
    """Row-wise dot products of two sparse matrices with the same shape (cosine of L2-normalised rows)."""
    return np.asarray(left.multiply(right).sum(axis=1)).ravel().astype(np.float32)


# ------------------------------------------------------------------------------------------------------ numbers
def _roman(text: str) -> int:
    values = [_ROMAN_VALUES[c] for c in text]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def numbers_of(text: str) -> frozenset[int]:
    """The numbers written in a name: digit runs ("2012", "7th", "1998-99" -> 1998, 99) and Roman numerals after a
    capitalised word ("Henry VIII" -> 8; a lone "I" is read as a numeral only there too)."""
    found = {int(m) for m in _NUMBER.findall(text) if len(m) <= 9}
    previous = ""
    for token in _TOKEN.findall(text):
        word = token.strip(",;:()[]")
        if word and _ROMAN.fullmatch(word) and previous[:1].isupper() and previous[1:2].islower():
            found.add(_roman(word))
        previous = word
    return frozenset(found)


def _expand_years(numbers: frozenset[int]) -> set[int]:
    """Numbers plus the two-digit forms of years and the century-completed forms of the two-digit numbers that
    follow a year ("1998-99" also reads 1999), so that "1998–99" agrees with "1998–1999"."""
    out = set(numbers)
    years = [n for n in numbers if 1000 <= n <= 2100]
    out.update(n % 100 for n in years)
    for year in years:
        for n in numbers:
            if n < 100:
                full = year - year % 100 + n
                out.add(full if full >= year else full + 100)
    return out


def number_agreement(a: frozenset[int], b: frozenset[int]) -> tuple[float, float]:
    """``(agree, conflict)`` of two names' numbers: ``agree`` = 1 when both have numbers and every number of each
    is read in the other (years in two- or four-digit form); ``conflict`` = the share of numbers (of the name with
    more) not found in the other, when both have numbers; both 0 when either has none."""
    if not a or not b:
        return 0.0, 0.0
    ea, eb = _expand_years(a), _expand_years(b)
    missing_a = sum(1 for n in a if n not in eb)
    missing_b = sum(1 for n in b if n not in ea)
    agree = float(missing_a == 0 and missing_b == 0)
    conflict = max(missing_a / len(a), missing_b / len(b))
    return agree, float(conflict)


# ---------------------------------------------------------------------------------------------- name cores
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normal_form(text: str) -> str:
    """Lower case, every run of punctuation and spaces one space: "New-York  Times!" -> "new york times"."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def core_name(text: str) -> str:
    """A name without its trailing qualifier in parentheses or after the last comma, in normal form: "I Will (The
    Beatles song)" -> "i will", "Paris, Texas" -> "paris" (Wikipedia's disambiguation style, common in catalogues)."""
    core = _QUALIFIER.sub("", text)
    if "," in core:
        core = core.rsplit(",", 1)[0]
    return normal_form(core) or normal_form(text)


# ----------------------------------------------------------------------------------------------------- acronyms
def _initials(text: str, skip_stop: bool) -> str:
    words = [w for w in _WORD.findall(text) if not (skip_stop and w.lower() in _STOP)]
    out = []
    for word in words:
        out.append(word[0])
        out.extend(c for c in word[1:] if c.isupper())  # "JPMorgan" -> J, P, M
    return "".join(out).lower()


@lru_cache(maxsize=200_000)
def acronym_form(text: str) -> str | None:
    """The letters of a name that reads as an acronym ("NYT", "U.S.A.", "I.B.M.", "JPM"), lower-cased, else ``None``.

    An acronym is one token of 2-8 letters, mostly upper case (dots and ``&`` allowed)."""
    stripped = text.strip()
    if " " in stripped or not 2 <= len(stripped) <= 16:
        return None
    letters = re.sub(r"[.&]", "", stripped)
    if not letters.isalpha() or not 2 <= len(letters) <= 8 or sum(c.isupper() for c in letters) < 2:
        return None
    return letters.lower()


def _acronym_tokens(text: str) -> list[str]:
    """The tokens of a name that read as acronyms ("NCAA", "U.S.", "FEC"), lower-cased letters."""
    out = []
    for token in text.split():
        form = acronym_form(token.strip(",;:()[]'\""))
        if form is not None:
            out.append(form)
    return out


def acronym_expansions(a: str, b: str) -> float:
    """The share of the acronym tokens of one name ("NCAA v. Smith") that spell the initials of consecutive words of
    the other ("National Collegiate Athletic Association v. Smith"), over both directions (0 when neither has one)."""
    found, total = 0, 0
    for short, long in ((a, b), (b, a)):
        tokens = _acronym_tokens(short)
        if not tokens:
            continue
        words = [w for w in _WORD.findall(long) if w.lower() not in _STOP]
        initials = "".join(w[0].lower() for w in words)
        long_lower = normal_form(long)
        for token in tokens:
            total += 1
            if token in initials and token not in long_lower.split():
                found += 1
    return found / total if total else 0.0


def acronym_match(a: str, b: str) -> float:
    """1 when one name is an acronym of the other's words (initials, with or without stop words, capitals inside
    words counted: "JPM" / "JPMorgan Chase"), 0.5 when the acronym is a prefix of those initials of 2+ letters, else 0."""
    best = 0.0
    for short, long in ((a, b), (b, a)):
        form = acronym_form(short)
        if form is None or acronym_form(long) is not None:
            continue
        for skip in (True, False):
            initials = _initials(long, skip)
            if form == initials:
                return 1.0
            if len(form) >= 2 and initials.startswith(form) and len(initials) > len(form):
                best = 0.5
    return best
