"""Phrase keys: the lower-cased lemmas of a phrase without its leading determiner ("the Tumors" -> ``tumor``).

A key groups the mentions of one phrase (CCL's majority vote, per-phrase topic distributions).
"""

from __future__ import annotations

from collections.abc import Iterable

from phrasezoo.resources import load_spacy

LEADING_DETERMINERS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "my", "his", "her", "its", "our", "their", "your"}
)


def lemma_keys(texts: Iterable[str], spacy_model: str = "en_core_web_sm", batch_size: int = 256) -> list[str]:
    """The key of each phrase string: lower-cased lemmas, a leading determiner removed ("the Tumors" -> ``tumor``).

    Used where mentions come with their spans already (benchmark entities): each distinct string is lemmatized once.
    """
    texts = list(texts)
    unique = list(dict.fromkeys(texts))
    nlp = load_spacy(spacy_model, disable=("parser", "ner"))
    key_of = {}
    for text, doc in zip(unique, nlp.pipe(unique, batch_size=batch_size)):
        words = [t.lemma_.lower().strip() for t in doc if t.lemma_.strip()]
        if len(words) > 1 and words[0] in LEADING_DETERMINERS:
            words = words[1:]
        key_of[text] = " ".join(words) or text.lower()
    return [key_of[t] for t in texts]
