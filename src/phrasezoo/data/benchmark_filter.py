"""Keep test-benchmark items out of training data.

:func:`remove_benchmark_items` drops every training item (a phrase, a pair or tuple of phrases, a sentence, a
document) that touches an item of a test benchmark, and reports how many it dropped per benchmark. Builders call it
on what they mine before training, so that no recipe trains on what the suite measures.

What counts as a benchmark item (read from the files the evaluation harness reads: ``$PHRASEZOO_BENCHMARKS`` or
``../shared/benchmarks``, and the ``autofj`` package):

| benchmark | items |
|---|---|
| ``ppdb``, ``ppdb_filtered`` | both phrases of every pair (pos and neg), and the pair itself |
| ``turney`` | every query bigram, answer, distractor and the two component words |
| ``bird`` | both terms of every pair, and the pair |
| ``yago``, ``umls`` | every mention and every gold name |
| ``conll2003``, ``bc5cdr`` | every test mention (as a phrase) and every test sentence (by containment) |
| ``autofj`` | every left and right title of the 50 datasets |
| ``stsb_context`` | every STS-B sentence, hidden paraphrase and passage (exact, and by containment) |

Matching is on a normal form (Unicode NFKC, lower case, punctuation to spaces, whitespace collapsed), so "New
York-based" and "new york based" are the same item. A training string matches when its normal form *equals* an item
of any benchmark, or when it *contains* a sentence-level item (STS-B sentences and passages, CoNLL/BC5CDR test
sentences) of at least ``min_contained_words`` words. Short phrases are never matched by containment: a document
that mentions "Germany" stays.

Two modes. ``"strict"`` (the default) drops an item when any of its strings equals any benchmark string, single
words included: Turney's 11k answers and distractors are common words ("car"), so this removes every paraphrase pair
of those words. ``"multiword"`` keeps single-word strings unless the item also holds their benchmark partner: it
drops an item when one of its strings equals a benchmark string of two or more words, when two of its strings form a
benchmark pair (PPDB, BiRD, Turney query + candidate, YAGO/UMLS mention + gold name, AutoFJ right + gold left title,
STS-B sentence + paraphrase), or by containment. Say in the recipe which mode its data used.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from phrasezoo.resources.splits import normalize

logger = logging.getLogger(__name__)

T = TypeVar("T")

BENCHMARKS: tuple[str, ...] = (
    "ppdb",
    "ppdb_filtered",
    "turney",
    "bird",
    "yago",
    "umls",
    "conll2003",
    "bc5cdr",
    "autofj",
    "stsb_context",
)
MIN_CONTAINED_WORDS = 5
MODES = ("strict", "multiword")
_SHINGLE = 4  # words that key the containment index (<= MIN_CONTAINED_WORDS)


def default_benchmarks_dir() -> Path:
    """``$PHRASEZOO_BENCHMARKS`` or ``../shared/benchmarks`` relative to the current directory (the harness's rule)."""
    return Path(os.environ.get("PHRASEZOO_BENCHMARKS") or Path("..") / "shared" / "benchmarks")


# ----------------------------------------------------------------------------------------------- readers
def _file(root: Path, *parts: str) -> Path:
    path = root.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"Benchmark file {path} not found: point benchmarks_dir (or PHRASEZOO_BENCHMARKS) at the folder that "
            f"holds {parts[0]}/ (e.g. ../shared/benchmarks), or leave {parts[0]!r} out of `benchmarks`."
        )
    return path


def _ppdb(root: Path, name: str) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    with open(_file(root, "ppdb", f"{name}.json"), encoding="utf8") as handle:
        rows = json.load(handle)
    pairs = [(str(r[0]), str(r[1])) for r in rows]
    return [p for pair in pairs for p in pair], pairs, []


def _turney(root: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    strings, pairs = [], []
    with open(_file(root, "turney", "turney.txt"), encoding="utf8") as handle:
        for line in handle:
            if line.strip():
                fields = [f.strip() for f in line.rstrip("\n").split(" | ")]
                strings.extend(fields)
                pairs.extend((fields[0], other) for other in fields[1:])
    return strings, pairs, []


def _bird(root: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    with open(_file(root, "bird", "bird.tsv"), encoding="utf8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    i1, i2 = rows[0].index("term1"), rows[0].index("term2")
    pairs = [(r[i1], r[i2]) for r in rows[1:] if r]
    return [p for pair in pairs for p in pair], pairs, []


def _names(root: Path, name: str) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    strings, pairs = [], []
    with open(_file(root, name, f"{name}_test_samples.tsv"), encoding="utf8") as handle:
        for line in handle:
            fields = [f for f in line.rstrip("\r\n").split("\t")[:2] if f.strip()]
            strings.extend(fields)
            if len(fields) == 2:
                pairs.append((fields[0], fields[1]))
    return strings, pairs, []


def _ner(root: Path, name: str) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    mentions, sentences = [], []
    with open(_file(root, name, "test.jsonl"), encoding="utf8") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = json.loads(line)
            for tokens, spans in zip(obj["sentences"], obj["ner"]):
                sentences.append(" ".join(tokens))
                mentions.extend(" ".join(tokens[start : end + 1]) for start, end, _label in spans)
    return mentions, [], sentences


def autofj_root() -> Path:
    """``autofj/benchmark`` inside the installed `autofj` package (found without importing it)."""
    spec = importlib.util.find_spec("autofj")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("AutoFJ titles need the PyPI package `autofj`: pip install autofj==0.0.6")
    return Path(spec.origin).parent / "benchmark"


def _autofj(_root: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    import pandas as pd  # lazy: pandas, for the AutoFJ tables only

    strings: list[str] = []
    pairs: list[tuple[str, str]] = []
    for folder in sorted(autofj_root().iterdir()):
        if (folder / "gt.csv").exists():
            for side in ("left.csv", "right.csv"):
                strings.extend(pd.read_csv(folder / side)["title"].astype(str).tolist())
            gold = pd.read_csv(folder / "gt.csv")
            pairs.extend(zip(gold["title_r"].astype(str), gold["title_l"].astype(str)))
    return strings, pairs, []


def _stsb_context(root: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    with open(_file(root, "stsb_context", "sts-test-sentences-clean.tsv"), encoding="cp1252", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header = rows[0]
    columns = [header.index(c) for c in ("line", "paraphrase", "passage")]
    body = [r for r in rows[1:] if len(r) == len(header)]
    texts = [r[i] for r in body for i in columns]
    return texts, [(r[columns[0]], r[columns[1]]) for r in body], texts


_READERS: dict[str, Callable[[Path], tuple[list[str], list[tuple[str, str]], list[str]]]] = {
    "ppdb": lambda root: _ppdb(root, "ppdb"),
    "ppdb_filtered": lambda root: _ppdb(root, "ppdb_filtered"),
    "turney": _turney,
    "bird": _bird,
    "yago": lambda root: _names(root, "yago"),
    "umls": lambda root: _names(root, "umls"),
    "conll2003": lambda root: _ner(root, "conll2003"),
    "bc5cdr": lambda root: _ner(root, "bc5cdr"),
    "autofj": _autofj,
    "stsb_context": _stsb_context,
}


# -------------------------------------------------------------------------------------------- blocklist
@dataclass
class BenchmarkBlocklist:
    """Normalised benchmark items: exact strings and pairs per benchmark, and an index of sentence-level items."""

    strings: dict[str, frozenset[str]]
    pairs: dict[str, frozenset[tuple[str, str]]]
    min_contained_words: int = MIN_CONTAINED_WORDS
    _owners: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _shingles: dict[tuple[str, ...], list[tuple[str, str]]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        items: dict[str, tuple[list[str], list[tuple[str, str]], list[str]]],
        min_contained_words: int = MIN_CONTAINED_WORDS,
    ) -> BenchmarkBlocklist:
        """From raw ``{benchmark: (strings, pairs, sentences for containment)}``."""
        if min_contained_words < _SHINGLE:
            raise ValueError(f"min_contained_words must be at least {_SHINGLE}.")
        strings = {b: frozenset(n for n in map(normalize, s) if n) for b, (s, _, _) in items.items()}
        pairs = {b: frozenset(_pair_key(x, y) for x, y in p) for b, (_, p, _) in items.items()}
        block = cls(strings, pairs, min_contained_words)
        owners: dict[str, list[str]] = {}
        for benchmark, normalised in strings.items():
            for text in normalised:
                owners.setdefault(text, []).append(benchmark)
        block._owners = {text: tuple(names) for text, names in owners.items()}
        for benchmark, (_, _, sentences) in items.items():
            for sentence in sentences:
                words = normalize(sentence).split()
                if len(words) >= min_contained_words:
                    block._shingles.setdefault(tuple(words[:_SHINGLE]), []).append((" ".join(words), benchmark))
        return block

    @property
    def benchmarks(self) -> list[str]:
        return list(self.strings)

    def sizes(self) -> dict[str, int]:
        """Distinct normalised strings per benchmark."""
        return {b: len(s) for b, s in self.strings.items()}

    def matches(self, text: str, mode: str = "strict") -> set[str]:
        """Benchmarks that ``text`` equals an item of (in ``"multiword"`` mode: an item of two or more words), or
        contains a sentence-level item of."""
        if mode not in MODES:
            raise ValueError(f"Unknown mode {mode!r}; use one of {MODES}.")
        key = normalize(text)
        found = set(self._owners.get(key, ())) if mode == "strict" or " " in key else set()
        if self._shingles:
            words = key.split()
            for i in range(len(words) - self.min_contained_words + 1):
                candidates = self._shingles.get(tuple(words[i : i + _SHINGLE]))
                if candidates:
                    for sentence, benchmark in candidates:
                        if benchmark not in found and " ".join(words[i : i + sentence.count(" ") + 1]) == sentence:
                            found.add(benchmark)
        return found

    def pair_matches(self, left: str, right: str, mode: str = "strict") -> set[str]:
        """Benchmarks holding the pair (either order) or either side (see :meth:`matches`)."""
        key = _pair_key(left, right)
        return {b for b, p in self.pairs.items() if key in p} | self.matches(left, mode) | self.matches(right, mode)

    def item_matches(self, strings: Sequence[str], mode: str = "strict") -> set[str]:
        """Benchmarks touched by any string of one training item, or by any pair inside it."""
        found: set[str] = set()
        for text in strings:
            found |= self.matches(text, mode)
        for i in range(len(strings)):
            for j in range(i + 1, len(strings)):
                key = _pair_key(strings[i], strings[j])
                found |= {b for b, p in self.pairs.items() if key in p}
        return found


def _pair_key(left: str, right: str) -> tuple[str, str]:
    a, b = normalize(left), normalize(right)
    return (a, b) if a <= b else (b, a)


def load_blocklist(
    benchmarks_dir: str | Path | None = None,
    benchmarks: Iterable[str] | None = None,
    min_contained_words: int = MIN_CONTAINED_WORDS,
) -> BenchmarkBlocklist:
    """The items of the named benchmarks (all of :data:`BENCHMARKS` by default), cached per folder and selection.

    A missing file raises ``FileNotFoundError`` with the fix: a filter that silently skipped a benchmark would let
    its items into training.
    """
    names = tuple(benchmarks) if benchmarks is not None else BENCHMARKS
    unknown = [b for b in names if b not in _READERS]
    if unknown:
        raise ValueError(f"Unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}.")
    root = Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    return _load_blocklist(str(root.resolve()), names, min_contained_words)


@lru_cache(maxsize=4)
def _load_blocklist(root: str, names: tuple[str, ...], min_contained_words: int) -> BenchmarkBlocklist:
    items = {name: _READERS[name](Path(root)) for name in names}
    return BenchmarkBlocklist.build(items, min_contained_words)


# ------------------------------------------------------------------------------------------------ filter
@dataclass
class FilterReport:
    """What :func:`remove_benchmark_items` dropped: items per benchmark (an item touching two counts in both)."""

    total: int
    kept: int
    dropped_per_benchmark: dict[str, int]
    mode: str = "strict"

    @property
    def dropped(self) -> int:
        return self.total - self.kept

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "total": self.total,
            "kept": self.kept,
            "dropped": self.dropped,
            "dropped_per_benchmark": dict(self.dropped_per_benchmark),
        }

    def __str__(self) -> str:
        parts = ", ".join(f"{b} {n}" for b, n in self.dropped_per_benchmark.items() if n)
        return (
            f"benchmark filter ({self.mode}): dropped {self.dropped} of {self.total} items ({parts or 'none matched'})"
        )


def _strings_of(item: Any) -> list[str]:
    if isinstance(item, str):
        return [item]
    if isinstance(item, Sequence) and all(isinstance(x, str) for x in item):
        return list(item)
    raise ValueError(
        f"Cannot read strings from training item {item!r}: pass strings, tuples of strings, or key=<function "
        "returning the item's strings>."
    )


def remove_benchmark_items(
    items: Iterable[T],
    benchmarks_dir: str | Path | None = None,
    *,
    key: Callable[[T], Sequence[str]] | None = None,
    benchmarks: Iterable[str] | None = None,
    blocklist: BenchmarkBlocklist | None = None,
    mode: str = "strict",
    log: bool = True,
) -> tuple[list[T], FilterReport]:
    """Training ``items`` without any that touch a test-benchmark item, and a per-benchmark report.

    Args:
        items: phrases, pairs/tuples of phrases (e.g. (anchor, paraphrase)), sentences or documents; or anything
            with ``key`` giving its strings.
        benchmarks_dir: folder of the benchmark files (default: ``$PHRASEZOO_BENCHMARKS`` or
            ``../shared/benchmarks``, as the evaluation harness).
        key: returns the strings of one item, or its one string (default: the item itself if a string, else its
            elements).
        benchmarks: which benchmarks to guard (default: all of :data:`BENCHMARKS`).
        blocklist: an already loaded :class:`BenchmarkBlocklist` (then ``benchmarks_dir``/``benchmarks`` are unused).
        mode: ``"strict"`` (any benchmark string, single words included) or ``"multiword"`` (see the module
            docstring).
        log: log the report at INFO level.

    Returns:
        ``(kept items in their order, FilterReport)``.
    """
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; use one of {MODES}.")
    block = blocklist or load_blocklist(benchmarks_dir, benchmarks)
    get = key or _strings_of
    kept: list[T] = []
    dropped = dict.fromkeys(block.benchmarks, 0)
    total = 0
    for item in items:
        total += 1
        strings = get(item)
        found = block.item_matches([strings] if isinstance(strings, str) else list(strings), mode)
        if found:
            for benchmark in found:
                dropped[benchmark] += 1
        else:
            kept.append(item)
    report = FilterReport(total=total, kept=len(kept), dropped_per_benchmark=dropped, mode=mode)
    if log:
        logger.info("%s", report)
    return kept, report
