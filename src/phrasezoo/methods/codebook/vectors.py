"""Word vectors of the codebook model's target space, read only for the words a recipe needs.

* ``glove-6b-50d`` (the embedded default) and anything else :func:`phrasezoo.resources.load_word_vectors` reads;
* a GloVe text file (``glove.840B.300d.txt``) or Stanford's zip of it (``glove.840B.300d.zip``, ``glove.42B.300d.zip``
  from https://nlp.stanford.edu/projects/glove/): streamed line by line and **filtered to the requested words**, so
  the 2.2M x 300 table never has to fit in memory (the paper also restricts GloVe to its vocabulary). Lines are split
  from the right, because a few 840B tokens contain spaces (``". . ."``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from phrasezoo.resources import load_word_vectors


def _glove_lines(path: Path) -> Iterator[str]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if m.endswith(".txt")]
            if not members:
                raise ValueError(f"{path} holds no .txt file of word vectors.")
            with archive.open(members[0]) as raw:
                yield from io.TextIOWrapper(raw, encoding="utf8", errors="replace")
    else:
        with open(path, encoding="utf8", errors="replace") as handle:
            yield from handle


def read_glove_text(path: str | Path, words: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """``{word: vector}`` from a GloVe text/zip file, only for ``words`` (all words when ``None``).

    The dimension is taken from the first line; a line whose token contains spaces keeps them. The first occurrence
    of a word wins (840B lists a few tokens twice).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Word-vector file {path} not found. Download GloVe from https://nlp.stanford.edu/projects/glove/ (e.g. "
            "glove.840B.300d.zip) and pass its path, or use the embedded 'glove-6b-50d'."
        )
    wanted = set(words) if words is not None else None
    out: dict[str, np.ndarray] = {}
    dim = None
    for line in _glove_lines(path):
        line = line.rstrip("\n").rstrip()
        if not line:
            continue
        if dim is None:
            dim = len(line.split(" ")) - 1
        parts = line.rsplit(" ", dim)
        word = parts[0]
        if (wanted is None or word in wanted) and word not in out and len(parts) == dim + 1:
            out[word] = np.asarray(parts[1:], dtype=np.float32)
    return out


def lookup_vectors(name: str, words: Iterable[str]) -> dict[str, np.ndarray]:
    """Vectors of the ``words`` that ``name`` has: a GloVe .txt/.zip path, or a name for ``load_word_vectors``."""
    words = list(dict.fromkeys(words))
    if Path(name).suffix in (".txt", ".zip"):
        return read_glove_text(name, words)
    table = load_word_vectors(name)
    index = table.index
    return {w: np.asarray(table.vectors[index[w]], dtype=np.float32) for w in words if w in index}


def most_frequent_words(name: str, n: int) -> list[str]:
    """The first ``n`` words of a word-vector table, which GloVe files list most frequent first."""
    if n <= 0:
        return []
    if Path(name).suffix in (".txt", ".zip"):
        words: dict[str, None] = {}
        for line in _glove_lines(Path(name)):
            words.setdefault(line.split(" ", 1)[0], None)
            if len(words) >= n:
                break
        return list(words)
    return load_word_vectors(name, max_words=n).words
