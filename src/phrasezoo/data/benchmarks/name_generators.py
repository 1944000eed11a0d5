"""Generated forms of names: the variants the held-out sets are made of and that training learns from.

* a name with typos, a dropped word or abbreviated words (:func:`noisy_variant`: the name benchmark's ``noisy``
  domain, and PEARL's ``names`` source with a seed of its own), a short form of a person's name and a company's name
  with or without its legal form (the benchmark's ``short-names`` domain);
* a realistically corrupted Wikipedia title (:func:`corrupt_title`: the dev suite's ``dev_fuzzy`` queries);
* look-alike siblings of names in a pool (:class:`SiblingMiner`: the benchmark's knowledge bases, PEARL's hard
  negatives).

Every generator draws from a :class:`random.Random` its caller seeds by the name, so a name gives the same form on
every machine.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np

from phrasezoo.resources.splits import normalize, stable_hash

from .name_sources import STOP_WORDS, WORD

#: the keyboard's letter rows: a typo hits a neighbouring key (:func:`typo`) or any letter (:func:`corrupt_title`)
KEYBOARD_ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


# -------------------------------------------------------------------------------------------- name variants
#: abbreviations of words as catalogues write them (the ``noisy`` domain)
ABBREVIATIONS = {"international": "Intl", "corporation": "Corp", "company": "Co.", "university": "Univ.",
                 "association": "Assn", "department": "Dept.", "incorporated": "Inc", "limited": "Ltd",
                 "national": "Natl", "institute": "Inst.", "technology": "Tech", "saint": "St.", "mount": "Mt.",
                 "brothers": "Bros.", "manufacturing": "Mfg", "services": "Svcs", "systems": "Sys.",
                 "management": "Mgmt", "government": "Govt", "american": "Amer.", "european": "Eur.",
                 "laboratory": "Lab", "laboratories": "Labs", "engineering": "Eng.", "development": "Dev.",
                 "communications": "Comms", "research": "Res.", "society": "Soc.", "general": "Gen.",
                 "center": "Ctr", "centre": "Ctr", "federal": "Fed.", "network": "Netw.", "standard": "Std",
                 "protocol": "Proto.", "information": "Info", "computer": "Comp.", "interface": "Intf.",
                 "professional": "Prof.", "doctor": "Dr.", "william": "Wm.", "charles": "Chas.",
                 "thomas": "Thos.", "and": "&", "processing": "Proc.", "electronic": "Elec.",
                 "electronics": "Elec."}  # fmt: skip


def _neighbour_key(char: str, rng: random.Random) -> str:
    for row in KEYBOARD_ROWS:
        i = row.find(char.lower())
        if i >= 0:
            options = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            return rng.choice(options)
    return char


def typo(word: str, rng: random.Random) -> str:
    """One keyboard typo in a word of 4+ letters: swapped, dropped, doubled or neighbouring-key letter."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:
        return word[:i] + word[i + 1 :]
    if op == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + _neighbour_key(word[i], rng) + word[i + 1 :]


def noisy_variant(name: str, rng: random.Random) -> str | None:
    """``name`` with one or two corruptions: abbreviated words, a typo, a dropped word (of 3+), case folded."""
    words = name.split()
    ops = ["typo", "abbreviate", "drop", "typo2"]
    rng.shuffle(ops)
    done = 0
    for op in ops:
        if done == 2:
            break
        if op == "abbreviate":
            hits = [i for i, w in enumerate(words) if w.lower().strip(",") in ABBREVIATIONS]
            for i in hits:
                words[i] = ABBREVIATIONS[words[i].lower().strip(",")]
            done += bool(hits)
        elif op == "drop" and len(words) >= 3:
            words.pop(rng.randrange(1, len(words)))
            done += 1
        elif op.startswith("typo"):
            long = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
            if long:
                i = rng.choice(long)
                words[i] = typo(words[i], rng)
                done += 1
    if rng.random() < 0.2:
        words = [w.lower() for w in words]
    variant = " ".join(words)
    return variant if done and normalize(variant) != normalize(name) else None


def person_short(name: str, rng: random.Random, nicknames: dict[str, list[str]]) -> tuple[str, str] | None:
    """A short form of a person's full name: the surname, initials and surname, or a nickname and surname."""
    words = name.split()
    if len(words) < 2:
        return None
    first, last = words[0], words[-1]
    options = [(last, "short"), (f"{first[0]}. {last}", "initial")]
    nick = nicknames.get(first.lower())
    if nick:
        options.append((f"{rng.choice(nick).title()} {last}", "nickname"))
    if len(words) >= 3:
        options.append((f"{first} {last}", "short"))
    return rng.choice(options)


def company_variant(name: str, rng: random.Random, forms: tuple[str, ...]) -> tuple[str, str]:
    """``name`` without its legal form when it has one ("Apple Inc." -> "Apple"), else with one added."""
    lowered = name.lower().rstrip(".")
    for form in sorted(forms, key=len, reverse=True):
        tail = form.lower().rstrip(".")
        if lowered.endswith(" " + tail) or lowered.endswith(", " + tail):
            return name[: len(name) - len(form)].rstrip(" ,.") if len(name) > len(form) + 2 else name, "legal-form"
    return f"{name} {rng.choice(forms)}", "legal-form"


# ------------------------------------------------------------------------------------------- title corruption
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
_SMALL_WORDS = {"of", "the", "and", "in", "on", "for", "a", "an", "to", "de", "la", "von", "van", "der", "du"}


def _drop_qualifier(title: str, rng: random.Random) -> str | None:
    """ "Nut (fruit)" -> "Nut"."""
    out = _QUALIFIER.sub("", title).strip()
    return out if out and out != title else None


def _comma_swap(title: str, rng: random.Random) -> str | None:
    """ "Paris, Texas" -> "Texas Paris"."""
    if title.count(",") != 1:
        return None
    head, tail = (part.strip() for part in title.split(","))
    return f"{tail} {head}" if head and tail else None


def _abbreviate(title: str, rng: random.Random) -> str | None:
    """One word that is not the last becomes its initial: "Arthur C. Clarke" -> "A. C. Clarke" (only when the other
    words keep five letters or more, so the title stays recognisable: not "Sagittarius A*" -> "S. A*")."""
    words = title.split()
    letters = [sum(c.isalpha() for c in w) for w in words]
    choices = [
        i
        for i, w in enumerate(words[:-1])
        if len(w) >= 3 and w[0].isalpha() and w.lower() not in _SMALL_WORDS and sum(letters) - letters[i] >= 5
    ]
    if not choices:
        return None
    i = rng.choice(choices)
    words[i] = words[i][0].upper() + "."
    return " ".join(words)


def _typo(title: str, rng: random.Random) -> str | None:
    """One keyboard slip in a word of four or more letters: deletion, swap, substitution or doubling."""
    words = title.split()
    choices = [i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= 4]
    if not choices:
        return None
    i = rng.choice(choices)
    word = words[i]
    positions = [k for k, c in enumerate(word) if c.isalpha() and k > 0]
    if not positions:
        return None
    k = rng.choice(positions)
    kind = rng.choice(("delete", "swap", "substitute", "double"))
    if kind == "delete":
        word = word[:k] + word[k + 1 :]
    elif kind == "swap" and k + 1 < len(word) and word[k + 1].isalpha() and word[k + 1] != word[k]:
        word = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    elif kind == "double":
        word = word[:k] + word[k] + word[k:]
    else:
        replacement = rng.choice([c for c in "".join(KEYBOARD_ROWS) if c != word[k].lower()])
        word = word[:k] + replacement + word[k + 1 :]
    words[i] = word
    return " ".join(words)


def _case_punct(title: str, rng: random.Random) -> str | None:
    """Lower case with hyphens, dashes and dots as spaces and apostrophes/commas dropped ("Wi-Fi" -> "wi fi")."""
    out = re.sub(r"[-–—.]", " ", title.lower())
    out = " ".join(re.sub(r"[,'’\"]", "", out).split())
    return out if out and out != title else None


_STRUCTURAL: tuple[Callable[[str, random.Random], str | None], ...] = (_drop_qualifier, _comma_swap, _abbreviate)


def corrupt_title(title: str) -> str:
    """A realistic noisy form of a title, the same on every run (seeded by the title's stable hash).

    One structural change when one applies (drop a trailing parenthetical qualifier, swap around a comma, a word to
    its initial), a typo with probability 0.3 (always when no structural change applied), then lower case and
    punctuation changes with probability 1/2. The result always differs from the title after normalisation, unless
    the title is too short for any change (then it is returned unchanged; callers drop those).
    """
    rng = random.Random(stable_hash(title, "fuzzy"))
    out = title
    structural = [f for f in _STRUCTURAL if f(title, random.Random(0)) is not None]
    if structural:
        out = rng.choice(structural)(out, rng) or out
    if out == title or rng.random() < 0.3:
        out = _typo(out, rng) or out
    if rng.random() < 0.5:
        out = _case_punct(out, rng) or out
    if normalize(out) == normalize(title):
        out = _typo(out, rng) or out
    return out


# ------------------------------------------------------------------------------------------------ siblings
def _content_words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1]


class SiblingMiner:
    """Look-alike siblings from a pool of names: character TF-IDF neighbours and names sharing rare words."""

    def __init__(self, pool: list[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer  # lazy: scikit-learn, for mining only

        self.pool = pool
        self.vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, dtype=np.float32)
        self.matrix = self.vectorizer.fit_transform(pool).tocsr()
        self.by_word: dict[str, list[int]] = defaultdict(list)
        for i, name in enumerate(pool):
            for word in set(_content_words(name)):
                self.by_word[word].append(i)

    def nearest(self, texts: list[str], k: int) -> list[list[int]]:
        """The ``k`` pool rows nearest each text by character TF-IDF cosine."""
        out = []
        queries = self.vectorizer.transform(texts)
        for start in range(0, len(texts), 512):
            sims = (queries[start : start + 512] @ self.matrix.T).toarray()
            top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
            out.extend([[int(j) for j in row if sims[r, j] > 0] for r, row in enumerate(top)])
        return out

    def sharing_words(self, text: str, k: int) -> list[int]:
        """Up to ``k`` pool rows sharing the rarest content words of ``text`` (most shared words first)."""
        # ties between equally rare words go by the word itself: a set's order follows Python's hash seed
        words = sorted(set(_content_words(text)), key=lambda w: (len(self.by_word.get(w, ())), w))
        counts: Counter = Counter()
        for word in words[:3]:
            rows = self.by_word.get(word, ())
            if 1 < len(rows) <= 200:
                counts.update(rows)
        return [row for row, _ in counts.most_common(k)]
