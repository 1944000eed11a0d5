"""Vocabularies of words and short multiword expressions, for teacher-neighbourhood distillation.

The lexicon term of the mini recipes (:mod:`phrasezoo.objectives.lexicon_distillation`) needs many short strings whose
teacher neighbourhoods teach the student fine lexical distinctions ("double bass" / "contrabass" / "cello"). WordNet
gives about 140k lemma strings (nouns, adjectives, verbs; one to three words), the kind of strings Turney, BiRD and
the dev suite's compound and word-similarity tasks are made of.

The caller removes benchmark items and dev-suite strings (see ``build_lexicon_distillation``); this module only reads
and normalises.
"""

from __future__ import annotations

import re

from phrasezoo.resources import wordnet_install_hint

#: letters with inner spaces, hyphens and apostrophes ("well-known", "o'clock"); no digits ("3-D") or other signs
_LEMMA = re.compile(r"^[A-Za-z][A-Za-z' -]*[A-Za-z]$|^[A-Za-z]$")
SOURCES = ("wordnet",)


def wordnet_vocabulary(wordnet, max_words: int = 3, max_chars: int = 40, pos: str = "nav") -> list[str]:
    """The distinct lemma strings of WordNet's synsets of parts of speech ``pos`` (``n``, ``a``, ``v``, ``r``),
    underscores as spaces, of at most ``max_words`` words and ``max_chars`` characters, sorted."""
    if not pos or any(p not in "navr" for p in pos):
        raise ValueError(f"pos takes WordNet parts of speech from 'navr', got {pos!r}.")
    if max_words < 1 or max_chars < 1:
        raise ValueError(f"max_words and max_chars must be >= 1, got {max_words} and {max_chars}.")
    out: set[str] = set()
    for part in pos:
        for synset in wordnet.all_synsets(part):
            for name in synset.lemma_names():
                text = name.replace("_", " ")
                if _LEMMA.match(text) and len(text) <= max_chars and len(text.split()) <= max_words:
                    out.add(text)
    return sorted(out)


def lexicon_strings(sources, wordnet=None) -> list[str]:
    """The sorted union of the named vocabularies (see :data:`SOURCES`)."""
    unknown = [s for s in sources if s not in SOURCES]
    if unknown or not sources:
        raise ValueError(f"Unknown or empty lexicon sources {list(sources)!r}; use some of {list(SOURCES)}.")
    strings: set[str] = set()
    if "wordnet" in sources:
        if wordnet is None:
            raise ValueError(f"The 'wordnet' lexicon source needs WordNet. {wordnet_install_hint()}")
        strings.update(wordnet_vocabulary(wordnet))
    return sorted(strings)
