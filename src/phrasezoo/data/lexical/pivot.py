"""Bilingual-pivot paraphrases from the German-English dictionary (PPDB's own construction, offline).

PPDB (Ganitkevitch et al., 2013) calls two English phrases paraphrases when they translate to the same foreign
phrase, and scores the pair with the pivot probability p(e2 | e1) = sum_f p(f | e1) p(e2 | f). We do the same over
Debian's ``dict-de-en`` (the TU Chemnitz "Ding" dictionary, GPL-2+; ``/usr/share/dictd/english-german.dict.dz``,
542k English entries): each entry maps an English headword to German translations; English headwords sharing a German
translation are pivot paraphrases. With uniform p(f | e) = 1 / |translations of e| and p(e | f) = 1 / |English
entries of f| - 1 (the phrase itself excluded), a pair's score is the mean of both directions' pivot probabilities
(0..1; 1 when each phrase has one translation and the other is its only partner there), and ``shared`` counts the
German translations the two have in common.

Cleaning, in order: English headwords lose a leading infinitive "to" and bracketed notes, and are skipped when they
hold placeholders (``sth.``, ``sb.``, ``…``), alternatives (``/``), sentence punctuation or more than ``max_words``
words; German translations lose ``{gender}``, ``[domain]``, ``(notes)`` and ``<refs>``. German translations with
more than ``max_fanout`` English entries are skipped (they are general words whose pairs are noise, and quadratic in
number). Pairs that differ only by spelling or inflection ("colour"/"color", "eel ladder"/"eel ladders",
"to anodise"/"anodize") are dropped by :func:`is_surface_variant` when ``filter_variants``.

The table is built once (about a minute) and cached under the phrasezoo cache dir. It still holds test-benchmark
items: :class:`PivotParaphraser` removes them with :mod:`phrasezoo.data.benchmark_filter` by default.

Train/dev split: a phrase is a *dev phrase* when a stable hash (BLAKE2b of ``"pivot:" + normalize(phrase)``) is
divisible by :data:`DEV_MODULUS`; a pair is a dev pair when either phrase is (:func:`is_dev_pivot_pair`, ~4% of
pairs). The dev suite (:mod:`phrasezoo.evaluation.dev.suite`) draws its paraphrase task from dev pairs only, and
:func:`pivot_pairs` / :class:`PivotParaphraser` serve the ``"train"`` split by default, so no training pair shares
a phrase with a dev pair.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from rapidfuzz.distance import Levenshtein
from tqdm.auto import tqdm

from ...resources import MissingResourceError, cache_dir
from ..benchmark_filter import normalize, remove_benchmark_items

logger = logging.getLogger(__name__)

DICT_PATH = Path("/usr/share/dictd/english-german.dict.dz")
INSTALL_HINT = "apt-get install dict-de-en (Debian/Ubuntu; scripts/bootstrap.sh does it when run as root)"
VERSION = 2  # bump when the construction changes: it keys the cache
SPLITS = ("all", "train", "dev")
DEV_MODULUS = 50  # 1 phrase in 50 is a dev phrase; pairs touching one (~4%) are dev pairs

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}
_BRACKETS = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)|<[^<>]*>")
_PLACEHOLDER = re.compile(r"\b(?:sth|sb|so|sbd|smb|smth)\.|…|\.\.\.")
_BAD_ENGLISH = re.compile(r"[/?!:;\"“”„=+%&*#@|\\]")
_ARTICLES = ("a", "an", "the")


def clean_paraphrases(phrase: str, candidates: list[str], limit: int | None = None) -> list[str]:
    """Candidates without empties, the input itself and duplicates (case/space-insensitive), in order, cut to limit.

    The same rule as :func:`phrasezoo.data.lexical.paraphrase.clean_paraphrases`, repeated here because that module imports
    this one (``get_paraphraser("pivot")``).
    """
    seen = {" ".join(phrase.lower().split())}
    out: list[str] = []
    for candidate in candidates:
        candidate = " ".join(candidate.split())
        key = candidate.lower()
        if candidate and key not in seen:
            seen.add(key)
            out.append(candidate)
            if limit is not None and len(out) >= limit:
                break
    return out


def _b64(text: str) -> int:
    value = 0
    for char in text:
        value = value * 64 + _B64_VALUE[char]
    return value


# ------------------------------------------------------------------------------------------------- reading
def iter_dictionary(path: str | Path = DICT_PATH) -> Iterator[tuple[str, str]]:
    """Raw ``(English headword, German translation text)`` entries of a dictd English-German dictionary.

    Entry boundaries come from the ``.index`` file beside the ``.dict.dz`` (headword, base64 offset, base64 length).
    In an entry, the headword lines come first (a long headword wraps onto lines without indentation), then an
    English line starting with one space, then the German text starting with three spaces (it wraps too). The
    one-space line holds notes ("[Br.]", "(zoology)") but also the rest of a headword that ``dictfmt`` cut at its
    first bracket ("colour" + " [Br.]/color [Am.] fastness"), so it is part of the English text returned.
    """
    path = Path(path)
    index = path.with_name(path.name.removesuffix(".dict.dz").removesuffix(".dict") + ".index")
    if not path.is_file() or not index.is_file():
        raise MissingResourceError(f"The German-English dictionary is missing ({path}, {index}): {INSTALL_HINT}")
    if path.suffix == ".dz":  # dictzip is gzip-compatible
        with gzip.open(path) as handle:
            raw = handle.read()
    else:
        raw = path.read_bytes()
    with open(index, encoding="utf8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or parts[0].startswith("00-database") or parts[0].startswith("00database"):
                continue
            text = raw[_b64(parts[1]) : _b64(parts[1]) + _b64(parts[2])].decode("utf8", errors="replace")
            head, german, in_german = [], [], False
            for row in text.split("\n"):
                if row.startswith("   "):
                    in_german = True
                if in_german:
                    german.append(row.strip())
                elif row.strip():
                    head.append(row.strip())
            if head and german:
                yield " ".join(head), " ".join(g for g in german if g)


def english_phrases(headword: str, max_words: int = 6) -> list[str]:
    """The usable English phrases of a headword: several when it lists verbs ("to kick the bucket, to bite the
    dust"), none when :func:`clean_english` rejects it."""
    parts = re.split(r",\s+(?=to\s)", headword) if headword.lower().startswith("to ") else [headword]
    return [p for p in (clean_english(part, max_words) for part in parts) if p is not None]


def clean_english(headword: str, max_words: int = 6) -> str | None:
    """A usable English phrase from a headword, or ``None`` (see the module docstring for the rules)."""
    text = headword.replace("’", "'").replace("‘", "'").strip()
    if _PLACEHOLDER.search(text):
        return None
    previous = None
    while previous != text:
        previous, text = text, _BRACKETS.sub(" ", text)
    text = " ".join(text.split())
    if len(text) > 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    if text.lower().startswith("to ") and len(text) > 3:
        text = text[3:]
    if not text or _BAD_ENGLISH.search(text) or any(c in text for c in "()[]{}<>"):
        return None
    words = text.split()
    if len(words) > max_words or (text.endswith(".") and len(words) > 3) or not any(c.isalpha() for c in text):
        return None
    return text


def german_terms(translation: str) -> list[str]:
    """The German translations of one entry: notes removed, split on ``;`` and ``|``, de-duplicated."""
    text = translation
    previous = None
    while previous != text:
        previous, text = text, _BRACKETS.sub(" ", text)
    out = []
    for term in re.split(r"[;|]", text):
        term = " ".join(term.split()).strip(" ,.")
        if term and any(c.isalpha() for c in term) and term not in out:
            out.append(term)
    return out


# --------------------------------------------------------------------------------------- surface variants
_SPELLING = [
    (re.compile(r"our(s?)$"), r"or\1"),
    (re.compile(r"is(e|ed|es|ing|ation|ations|er|ers)$"), r"iz\1"),
    (re.compile(r"ys(e|ed|es|ing)$"), r"yz\1"),
    (re.compile(r"tre(s?)$"), r"ter\1"),
    (re.compile(r"ll(ed|ing|er|ers)$"), r"l\1"),
    (re.compile(r"ogue(s?)$"), r"og\1"),
    (re.compile(r"ence(s?)$"), r"ense\1"),
]


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.porter import PorterStemmer  # lazy: NLTK takes seconds to import, for pivot tables only

    return PorterStemmer()


@lru_cache(maxsize=200_000)
def _token_key(token: str) -> str:
    for pattern, repl in _SPELLING:
        token = pattern.sub(repl, token)
    if len(token) >= 6:
        token = token.replace("ae", "e").replace("oe", "e")
    return _stemmer().stem(token)


def _tokens(phrase: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", phrase.lower().replace("'s", ""))
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return words


def is_surface_variant(a: str, b: str) -> bool:
    """True when two phrases differ only by case, hyphens/spaces, a leading article, British/American spelling or
    inflection (e.g. "colour"/"color", "e-mail"/"email", "eel ladder"/"eel ladders", "travelled"/"traveled")."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return True
    if "".join(ta) == "".join(tb):
        return True
    if len(ta) == len(tb) and all(_token_key(x) == _token_key(y) for x, y in zip(ta, tb)):
        return True
    ja, jb = "".join(ta), "".join(tb)
    if min(len(ja), len(jb)) >= 5 and abs(len(ja) - len(jb)) <= 1:
        return Levenshtein.distance(ja, jb) <= 1
    return False


# -------------------------------------------------------------------------------------------------- split
@lru_cache(maxsize=500_000)
def is_dev_phrase(phrase: str) -> bool:
    """Whether a phrase belongs to the dev split: stable hash of its normalised form (case, punctuation and spacing
    do not matter) divisible by :data:`DEV_MODULUS`; independent of Python's per-process ``hash()``."""
    digest = hashlib.blake2b(f"pivot:{normalize(phrase)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % DEV_MODULUS == 0


def is_dev_pivot_pair(phrase: str, paraphrase: str) -> bool:
    """Whether a pivot pair is in the dev split: either of its phrases is a dev phrase (see :func:`is_dev_phrase`).

    Training (split ``"train"``) therefore never sees a dev phrase in any pivot pair, not only the dev pairs.
    """
    return is_dev_phrase(phrase) or is_dev_phrase(paraphrase)


def split_pairs(pairs: list[PivotPair], split: str) -> list[PivotPair]:
    """The pairs of one split (``"all"``, ``"train"`` or ``"dev"``), in their order."""
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; use one of {SPLITS}.")
    if split == "all":
        return list(pairs)
    want_dev = split == "dev"
    return [p for p in pairs if is_dev_pivot_pair(p.phrase, p.paraphrase) == want_dev]


# -------------------------------------------------------------------------------------------------- table
@dataclass(frozen=True)
class PivotPair:
    """Two English phrases that share German translations; ``score`` = mean pivot probability of both directions."""

    phrase: str
    paraphrase: str
    score: float
    shared: int


@dataclass
class PivotTable:
    """All pivot pairs (each unordered pair once, best score first) and what the build counted."""

    pairs: list[PivotPair]
    stats: dict[str, int | float | str] = field(default_factory=dict)
    _index: dict[str, list[tuple[str, float]]] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def index(self) -> dict[str, list[tuple[str, float]]]:
        """Lower-cased phrase -> ``[(paraphrase, score)]``, best first (both directions of every pair)."""
        if self._index is None:
            index: dict[str, list[tuple[str, float]]] = defaultdict(list)
            for pair in self.pairs:
                index[pair.phrase.lower()].append((pair.paraphrase, pair.score))
                index[pair.paraphrase.lower()].append((pair.phrase, pair.score))
            for values in index.values():
                values.sort(key=lambda v: (-v[1], v[0]))
            self._index = dict(index)
        return self._index

    def paraphrases(self, phrase: str, limit: int | None = None, min_score: float = 0.0) -> list[str]:
        """Paraphrases of one phrase (case-insensitive lookup), best first."""
        found = [p for p, s in self.index.get(phrase.lower(), ()) if s >= min_score]
        return found[:limit] if limit is not None else found


def build_pivot_table(
    path: str | Path = DICT_PATH,
    max_words: int = 6,
    max_fanout: int = 50,
    filter_variants: bool = True,
    progress: bool = True,
) -> PivotTable:
    """Build the table from the dictionary (no cache; see :func:`load_pivot_table`)."""
    if max_words < 1 or max_fanout < 2:
        raise ValueError("max_words must be >= 1 and max_fanout >= 2.")
    english_to_german: dict[str, set[str]] = defaultdict(set)
    entries = kept_entries = 0
    for headword, translation in tqdm(iter_dictionary(path), desc="dict-de-en", disable=not progress, total=542_820):
        entries += 1
        phrases = english_phrases(headword, max_words)
        terms = german_terms(translation) if phrases else []
        if terms:
            kept_entries += 1
            for english in phrases:
                english_to_german[english].update(terms)
    german_to_english: dict[str, list[str]] = defaultdict(list)
    for english in sorted(english_to_german):
        for term in english_to_german[english]:
            german_to_english[term].append(english)
    forward: dict[tuple[str, str], list[float]] = {}
    groups = skipped_fanout = 0
    for term in sorted(german_to_english):
        group = german_to_english[term]
        if len(group) < 2:
            continue
        if len(group) > max_fanout:
            skipped_fanout += 1
            continue
        groups += 1
        p_e_given_f = 1.0 / (len(group) - 1)  # the other English entries of this German term, uniformly
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                acc = forward.setdefault((first, second), [0.0, 0.0, 0])
                acc[0] += p_e_given_f / len(english_to_german[first])  # p(second | first) through this term
                acc[1] += p_e_given_f / len(english_to_german[second])
                acc[2] += 1
    pairs, case_only, variants = [], 0, 0
    for (first, second), (p12, p21, shared) in forward.items():
        if first.lower() == second.lower():
            case_only += 1
            continue
        if filter_variants and is_surface_variant(first, second):
            variants += 1
            continue
        pairs.append(PivotPair(first, second, round((p12 + p21) / 2, 6), int(shared)))
    pairs.sort(key=lambda p: (-p.score, p.phrase, p.paraphrase))
    stats = {
        "version": VERSION,
        "source": str(path),
        "entries": entries,
        "entries_kept": kept_entries,
        "english_phrases": len(english_to_german),
        "multiword_phrases": sum(1 for e in english_to_german if " " in e),
        "german_terms": len(german_to_english),
        "pivot_groups": groups,
        "groups_over_max_fanout": skipped_fanout,
        "raw_pairs": len(forward),
        "case_only_pairs": case_only,
        "surface_variant_pairs": variants,
        "pairs": len(pairs),
        "multiword_pairs": sum(1 for p in pairs if " " in p.phrase or " " in p.paraphrase),
        "max_words": max_words,
        "max_fanout": max_fanout,
        "filter_variants": filter_variants,
    }
    return PivotTable(pairs, stats)


def _cache_file(path: Path, max_words: int, max_fanout: int, filter_variants: bool) -> Path:
    stat = path.stat()
    key = f"{VERSION}:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{max_words}:{max_fanout}:{filter_variants}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    return cache_dir() / "pivot" / f"dict-de-en-{digest}.tsv.gz"


def load_pivot_table(
    path: str | Path = DICT_PATH,
    max_words: int = 6,
    max_fanout: int = 50,
    filter_variants: bool = True,
    rebuild: bool = False,
    progress: bool = True,
) -> PivotTable:
    """The pivot table, from the cache (``<cache>/pivot/dict-de-en-<key>.tsv.gz`` + ``.json`` stats) or built once.

    Raises :class:`~phrasezoo.resources.MissingResourceError` naming the install command when the dictionary is
    absent.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingResourceError(f"The German-English dictionary {path} is missing: {INSTALL_HINT}")
    target = _cache_file(path, max_words, max_fanout, filter_variants)
    stats_file = target.with_suffix("").with_suffix(".json")
    if target.exists() and stats_file.exists() and not rebuild:
        pairs = []
        with gzip.open(target, "rt", encoding="utf8") as handle:
            for line in handle:
                phrase, paraphrase, score, shared = line.rstrip("\n").split("\t")
                pairs.append(PivotPair(phrase, paraphrase, float(score), int(shared)))
        return PivotTable(pairs, json.loads(stats_file.read_text(encoding="utf8")))
    table = build_pivot_table(path, max_words, max_fanout, filter_variants, progress)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    with gzip.open(tmp, "wt", encoding="utf8") as handle:
        for pair in table.pairs:
            handle.write(f"{pair.phrase}\t{pair.paraphrase}\t{pair.score}\t{pair.shared}\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    stats_file.write_text(json.dumps(table.stats, indent=2) + "\n", encoding="utf8")
    logger.info("pivot table: %d pairs cached in %s", len(table), target)
    return table


def pivot_pairs(
    min_score: float = 0.0,
    exclude_benchmarks: bool = True,
    benchmarks_dir: str | Path | None = None,
    filter_mode: str = "strict",
    split: str = "train",
    **table_kwargs,
) -> list[PivotPair]:
    """Pivot pairs with ``score >= min_score``, best first; by default without any pair touching a test benchmark
    (see :func:`phrasezoo.data.benchmark_filter.remove_benchmark_items`, which also logs what it dropped) and
    without the dev split (``split="train"``; ``"dev"`` or ``"all"`` on request, see :func:`is_dev_pivot_pair`)."""
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; use one of {SPLITS}.")
    pairs = split_pairs([p for p in load_pivot_table(**table_kwargs).pairs if p.score >= min_score], split)
    if exclude_benchmarks:
        pairs, _report = remove_benchmark_items(
            pairs, benchmarks_dir, key=lambda p: (p.phrase, p.paraphrase), mode=filter_mode
        )
    return pairs


# ----------------------------------------------------------------------------------------------- paraphraser
class PivotParaphraser:
    """A :class:`~phrasezoo.data.lexical.paraphrase.Paraphraser` over the pivot table: ``paraphrase(phrases)`` returns each
    phrase's pivot paraphrases, best score first.

    Lookup is case-insensitive; a phrase not in the table is retried without its leading article, and the article
    is put back on lower-case paraphrases ("the cellphone" -> "the mobile phone"). Pairs touching a test benchmark
    are removed first (``exclude_benchmarks``; the benchmark files must then be found, see
    :func:`phrasezoo.data.benchmark_filter.default_benchmarks_dir`).

    Args:
        table: an already loaded :class:`PivotTable` (default: :func:`load_pivot_table` with ``table_kwargs``).
        max_paraphrases: cap per phrase.
        min_score: drop pairs below this pivot score (0..1).
        exclude_benchmarks, benchmarks_dir, filter_mode: benchmark filtering of the table's pairs (``filter_mode``
            ``"strict"`` or ``"multiword"``, see :mod:`phrasezoo.data.benchmark_filter`); the report is kept in
            ``filter_report``.
        split: ``"train"`` (default: no pair holding a dev-suite phrase, see :func:`is_dev_pivot_pair`), ``"dev"``
            or ``"all"``.
    """

    def __init__(
        self,
        table: PivotTable | None = None,
        max_paraphrases: int = 5,
        min_score: float = 0.0,
        exclude_benchmarks: bool = True,
        benchmarks_dir: str | Path | None = None,
        filter_mode: str = "strict",
        progress: bool = True,
        split: str = "train",
        **table_kwargs,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}; use one of {SPLITS}.")
        table = table if table is not None else load_pivot_table(progress=progress, **table_kwargs)
        pairs = split_pairs([p for p in table.pairs if p.score >= min_score], split)
        self.filter_report = None
        if exclude_benchmarks:
            pairs, self.filter_report = remove_benchmark_items(
                pairs, benchmarks_dir, key=lambda p: (p.phrase, p.paraphrase), mode=filter_mode
            )
        self.table = PivotTable(pairs, dict(table.stats))
        self.max_paraphrases = max_paraphrases
        self.min_score = min_score
        self.exclude_benchmarks = exclude_benchmarks
        self.filter_mode = filter_mode
        self.split = split
        self.progress = progress

    @property
    def cache_key(self) -> str:
        """Identifies the outputs of this paraphraser in dataset cache keys."""
        stats = self.table.stats
        return (
            f"pivot:v{stats.get('version')}:{stats.get('max_words')}:{stats.get('max_fanout')}:"
            f"{stats.get('filter_variants')}:{self.max_paraphrases}:{self.min_score}:{self.exclude_benchmarks}:{self.filter_mode}:"
            f"{self.split}:{len(self.table)}"
        )

    def candidates(self, phrase: str) -> list[str]:
        """Raw table paraphrases of one phrase (not yet cleaned or capped)."""
        words = phrase.split()
        found = self.table.paraphrases(" ".join(words))
        if not found and len(words) > 1 and words[0].lower() in _ARTICLES:
            article = words[0]
            found = [f"{article} {p}" if p[:1].islower() else p for p in self.table.paraphrases(" ".join(words[1:]))]
        return found

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        """Pivot paraphrases of each phrase, best first, cleaned (see ``clean_paraphrases``)."""
        phrases = list(phrases)
        bar = tqdm(phrases, desc="pivot paraphrases", disable=not self.progress or len(phrases) < 1000)
        return [clean_paraphrases(p, self.candidates(p), self.max_paraphrases) for p in bar]


class ChainParaphraser:
    """Several paraphrasers in order, their outputs merged per phrase (first paraphraser's first, duplicates and the
    input removed, at most ``max_paraphrases``): e.g. the lexical rules, then the pivot table (``"offline+pivot"``)."""

    def __init__(self, paraphrasers: list, max_paraphrases: int = 5) -> None:
        if not paraphrasers:
            raise ValueError("ChainParaphraser needs at least one paraphraser.")
        self.paraphrasers = list(paraphrasers)
        self.max_paraphrases = max_paraphrases

    @property
    def cache_key(self) -> str | None:
        keys = [getattr(p, "cache_key", None) for p in self.paraphrasers]
        return None if None in keys else f"chain:{self.max_paraphrases}:" + "|".join(keys)

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        phrases = list(phrases)
        outputs = [p.paraphrase(phrases) for p in self.paraphrasers]
        return [
            clean_paraphrases(phrase, [c for out in outputs for c in out[i]], self.max_paraphrases)
            for i, phrase in enumerate(phrases)
        ]
