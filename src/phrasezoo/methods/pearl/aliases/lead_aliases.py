"""Alias pairs stated in the first sentence of Wikipedia leads: "Light-emitting diode (LED)", "Sulawesi, also known
as Celebes", "... often referred to as the Falklands".

Two patterns, both conservative: an acronym in parentheses whose letters are the initials of the title's words
(so "(US)" after "Skepticism" is not taken), and the name after "known as", "called", "referred to as" or
"abbreviated", cut at the first comma, " or " or " and ". Only the leads of the training articles are read (the
dev suite's articles, :func:`phrasezoo.resources.splits.is_dev_title`, are left out), and the pairs go through the same
rules and benchmark filter as the link aliases (:func:`phrasezoo.data.corpus.wiki_links.clean_alias_pairs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from phrasezoo.resources.corpora import load_wiki_leads
from phrasezoo.resources.splits import is_dev_title

_ACRONYM = re.compile(r"\(([A-Z][A-Za-z.&-]{1,9})\)")
_NAMED = re.compile(
    r"\b(?:known as|called|referred to as|abbreviated(?: as)?)\s+(?:the\s+)?"
    r"([A-Z0-9][\w'.&-]*(?:\s+(?:of|the|de|[A-Z0-9][\w'.&-]*))*)"
)
_CUT = re.compile(r",| or | and ")


_FUNCTION_WORDS = frozenset({"a", "an", "and", "at", "de", "for", "in", "of", "on", "the", "to"})


def initials(title: str, skip_function_words: bool = False) -> str:
    """Upper-case initials of a title's words, hyphenated parts included ("Light-emitting diode" -> "LED");
    ``skip_function_words`` leaves out "and", "of", ... ("Occupational safety and health" -> "OSH")."""
    parts = [p for p in re.split(r"[\s-]+", re.sub(r"\(.*?\)", " ", title)) if p and p[0].isalnum()]
    if skip_function_words:
        parts = [p for p in parts if p.lower() not in _FUNCTION_WORDS]
    return "".join(p[0].upper() for p in parts)


def lead_aliases(title: str, lead: str) -> list[str]:
    """The aliases of ``title`` stated in the first sentence of its ``lead`` (see the module docstring)."""
    first = lead.split(". ")[0][:400]
    found: list[str] = []
    letters = {initials(title), initials(title, skip_function_words=True)}
    for match in _ACRONYM.finditer(first[:200]):
        acronym = match.group(1)
        if acronym.isupper() and acronym.replace(".", "").replace("&", "") in letters:
            found.append(acronym)
    for match in _NAMED.finditer(first):
        name = _CUT.split(match.group(1))[0].strip(" .'")
        if len(name) > 1 and name.lower() != title.lower():
            found.append(name)
    return list(dict.fromkeys(found))


def lead_alias_pairs(leads: Iterable | None = None) -> Iterator[tuple[str, str]]:
    """``(alias, title)`` for the training articles of the wiki leads (``leads``: default all 10,033)."""
    if leads is None:
        leads = load_wiki_leads()
    for lead in leads:
        if is_dev_title(lead.title):
            continue
        for alias in lead_aliases(lead.title, lead.lead):
            yield alias, lead.title
