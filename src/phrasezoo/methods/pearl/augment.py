"""PEARL's positive views: character-, token- and phrase-level augmentation of a phrase, mixed by fixed weights.

Kinds (paper section 3.1) and their default weights (the official code's mix, :data:`DEFAULT_MIX`):

* ``char`` (0.10): one typo in one word: swap two adjacent characters, drop one, insert one (a QWERTY neighbour of
  the character before it), or replace one by a QWERTY neighbour. Case is preserved.
* ``synonym`` (0.30): one word or multiword unit replaced by an entry of the :class:`SynonymTable`
  ("New York newspaper" -> "New York City newspaper"), re-cased like the replaced words.
* ``paraphrase`` (0.50): one of the phrase's precomputed paraphrases (the ``paraphrases`` column of the PEARL
  dataset), optionally computed on the fly by a paraphraser for phrases without a column entry.
* ``swap`` (0.05): two adjacent (different) words swapped ("New York" -> "York New").
* ``none`` (0.05): the phrase unchanged.

:meth:`Augmenter.augment` is a pure function of the phrase and the ``random.Random`` it is given (no global state,
no set/hash ordering), so a training run that restores its rng state reproduces the same views. When the drawn kind
cannot change a phrase (no synonym, no paraphrase, a one-word phrase for ``swap``), another kind that changes phrases
is drawn from the remaining weights (``none`` is not a fallback: it is only returned when drawn first); a character
edit can change any non-empty phrase, so the result is never empty and differs from the input unless ``none`` was
drawn.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Mapping, Sequence

from phrasezoo.data.lexical.paraphrase import Paraphraser
from phrasezoo.data.lexical.synonyms import STOP_WORDS, SynonymTable

#: The official PEARL code's augmentation mix.
DEFAULT_MIX: dict[str, float] = {"char": 0.10, "synonym": 0.30, "paraphrase": 0.50, "swap": 0.05, "none": 0.05}
KINDS = ("char", "synonym", "paraphrase", "swap", "none")
CHAR_OPS = ("swap", "drop", "insert", "keyboard")

_KEYBOARD_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard_neighbours() -> dict[str, str]:
    """QWERTY neighbours of each key: left/right on its row and the nearby keys of the rows above and below.

    Letters only map to letters and digits to digits (a typo "Tim3s" is rarer than "Timrs")."""
    pos = {c: (r, i) for r, row in enumerate(_KEYBOARD_ROWS) for i, c in enumerate(row)}
    out: dict[str, str] = {}
    for c, (r, i) in pos.items():
        near = []
        for rr, ii in ((r, i - 1), (r, i + 1), (r - 1, i), (r - 1, i + 1), (r + 1, i - 1), (r + 1, i)):
            if 0 <= rr < len(_KEYBOARD_ROWS) and 0 <= ii < len(_KEYBOARD_ROWS[rr]):
                key = _KEYBOARD_ROWS[rr][ii]
                if key.isdigit() == c.isdigit():
                    near.append(key)
        out[c] = "".join(near)
    return out


KEYBOARD_NEIGHBOURS = _keyboard_neighbours()
_AFFIX = re.compile(r"^(\W*)(.*?)((?:'s|’s)?\W*)$")
_UNIT = re.compile(r"^[\w.'’-]+(?: [\w.'’-]+)*$")  # words without inner punctuation


_ARTICLES = ("the", "a", "an")


def _is_name_word(word: str) -> bool:
    """A capitalised word (part of a name, or a sentence-initial article)."""
    return word[:1].isupper()


def _match_case(template: str, word: str) -> str:
    """Give ``word`` the case pattern of ``template`` when ``word`` is lower-case (keeps "U.S." or "NYC" as is)."""
    if not word.islower():
        return word
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ----------------------------------------------------------------------------------------------- character level
def char_edit(phrase: str, rng: random.Random, ops: Sequence[str] = CHAR_OPS) -> str | None:
    """One character-level typo in one word of ``phrase`` (see the module docstring), or ``None`` if impossible.

    Words with at least three letters are preferred (typos in "a" or "of" are unnatural); ops that cannot change
    the chosen word are skipped in a random order. Words with digits are never edited: "1962" -> "2962" or
    "A320" -> "A330" changes what the phrase means (and would contradict hard negatives such as other years).
    """
    words = phrase.split(" ")
    editable = [i for i, w in enumerate(words) if any(c.isalpha() for c in w) and not any(c.isdigit() for c in w)]
    positions = [i for i in editable if sum(c.isalpha() for c in words[i]) >= 3] or editable
    if not positions:
        return None
    index = rng.choice(positions)
    word = words[index]
    for op in rng.sample(list(ops), len(ops)):
        new = _char_op(word, op, rng)
        if new is not None and new != word and (new or len([w for w in words if w]) > 1):
            words[index] = new
            result = " ".join(w for w in words if w)
            if result and result != phrase:
                return result
    return None


def _char_op(word: str, op: str, rng: random.Random) -> str | None:
    letters = [i for i, c in enumerate(word) if c.isalpha()] or list(range(len(word)))
    if op == "swap":
        pairs = [
            i for i in range(len(word) - 1) if word[i] != word[i + 1] and (word[i].isalpha() or word[i + 1].isalpha())
        ]
        if not pairs:
            return None
        i = rng.choice(pairs)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == "drop":
        if len(word) < 2:
            return None
        i = rng.choice(letters)
        return word[:i] + word[i + 1 :]
    if op == "insert":
        i = rng.randrange(len(word) + 1)
        ref = word[i - 1] if i > 0 else word[0] if word else "e"
        pool = KEYBOARD_NEIGHBOURS.get(ref.lower()) or string.ascii_lowercase
        char = rng.choice(pool)
        return word[:i] + (char.upper() if ref.isupper() else char) + word[i:]
    if op == "keyboard":
        keys = [i for i in letters if word[i].lower() in KEYBOARD_NEIGHBOURS]
        if not keys:
            return None
        i = rng.choice(keys)
        char = rng.choice(KEYBOARD_NEIGHBOURS[word[i].lower()])
        return word[:i] + (char.upper() if word[i].isupper() else char) + word[i + 1 :]
    raise ValueError(f"Unknown character operation {op!r}; use one of {CHAR_OPS}.")


# --------------------------------------------------------------------------------------------------- token level
def word_swap(phrase: str, rng: random.Random) -> str | None:
    """Swap two adjacent, different words ("New York" -> "York New"), or ``None`` for one-word phrases."""
    words = phrase.split()
    pairs = [i for i in range(len(words) - 1) if words[i].lower() != words[i + 1].lower()]
    if not pairs:
        return None
    i = rng.choice(pairs)
    words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def synonym_replace(phrase: str, rng: random.Random, synonyms: SynonymTable, max_choices: int = 8) -> str | None:
    """Replace one word or multiword unit (2-3 words) by a table synonym, or ``None`` when no unit has one.

    Surrounding punctuation and a possessive "'s" stay in place; stop words are never replaced on their own; a
    capitalised unit is replaced only when it is a whole name (not "York" of "New York"). The unit is drawn
    uniformly among the replaceable ones, the synonym among its first ``max_choices``.
    """
    words = phrase.split()
    options: list[tuple[int, int, str, str, str, list[str]]] = []
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            prefix = _AFFIX.match(words[i]).group(1)
            suffix = _AFFIX.match(words[i + n - 1]).group(3)
            text = " ".join(words[i : i + n])
            core = text[len(prefix) : len(text) - len(suffix)]
            if not core or not _UNIT.match(core) or (n == 1 and core.lower() in STOP_WORDS):
                continue
            if _is_name_word(core.split()[0]) or _is_name_word(core.split()[-1]):
                before = words[i - 1] if i > 0 else ""
                after = words[i + n] if i + n < len(words) else ""
                if (_is_name_word(before) and before.lower() not in _ARTICLES) or _is_name_word(after):
                    continue  # part of a longer name: "York" in "New York", "States" in "United States"
            candidates = [s for s in synonyms.get(core)[:max_choices] if s.lower() != core.lower()]
            if candidates:
                options.append((i, n, prefix, core, suffix, candidates))
    if not options:
        return None
    i, n, prefix, core, suffix, candidates = rng.choice(options)
    synonym = _match_case(core, rng.choice(candidates))
    if i > 0 and words[i - 1].lower() in _ARTICLES:
        if synonym.split()[0].lower() in _ARTICLES and " " in synonym:
            synonym = synonym.split(" ", 1)[1]  # "the United States" -> "the States", not "the the States"
        elif _is_name_word(synonym):
            i, n = i - 1, n + 1  # "the Soviet Union" -> "Russia", not "the Russia"
            prefix = words[i][: len(words[i]) - len(words[i].lstrip(string.punctuation))] + prefix
    return " ".join(words[:i] + [prefix + synonym + suffix] + words[i + n :])


# ---------------------------------------------------------------------------------------------------- augmenter
class Augmenter:
    """Draws one augmentation kind per call and applies it (see the module docstring).

    Args:
        synonyms: the table for ``synonym`` (an empty table disables that kind in practice).
        paraphrases: precomputed paraphrases per phrase (e.g. ``dict(zip(ds["phrase"], ds["paraphrases"]))``).
        mix: weights per kind (any subset of :data:`KINDS`; missing kinds get weight 0); normalised internally.
        paraphraser: optional fallback that paraphrases phrases missing from ``paraphrases`` on first use (results
            are memoised; a Hub model would be slow here, the offline one is cheap).
        char_ops: which character operations to use.
    """

    def __init__(
        self,
        synonyms: SynonymTable | None = None,
        paraphrases: Mapping[str, Sequence[str]] | None = None,
        mix: Mapping[str, float] | None = None,
        paraphraser: Paraphraser | None = None,
        char_ops: Sequence[str] = CHAR_OPS,
    ) -> None:
        mix = dict(DEFAULT_MIX if mix is None else mix)
        unknown = set(mix) - set(KINDS)
        if unknown:
            raise ValueError(f"Unknown augmentation kinds {sorted(unknown)}; use {KINDS}.")
        if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
            raise ValueError(f"Augmentation weights must be >= 0 with a positive sum, got {mix}.")
        total = sum(mix.values())
        self.mix = {k: mix.get(k, 0.0) / total for k in KINDS}
        self.synonyms = synonyms if synonyms is not None else SynonymTable()
        self.paraphrases: dict[str, list[str]] = {k: list(v) for k, v in (paraphrases or {}).items()}
        self.paraphraser = paraphraser
        self.char_ops = tuple(char_ops)
        self._methods: dict[str, Callable[[str, random.Random], str | None]] = {
            "char": lambda p, r: char_edit(p, r, self.char_ops),
            "synonym": lambda p, r: synonym_replace(p, r, self.synonyms),
            "paraphrase": self._paraphrase,
            "swap": word_swap,
            "none": lambda p, r: p,
        }

    def _paraphrase(self, phrase: str, rng: random.Random) -> str | None:
        options = self.paraphrases.get(phrase)
        if options is None and self.paraphraser is not None:
            options = self.paraphraser.paraphrase([phrase])[0]
            self.paraphrases[phrase] = list(options)
        options = [o for o in options or [] if o and o != phrase]
        return rng.choice(options) if options else None

    def apply(self, kind: str, phrase: str, rng: random.Random) -> str | None:
        """Apply one kind; ``None`` when it cannot change the phrase."""
        result = self._methods[kind](phrase, rng)
        if result is None or not result.strip() or (kind != "none" and result == phrase):
            return None
        return result

    def augment(self, phrase: str, rng: random.Random) -> tuple[str, str]:
        """A positive view of ``phrase`` and the kind that made it, e.g. ``("NYT", "paraphrase")``.

        Deterministic given the state of ``rng``. Raises ``ValueError`` for an empty phrase.
        """
        if not isinstance(phrase, str) or not phrase.strip():
            raise ValueError(f"Cannot augment an empty or non-string phrase: {phrase!r}")
        kinds = [k for k in KINDS if self.mix[k] > 0]
        weights = [self.mix[k] for k in kinds]
        while kinds:
            kind = rng.choices(kinds, weights=weights)[0]
            result = self.apply(kind, phrase, rng)
            if result is not None:
                return result, kind
            # fall back among the other kinds that change the phrase ("none" only counts when drawn first)
            keep = [i for i, k in enumerate(kinds) if k not in (kind, "none")]
            kinds, weights = [kinds[i] for i in keep], [weights[i] for i in keep]
        result = char_edit(phrase, rng, CHAR_OPS)  # last resort, e.g. for a mix without "char"
        return (result, "char") if result else (phrase, "none")

    def augment_batch(self, phrases: Sequence[str], rng: random.Random) -> tuple[list[str], list[str]]:
        """:meth:`augment` over a batch, in order: (views, kinds)."""
        views, kinds = [], []
        for phrase in phrases:
            view, kind = self.augment(phrase, rng)
            views.append(view)
            kinds.append(kind)
        return views, kinds
