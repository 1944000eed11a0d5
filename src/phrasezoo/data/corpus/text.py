"""Turn raw corpus documents into clean paragraphs that spaCy can parse.

Why: spaCy refuses texts longer than ``nlp.max_length`` and parses long texts slowly, and the embedded Wikipedia
dump still carries wiki layout (section headings, list bullets, gallery lines such as ``File:x.jpg|caption``,
table debris). Splitting documents into paragraphs and dropping layout lines keeps the parser fast and the mined
sentences prose-like, which matters for the later methods that use sentence contexts (Phrase-BERT, UCTopic).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_HEADING = re.compile(r"^\s*=+.*=+\s*$")
_LIST_MARKER = re.compile(r"^[\s*#:;]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WHITESPACE = re.compile(r"[ \t\u00a0]+")
_GALLERY = re.compile(r"^(?:File|Image):[^|]*\|", re.IGNORECASE)


def clean_line(line: str) -> str:
    """Strip wiki layout from one line: list markers, gallery prefixes (``File:x.jpg|``), ``|alt=`` tails.

    Returns ``""`` for lines that are layout only (headings, table rows).
    """
    if _HEADING.match(line):
        return ""
    line = _GALLERY.sub("", line.strip())
    if "|alt=" in line:
        line = line.split("|alt=", 1)[0]
    if "|" in line or line.startswith(("{", "}", "!")):
        return ""
    line = _LIST_MARKER.sub("", line)
    return _WHITESPACE.sub(" ", line).strip()


def is_prose(line: str, min_words: int = 4, min_alpha_ratio: float = 0.6) -> bool:
    """Whether a cleaned line looks like prose: at least ``min_words`` words and mostly letters.

    ``min_alpha_ratio`` is the share of letters among non-space characters; it drops number tables and code.
    """
    if len(line.split()) < min_words:
        return False
    visible = [c for c in line if not c.isspace()]
    return bool(visible) and sum(c.isalpha() for c in visible) / len(visible) >= min_alpha_ratio


def chunk_text(text: str, max_chars: int) -> list[str]:
    """Split a long paragraph at sentence ends (or, failing that, at spaces) into pieces of at most ``max_chars``."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > max_chars:  # a "sentence" longer than the limit: cut at the last space before it
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > 0 else max_chars
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return [p for p in pieces if p]


def split_paragraphs(
    document: str, min_words: int = 4, max_chars: int = 20_000, min_alpha_ratio: float = 0.6
) -> Iterator[str]:
    """Yield the prose paragraphs of a document, one per non-empty line, each at most ``max_chars`` long.

    Lines are cleaned with :func:`clean_line` and kept when :func:`is_prose` accepts them. A news document that is
    one long line comes back as one paragraph (or several chunks when it exceeds ``max_chars``).
    """
    for raw in document.split("\n"):
        line = clean_line(raw)
        if line and is_prose(line, min_words=min_words, min_alpha_ratio=min_alpha_ratio):
            yield from chunk_text(line, max_chars)
