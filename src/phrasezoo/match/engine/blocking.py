"""Blocking: compare a query only with the reference rows that share a cheap key with it (large tables).

A blocking scheme maps a string to one or more keys; a query's candidates are the reference rows with at least one
key in common. Built-in schemes (``blocking=`` in :func:`phrasezoo.match.join`):

* ``"first_token"``: the first word, lower-cased (letters and digits only): "The New York Times" -> ``the``.
  One key per row, so the candidate sets are disjoint blocks: the fastest and the most lossy (a query whose first
  word differs from its match's, "NYTimes" vs "The New York Times", cannot find it).
* ``"tokens"``: every word of two or more characters that is not a stop word; rows sharing any such word are
  candidates. Recovers reorderings ("Times, The New York") at the cost of larger candidate sets.
* ``"char3"``: the character 3-grams of the lower-cased string without spaces; rows sharing a 3-gram are
  candidates. Survives typos and missing spaces ("NYTimes"), but common 3-grams make blocks large.
* a callable ``key(text) -> str | iterable of str`` for your own keys (e.g. a postcode or a year column's value).

Queries without any candidate are searched against the whole reference table (``blocking_fallback="all"``, the
default) or left unmatched (``"none"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOP_WORDS = frozenset(
    ("a", "an", "and", "at", "by", "de", "der", "des", "for", "from", "in", "la", "le", "of", "on", "or", "the", "to",
     "with")
)  # fmt: skip
SCHEMES = ("first_token", "tokens", "char3")
FALLBACKS = ("all", "none")

KeyFunction = Callable[[str], "str | Iterable[str]"]


def first_token(text: str) -> list[str]:
    words = WORD.findall(text.lower())
    return words[:1]


def tokens(text: str) -> list[str]:
    return sorted({w for w in WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS})


def char3(text: str) -> list[str]:
    compact = "".join(text.lower().split())
    if len(compact) < 3:
        return [compact] if compact else []
    return sorted({compact[i : i + 3] for i in range(len(compact) - 2)})


def key_function(blocking: str | KeyFunction) -> KeyFunction:
    """The key function of a scheme name (see the module docstring) or a user callable (returned as is)."""
    if callable(blocking):
        return blocking
    schemes = {"first_token": first_token, "tokens": tokens, "char3": char3}
    if blocking not in schemes:
        raise ValueError(
            f"Unknown blocking scheme {blocking!r}. Use one of {', '.join(SCHEMES)}, a function text -> key(s), "
            f"or blocking=None to compare every pair."
        )
    return schemes[blocking]


def keys_of(key: KeyFunction, text: str) -> list[str]:
    found = key(text)
    if found is None:
        return []
    if isinstance(found, str):
        return [found] if found else []
    return [k for k in found if k]


class BlockIndex:
    """Which reference rows carry each key; gives the candidate rows of a query."""

    def __init__(self, reference: list[str], blocking: str | KeyFunction) -> None:
        self.key = key_function(blocking)
        rows: dict[str, list[int]] = {}
        for i, text in enumerate(reference):
            for k in keys_of(self.key, text):
                rows.setdefault(k, []).append(i)
        self.rows = {k: np.asarray(v, dtype=np.int64) for k, v in rows.items()}

    def candidates(self, text: str) -> np.ndarray:
        """Sorted unique reference rows sharing a key with ``text`` (empty when none does)."""
        found = [self.rows[k] for k in keys_of(self.key, text) if k in self.rows]
        if not found:
            return np.zeros(0, dtype=np.int64)
        return found[0] if len(found) == 1 else np.unique(np.concatenate(found))

    def mean_block_size(self, queries: list[str]) -> float:
        """Average number of candidates per query (the work blocking leaves), for reports."""
        return float(np.mean([len(self.candidates(q)) for q in queries])) if queries else 0.0
