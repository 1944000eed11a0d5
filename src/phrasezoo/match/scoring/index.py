"""Nearest-neighbour search over L2-normalised vectors with faiss (inner product = cosine).

``index="flat"`` is exact. For large reference tables ``"ivf"`` (inverted lists: k-means cells, ``nprobe`` of them
searched per query) and ``"hnsw"`` (a navigable small-world graph) are approximate and much faster per query;
``"auto"`` picks flat up to :data:`AUTO_EXACT_LIMIT` reference rows and HNSW beyond.
"""

from __future__ import annotations

import math

import numpy as np

INDEX_TYPES = ("auto", "flat", "ivf", "hnsw")
AUTO_EXACT_LIMIT = 200_000


ADD_CHUNK = 50_000  # rows per faiss ``add`` call, so a long HNSW build can report its progress


def build_index(vectors: np.ndarray, kind: str = "auto", nprobe: int = 16, hnsw_m: int = 32, ef_search: int = 128,
                progress=None):  # fmt: skip
    """A faiss index holding ``vectors`` (float32, rows L2-normalised) for inner-product search.

    ``progress`` (a tqdm-like bar, ``update(n)``) counts the rows added: an HNSW graph over a million rows takes
    minutes to build, so rows are added in chunks of :data:`ADD_CHUNK` (an HNSW graph grows one row at a time
    either way)."""
    import faiss  # lazy: keeps faiss off 'import phrasezoo.match' (TF-IDF and rapidfuzz matchers need none)

    if kind not in INDEX_TYPES:
        raise ValueError(f"index must be one of {', '.join(INDEX_TYPES)}, got {kind!r}.")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    if kind == "auto":
        kind = "flat" if n <= AUTO_EXACT_LIMIT else "hnsw"
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = max(40, 2 * hnsw_m)
        index.hnsw.efSearch = ef_search
    else:  # ivf: about 4 sqrt(n) cells, at least 39 training points per cell (faiss' own minimum)
        nlist = max(1, min(int(4 * math.sqrt(n)), n // 39))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = min(nprobe, nlist)
    for start in range(0, n, ADD_CHUNK):
        index.add(vectors[start : start + ADD_CHUNK])
        if progress is not None:
            progress.update(min(ADD_CHUNK, n - start))
    return index


class _IndexRows:
    """Keeps a faiss index alive for as long as an array viewing its stored rows does (the array's ``base``)."""

    def __init__(self, index, rows: np.ndarray) -> None:
        self.index = index
        self.__array_interface__ = rows.__array_interface__


def stored_vectors(index, vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as the rows ``index`` stores (a view of its memory, no copy) when it keeps them whole and
    unchanged, as flat and HNSW indexes do; otherwise ``vectors`` itself. A caller that keeps the index and reads the
    rows (features, saving) then holds one copy of them, not two: at a million 384-d rows, 1.5 GB."""
    import faiss  # lazy: keeps faiss off 'import phrasezoo.match' (TF-IDF and rapidfuzz matchers need none)

    storage = getattr(index, "storage", None)
    flat = faiss.downcast_index(storage) if storage is not None else index
    if not isinstance(flat, faiss.IndexFlat) or flat.ntotal != len(vectors) or flat.d != vectors.shape[1]:
        return vectors
    rows = faiss.rev_swig_ptr(flat.get_xb(), flat.ntotal * flat.d).reshape(flat.ntotal, flat.d)
    return np.asarray(_IndexRows(index, rows))


def search(
    index, queries: np.ndarray, top_k: int, batch_size: int = 4096, progress=None
) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, ids)`` of the ``top_k`` nearest rows per query; missing neighbours have id -1, score -inf."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    scores = np.empty((len(queries), top_k), dtype=np.float32)
    ids = np.empty((len(queries), top_k), dtype=np.int64)
    for start in range(0, len(queries), batch_size):
        s, i = index.search(queries[start : start + batch_size], top_k)
        scores[start : start + batch_size], ids[start : start + batch_size] = s, i
        if progress is not None:
            progress.update(len(s))
    scores[ids < 0] = -np.inf
    return scores, ids


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Best ``k`` columns per row of a score matrix, highest first (ties: lower column first); pads with -1."""
    n, m = scores.shape
    ids = np.full((n, k), -1, dtype=np.int64)
    best = np.full((n, k), -np.inf, dtype=np.float32)
    if m == 0:
        return best, ids
    take = min(k, m)
    part = np.argpartition(-scores, take - 1, axis=1)[:, :take] if take < m else np.tile(np.arange(m), (n, 1))
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -part_scores), axis=1)
    ids[:, :take] = np.take_along_axis(part, order, axis=1)
    best[:, :take] = np.take_along_axis(part_scores, order, axis=1)
    return best, ids
