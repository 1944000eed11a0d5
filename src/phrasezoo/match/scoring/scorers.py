"""What scores a pair of strings: the hybrid default, an embedding model alone, a TF-IDF channel or a rapidfuzz scorer.

``model=`` (in :func:`phrasezoo.match.join`, :func:`~phrasezoo.match.link` and :class:`~phrasezoo.match.Matcher`):

* ``"hybrid"`` (the default) or ``"hybrid:<encoder spec>"``: candidates from embedding and character TF-IDF
  neighbours, reranked by the combination learned on the dev splits of AutoFJ and the name benchmark
  (:mod:`phrasezoo.match.scoring.hybrid`); the score is the estimated probability of a match, so ``threshold="auto"``
  works.
* an encoder spec alone (``baseline:minilm-l6``, an exported zoo folder such as ``outputs/<name>``, a recipe name, a
  Hub id via ``baseline:<id>``, or a loaded model with ``encode``): embedding cosine.
* ``"tfidf:char"`` / ``"tfidf:word"``: TF-IDF cosine over character 2-4 grams (PolyFuzz's / skrub's default) or
  words, fitted on the reference table.
* ``"rapidfuzz:<scorer>"`` (``token_sort_ratio``, ``WRatio``, ``ratio``, ``token_set_ratio``, ``partial_ratio``,
  ``QRatio``): string similarity / 100.

Every scorer has the same small interface: ``fit(reference)``, ``search(queries, top_k)`` and ``pair_scores(queries,
candidates)`` (scores of given reference rows, used by blocking), plus ``state()``/``from_state`` for
:meth:`phrasezoo.match.Matcher.save`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rapidfuzz import fuzz, process, utils

from phrasezoo.core.progress import row_bar

from ..features.lexical import TfidfChannel, channel_from_state, channel_state, sparse_top_k
from ..model.learned import DEFAULT_ENCODER
from .index import build_index, search, stored_vectors, top_k_rows

DEFAULT_MODEL = "hybrid"
RAPIDFUZZ_SCORERS = ("token_sort_ratio", "WRatio", "ratio", "token_set_ratio", "partial_ratio", "QRatio")
TFIDF_KINDS = ("char", "word")
MAX_CDIST_CELLS = 20_000_000  # rapidfuzz score matrix chunk (queries x reference), float32: 80 MB


def _load_encoder(spec: Any, batch_size: int | None, progress: bool):
    from phrasezoo.encoders import load_encoder  # lazy: keeps the encoders (scipy) off 'import phrasezoo.match'

    return load_encoder(spec, batch_size=batch_size, progress=progress)


#: reference rows embedded per call when a vector scorer is fitted
FIT_CHUNK = 32_768
INDEX_BAR_ROWS = 100_000  # an index over at least this many rows shows a progress bar while it is built


def gather_scores(matrix_fn, queries: list[str], candidates: np.ndarray) -> np.ndarray:
    """``(n, p)`` scores of each query against its candidate rows (-1 = none -> -inf), from a per-query score
    function ``matrix_fn(query_index, ids) -> scores``."""
    out = np.full(candidates.shape, -np.inf, dtype=np.float32)
    for row in range(len(queries)):
        ids = candidates[row]
        valid = ids >= 0
        if valid.any():
            out[row, valid] = matrix_fn(row, ids[valid])
    return out


class VectorScorer:
    """Cosine similarity of L2-normalised embeddings from a zoo encoder, searched with faiss."""

    kind = "vectors"
    has_vectors = True

    def __init__(self, model: Any = DEFAULT_ENCODER, batch_size: int | None = None, progress: bool = True,
                 index: str = "auto", index_options: dict | None = None) -> None:  # fmt: skip
        self.encoder = _load_encoder(model, batch_size, progress)
        self.spec = model if isinstance(model, str) else None
        self.name = self.encoder.name
        self.index_kind = index
        self.index_options = index_options or {}
        self.progress = progress
        self.vectors: np.ndarray | None = None
        self._index = None

    def encode(self, texts: list[str], cache: bool = True) -> np.ndarray:
        vectors = np.ascontiguousarray(self.encoder.encode(texts, cache=cache), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise RuntimeError(f"{self.name} returned vectors of shape {vectors.shape} for {len(texts)} texts.")
        return vectors

    def fit(self, reference: list[str]) -> None:
        """Embed the reference table in chunks into one array, outside the encoder's string cache: at a million
        rows the cache and a stacked copy would hold every row twice."""
        self._index = None
        self.vectors = None
        out: np.ndarray | None = None
        for start in range(0, len(reference), FIT_CHUNK):
            part = self.encode(reference[start : start + FIT_CHUNK], cache=False)
            if out is None:
                out = np.empty((len(reference), part.shape[1]), dtype=np.float32)
            out[start : start + len(part)] = part
        self.vectors = out if out is not None else self.encode([])
        self.index  # noqa: B018 - fit indexes too: the first search must not pause minutes for an HNSW build

    @property
    def index(self):
        """The faiss index over the reference rows (built by ``fit`` and ``restore``, or here if missing);
        ``vectors`` then reads the index's own copy of the rows where it keeps them whole (flat and HNSW), so the
        rows are held once. A build of at least :data:`INDEX_BAR_ROWS` rows shows a progress bar."""
        if self._index is None:
            with row_bar(len(self.vectors), f"index {self.name}", self.progress, min_rows=INDEX_BAR_ROWS) as bar:
                self._index = build_index(self.vectors, self.index_kind, progress=bar, **self.index_options)
            self.vectors = stored_vectors(self._index, self.vectors)
        return self._index

    def search(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray]:
        return search(self.index, self.encode(queries), top_k, progress=progress)

    def pair_scores(self, queries: list[str], candidates: np.ndarray) -> np.ndarray:
        q = self.encode(queries)
        return gather_scores(lambda r, ids: self.vectors[ids] @ q[r], queries, candidates)

    def clear_cache(self) -> None:
        """Forget the per-run string cache (the encoder keeps every string it has embedded)."""
        for attribute in ("_cache", "_token_cache", "_mention_cache"):
            cache = getattr(self.encoder, attribute, None)
            if isinstance(cache, dict):
                cache.clear()

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        if self.spec is None:
            raise ValueError("A matcher built on an in-memory model cannot be saved; pass a model path or spec.")
        return {"kind": self.kind, "model": self.spec, "index": self.index_kind}, {"vectors": self.vectors}

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        self.vectors = np.ascontiguousarray(arrays["vectors"], dtype=np.float32)
        self._index = None
        self.index  # noqa: B018 - as fit: indexed before the first search


class TfidfScorer:
    """TF-IDF cosine of character 2-4 grams (``tfidf:char``) or words (``tfidf:word``), fitted on the reference."""

    kind = "tfidf"
    has_vectors = False

    def __init__(self, channel: str = "char") -> None:
        if channel not in TFIDF_KINDS:
            raise ValueError(f"Unknown TF-IDF channel {channel!r}; use tfidf:char or tfidf:word.")
        self.channel = TfidfChannel(channel)
        self.name = f"tfidf:{channel}"
        self.matrix = self.matrix_t = None

    def fit(self, reference: list[str]) -> None:
        self.channel.fit(reference)
        self._set_matrix(self.channel.transform(reference))

    def _set_matrix(self, matrix) -> None:
        self.matrix = matrix
        self.matrix_t = matrix.T.tocsr()  # searched in chunks: transposed once

    def search(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray]:
        scores, ids = sparse_top_k(self.channel.transform(queries), self.matrix, top_k, reference_t=self.matrix_t)
        if progress is not None:
            progress.update(len(queries))
        return _fill_zero_scores(scores, ids, self.matrix.shape[0])

    def pair_scores(self, queries: list[str], candidates: np.ndarray) -> np.ndarray:
        q = self.channel.transform(queries)
        return gather_scores(lambda r, ids: (self.matrix[ids] @ q[r].T).toarray().ravel(), queries, candidates)

    def clear_cache(self) -> None:
        pass

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = channel_state("tfidf", self.channel)
        return {"kind": self.kind, "channel": self.channel.kind, **meta}, arrays

    def restore(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], reference: list[str]) -> None:
        self.channel = channel_from_state(meta["tfidf"], arrays, "tfidf")
        self._set_matrix(self.channel.transform(reference))


def _fill_zero_scores(scores: np.ndarray, ids: np.ndarray, n_reference: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows that share no n-gram with some reference rows still get ``top_k`` answers: the missing slots are the
    lowest-numbered other rows with score 0 (as an exhaustive search would rank them), so every query is answered."""
    missing = ids < 0
    if not missing.any():
        return scores, ids
    k = ids.shape[1]
    for row in np.flatnonzero(missing.any(axis=1)):
        have = set(ids[row][ids[row] >= 0].tolist())
        fill = [i for i in range(min(n_reference, k + len(have))) if i not in have][: int(missing[row].sum())]
        slots = np.flatnonzero(missing[row])[: len(fill)]
        ids[row, slots] = fill
        scores[row, slots] = 0.0
    return scores, ids


class RapidfuzzScorer:
    """A rapidfuzz string scorer (``rapidfuzz.fuzz.<name>`` with ``utils.default_process``), scores / 100."""

    kind = "rapidfuzz"
    has_vectors = False

    def __init__(self, scorer: str = "token_sort_ratio", workers: int = -1) -> None:
        if scorer not in RAPIDFUZZ_SCORERS or not hasattr(fuzz, scorer):
            raise ValueError(f"Unknown rapidfuzz scorer {scorer!r}; use one of {', '.join(RAPIDFUZZ_SCORERS)}.")
        self.scorer = getattr(fuzz, scorer)
        self.workers = workers
        self.name = f"rapidfuzz:{scorer}"
        self.reference: list[str] = []

    def scores(self, queries: list[str], keys: list[str]) -> np.ndarray:
        """``(len(queries), len(keys))`` similarity in [0, 1]."""
        matrix = process.cdist(
            queries, keys, scorer=self.scorer, processor=utils.default_process, workers=self.workers,
            dtype=np.float32,
        )  # fmt: skip
        return matrix / 100.0

    def fit(self, reference: list[str]) -> None:
        self.reference = list(reference)

    def search(self, queries: list[str], top_k: int, progress=None) -> tuple[np.ndarray, np.ndarray]:
        chunk = max(1, MAX_CDIST_CELLS // max(1, len(self.reference)))
        scores = np.empty((len(queries), top_k), dtype=np.float32)
        ids = np.empty((len(queries), top_k), dtype=np.int64)
        for start in range(0, len(queries), chunk):
            s, i = top_k_rows(self.scores(queries[start : start + chunk], self.reference), top_k)
            scores[start : start + chunk], ids[start : start + chunk] = s, i
            if progress is not None:
                progress.update(len(s))
        return scores, ids

    def pair_scores(self, queries: list[str], candidates: np.ndarray) -> np.ndarray:
        return gather_scores(
            lambda r, ids: self.scores([queries[r]], [self.reference[i] for i in ids])[0], queries, candidates
        )

    def clear_cache(self) -> None:
        pass

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {"kind": self.kind, "scorer": self.name.split(":", 1)[1]}, {}
