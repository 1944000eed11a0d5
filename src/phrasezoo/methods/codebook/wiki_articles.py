"""Articles of the embedded Wikipedia sample with titles, split into lead and body.

One reader for everything that needs whole articles rather than documents: the summarisation evaluation (lead =
reference, body = candidate sentences) and the training-data builders that must keep those articles out of training.
"""

from __future__ import annotations

import bz2
import re
from dataclasses import dataclass
from functools import lru_cache

from phrasezoo.resources import _gensim_test_data

_HEADING = re.compile(r"^\s*=+[^=\n]*=+\s*$", re.MULTILINE)


@dataclass(frozen=True)
class WikiArticle:
    """An article of the embedded Wikipedia sample, cleaned like :func:`phrasezoo.resources.iter_corpus` does."""

    title: str
    text: str

    @property
    def lead(self) -> str:
        """Text before the first section heading."""
        match = _HEADING.search(self.text)
        return (self.text[: match.start()] if match else self.text).strip()

    @property
    def body(self) -> str:
        """Text from the first section heading on."""
        match = _HEADING.search(self.text)
        return self.text[match.start() :].strip() if match else ""


@lru_cache(maxsize=1)
def embedded_wiki_articles() -> tuple[WikiArticle, ...]:
    """The embedded Wikipedia sample (gensim's shortened dump) with titles, same cleaning and order as the corpus."""
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki  # lazy: keeps gensim off the registry's scan

    path = _gensim_test_data() / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    articles = []
    with bz2.open(path) as handle:
        for title, text, _pageid in extract_pages(handle):
            clean = filter_wiki(text).replace("'''", "").replace("''", "").strip()
            if len(clean) > 200:
                articles.append(WikiArticle(title=title, text=clean))
    return tuple(articles)


def summarization_articles(min_lead_words: int = 60, min_body_words: int = 400) -> list[WikiArticle]:
    """Articles of the summarisation evaluation: a lead of >= 60 words and a body of >= 400 words (83 of 106)."""
    return [
        a
        for a in embedded_wiki_articles()
        if len(a.lead.split()) >= min_lead_words and len(a.body.split()) >= min_body_words
    ]
