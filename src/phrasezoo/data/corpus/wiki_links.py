"""Wikipedia hyperlinks: read a Wikipedia XML dump into sentences whose article links are marked as character spans.

A link ``[[Target title|anchor text]]`` becomes the span of its anchor text in the plain sentence, carrying the
canonical title of its target (:func:`link_target`). The dump is the embedded gensim sample (``"embedded"``,
offline), a local ``.xml.bz2``/``.xml`` file or an ``http(s)://`` URL (downloaded once into the cache). Used by
pretraining data builders (same-entity mentions) and by the dev suite's alias set (anchor text -> target title).
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Iterator
from pathlib import Path

from tqdm.auto import tqdm

from phrasezoo.data.benchmark_filter import normalize, remove_benchmark_items
from phrasezoo.data.corpus.download import download
from phrasezoo.data.corpus.text import split_paragraphs
from phrasezoo.resources import _gensim_test_data, cache_dir
from phrasezoo.resources.splits import is_dev_alias_title

#: ``[[Target]]``, ``[[Target|anchor]]``, ``[[Target#Section|anchor]]`` plus a link trail ("[[dog]]s" reads "dogs").
_WIKILINK = re.compile(r"\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]([a-z]*)")
_PLACEHOLDER = re.compile(r"ZQLINK(\d+)QZ")


def resolve_wiki_dump(spec: str, sha1: str | None = None) -> Path:
    """A local Wikipedia XML dump for ``spec``: ``"embedded"`` (gensim's shortened English dump, offline), a local
    ``.xml.bz2``/``.xml`` path, or an ``http(s)://`` URL of a dump, downloaded once into ``cache_dir()/wikidumps``
    by :func:`phrasezoo.data.corpus.download.download`: resumable (``.part`` kept), and checked against ``sha1``, else the
    sha1 the Wikimedia dump directory lists in its ``<wiki>-<date>-sha1sums.txt``."""
    if spec == "embedded":
        path = _gensim_test_data() / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing; reinstall gensim: pip install --force-reinstall gensim")
        return path
    if spec.startswith(("http://", "https://")):
        target = cache_dir() / "wikidumps" / spec.rstrip("/").rsplit("/", 1)[-1]
        return download(spec, target, sha1=sha1)
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(f"Wikipedia dump {spec} not found: use 'embedded', a local .xml(.bz2) file or a URL.")
    return path


def link_target(target: str) -> str | None:
    """Canonical Wikipedia title of a link target (first letter upper-cased, underscores as spaces), or ``None``
    for links to other namespaces (``File:``, ``Category:``, interwiki ``fr:``)."""
    title = " ".join(target.replace("_", " ").split())
    if not title or ":" in title:
        return None
    return title[0].upper() + title[1:]


def wikitext_with_links(wikitext: str) -> tuple[str, list[tuple[int, str, str]]]:
    """Plain text of a page with its article links marked: returns the text (gensim's ``filter_wiki`` markup removal)
    where every kept link reads ``ZQLINK<i>QZ``, and ``links[i] = (i, anchor text, target title)``."""
    from gensim.corpora.wikicorpus import filter_wiki  # lazy: gensim takes seconds to import

    links: list[tuple[int, str, str]] = []

    def mark(match: re.Match) -> str:
        target = link_target(match.group(1))
        anchor = (match.group(2) if match.group(2) is not None else match.group(1)) + match.group(3)
        anchor = " ".join(anchor.replace("'''", "").replace("''", "").split())
        if target is None or not anchor or "[" in anchor or "{" in anchor:
            return match.group(0)
        links.append((len(links), anchor, target))
        return f"ZQLINK{len(links) - 1}QZ"

    marked = _WIKILINK.sub(mark, wikitext)
    text = filter_wiki(marked).replace("'''", "").replace("''", "")
    return text, links


def wiki_link_sentences(
    dump: str | Path, max_documents: int | None = None, min_words: int = 4, progress: bool = True
) -> Iterator[tuple[str, list[tuple[int, int, str]]]]:
    """Yield ``(sentence, [(start, end, target title), ...])`` for the prose sentences of a Wikipedia XML dump.

    Pages are read with gensim's ``extract_pages`` (redirects and pages under 200 characters skipped, like the
    embedded corpus), cleaned into paragraphs with :func:`phrasezoo.data.split_paragraphs`, and split into sentences
    with spaCy's rule-based sentencizer. Only sentences holding at least one link are yielded.
    """
    import spacy  # lazy: spaCy's sentencizer, for reading a dump only
    from gensim.corpora.wikicorpus import extract_pages  # lazy: gensim takes seconds to import

    sentencizer = spacy.blank("en")
    sentencizer.add_pipe("sentencizer")
    path = resolve_wiki_dump(str(dump))
    opener = bz2.open if path.suffix == ".bz2" else open
    count = 0
    with opener(path, "rb") as handle:
        for _title, wikitext, _page_id in tqdm(extract_pages(handle), desc="wiki pages", disable=not progress):
            if max_documents is not None and count >= max_documents:
                return
            if wikitext.lstrip().lower().startswith("#redirect"):
                continue
            text, links = wikitext_with_links(wikitext)
            if len(_resolve_placeholders(text, links)[0].strip()) <= 200:  # the embedded corpus's page filter
                continue
            count += 1
            for paragraph in split_paragraphs(text, min_words=min_words):
                plain, spans = _resolve_placeholders(paragraph, links)
                if not spans:
                    continue
                for sent in sentencizer(plain).sents:
                    inside = [
                        (s - sent.start_char, e - sent.start_char, t)
                        for s, e, t in spans
                        if s >= sent.start_char and e <= sent.end_char
                    ]
                    if inside:
                        yield sent.text, inside


def _resolve_placeholders(paragraph: str, links: list[tuple[int, str, str]]) -> tuple[str, list[tuple[int, int, str]]]:
    """Replace ``ZQLINK<i>QZ`` marks by their anchor text; returns the text and the anchors' (start, end, target)."""
    pieces, spans, position, cursor = [], [], 0, 0
    for match in _PLACEHOLDER.finditer(paragraph):
        index = int(match.group(1))
        if index >= len(links):
            continue
        before = paragraph[cursor : match.start()]
        pieces.append(before)
        position += len(before)
        anchor, target = links[index][1], links[index][2]
        pieces.append(anchor)
        spans.append((position, position + len(anchor), target))
        position += len(anchor)
        cursor = match.end()
    pieces.append(paragraph[cursor:])
    return "".join(pieces), spans


# ----------------------------------------------------------------------------------------------------- alias pairs
#: an anchor that is only a number, a year or a decade ("1964", "1990s", "42nd", "1939-45"): not an alias
_NUMERIC_ANCHOR = re.compile(r"[\d\s.,:/'’–—+°%-]*\d[\d\s.,:/'’–—+°%-]*(?:s|st|nd|rd|th)?", re.IGNORECASE)


def link_pairs(dump: str = "embedded", progress: bool = True) -> Iterator[tuple[str, str]]:
    """``(anchor text, target title)`` of every article link of a dump, in reading order (repeats kept)."""
    for sentence, spans in wiki_link_sentences(dump, progress=progress):
        for start, end, title in spans:
            yield sentence[start:end], title


def clean_alias_pairs(pairs, blocklist, split: str | None = None) -> tuple[list[tuple[str, str]], dict, dict]:
    """Distinct ``(anchor, title)`` alias pairs that pass the rules, with the benchmark filter's report and the
    counts of the other rules: ``(pairs, filter_report, dropped)``.

    A pair is dropped when its anchor or title is shorter than 2 characters, its anchor is a pure number or year,
    its anchor equals its title (case-insensitively, or after normalisation), or it touches a benchmark item (strict
    filter on the anchor, the title and the pair). ``split`` keeps the ``"dev"`` or ``"train"`` titles only
    (:func:`phrasezoo.resources.splits.is_dev_alias_title`; ``None``: both).
    """
    if split not in (None, "dev", "train"):
        raise ValueError(f"split must be 'dev', 'train' or None, got {split!r}.")
    dropped = {"short": 0, "numeric": 0, "same_text": 0, "other_split": 0}
    valid: list[tuple[str, str]] = []
    for anchor, title in dict.fromkeys((" ".join(a.split()), " ".join(t.split())) for a, t in pairs):
        if len(anchor) < 2 or len(title) < 2:
            dropped["short"] += 1
        elif _NUMERIC_ANCHOR.fullmatch(anchor):
            dropped["numeric"] += 1
        elif anchor.lower() == title.lower() or normalize(anchor) == normalize(title) or not normalize(anchor):
            dropped["same_text"] += 1
        elif split is not None and is_dev_alias_title(title) != (split == "dev"):
            dropped["other_split"] += 1
        else:
            valid.append((anchor, title))
    valid, report = remove_benchmark_items(valid, key=lambda p: p, blocklist=blocklist, mode="strict", log=False)
    return valid, report.as_dict(), dropped
