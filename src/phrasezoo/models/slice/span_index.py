"""SpanIndex: search the best word spans of a passage collection without materialising the spans.

A SLICE passage of ``n`` words has about ``n * K`` spans of up to ``K`` words; storing a vector per span costs
``n * K * d`` floats (1M words x 20 x 384-d x 4 bytes = 30 GB). The index instead stores, per word, the SUM of its
token vectors (``n * d``) and, per possible span start, the norm of each span's summed vector (``n * K`` scalars).
At query time the dot products of the query with the words (one matrix product) are summed over each span, so the
cosine of span ``[i, i + k)`` is ``(D[i] + ... + D[i + k - 1]) / norm[i, k]``: exact, with ``K / d`` of the naive
memory on top of the word vectors, and ``K`` additions per span instead of a ``d``-long dot product. An optional first stage (FAISS when installed, else a flat matrix
product) picks candidate passages by their mean vector or by their best single word; the spans of the candidates
are then scored exactly.

Self-contained (standard library, numpy, torch; faiss only inside ``try``) because ``save_pretrained`` copies it.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

try:  # optional first stage for large collections
    import faiss
except ImportError:  # pragma: no cover - exercised only where faiss is missing
    faiss = None

FORMAT_VERSION = 1
ARRAYS = (
    "word_vectors",
    "word_counts",
    "span_norms",
    "row_passage",
    "row_slot_start",
    "row_first_word",
    "word_chars",
    "passage_word_start",
    "passage_vectors",
)


@dataclass
class SpanMatch:
    """One span found in a passage.

    ``char_start``/``char_end`` index the passage string (``text == passage[char_start:char_end]``),
    ``word_start``/``word_end`` its words (end exclusive); ``cosine`` in [-1, 1] and ``score01 = (1 + cosine) / 2``
    (the paper's similarity in [0, 1]).
    """

    passage_index: int
    char_start: int
    char_end: int
    text: str
    cosine: float
    score01: float
    word_start: int = -1
    word_end: int = -1


@dataclass
class _Chunk:
    """Scores of one chunk of start words: ``best`` span per start ``(nq, n)`` and what recomputes all spans."""

    slots: np.ndarray
    best: torch.Tensor
    dots: torch.Tensor  # (nq, n) word dots
    inverse: torch.Tensor  # (L, n) inverse span norms (0 where the span does not exist)
    bias: torch.Tensor  # (L, n) 0 or -inf
    min_words: int

    def span_scores(self, selected: torch.Tensor) -> torch.Tensor:
        """Cosines ``(nq, m, L)`` of every span length at the start words ``selected`` ``(nq, m)``."""
        nq, n = self.dots.shape
        n_lengths = self.inverse.shape[0]
        cumulative = torch.cat([self.dots.new_zeros((nq, 1), dtype=torch.float64), self.dots.double().cumsum(1)], 1)
        lengths = torch.arange(self.min_words, self.min_words + n_lengths)
        ends = (selected.unsqueeze(-1) + lengths).clamp(max=n)  # (nq, m, L)
        sums = cumulative.gather(1, ends.reshape(nq, -1)).view_as(ends) - cumulative.gather(1, selected).unsqueeze(-1)
        inverse = self.inverse.T[selected]  # (nq, m, L)
        bias = self.bias.T[selected]
        return (sums.float() * inverse + bias).float()


class SpanIndex:
    """Word vectors + span norms of a passage collection; exact best-span search (see module docstring).

    Built by ``SliceModel.build_index``; ``encoder`` (a callable ``list[str] -> (n, d)`` unit vectors) lets
    :meth:`search` take query strings, otherwise pass query vectors.
    """

    def __init__(
        self,
        passages: list[str],
        arrays: dict[str, np.ndarray],
        max_words: int,
        meta: dict | None = None,
        encoder=None,
    ):
        missing = [name for name in ARRAYS if name not in arrays]
        if missing:
            raise ValueError(f"SpanIndex is missing arrays {missing}.")
        self.passages = list(passages)
        self.max_words = int(max_words)
        self.meta = dict(meta or {})
        self.encoder = encoder
        for name in ARRAYS:
            setattr(self, name, arrays[name])
        if self.span_norms.shape != (len(self.word_vectors), self.max_words):
            raise ValueError(f"span_norms must be (n_slots, max_words={self.max_words}), got {self.span_norms.shape}.")
        self._word_faiss = None
        self._passage_faiss = None
        #: elements of the (queries x words) score arrays per chunk: bounds search memory and keeps it in cache
        self.chunk_budget = 2**20

    # ---------------------------------------------------------------------------------------------- properties
    @property
    def dim(self) -> int:
        return int(self.word_vectors.shape[1])

    @property
    def n_slots(self) -> int:
        """Stored word positions (words of overlapping windows are stored once per window)."""
        return int(self.word_vectors.shape[0])

    def __len__(self) -> int:
        return len(self.passages)

    def nbytes(self) -> int:
        """Bytes of the stored arrays (what the index costs in memory, passages' text excluded)."""
        return int(sum(getattr(self, name).nbytes for name in ARRAYS))

    @staticmethod
    def naive_nbytes(n_spans: int, dim: int, itemsize: int = 4) -> int:
        """Bytes a matrix of one vector per span would take, for comparison."""
        return int(n_spans) * int(dim) * int(itemsize)

    def n_spans(self, min_words: int = 1, max_words: int | None = None) -> int:
        """Number of distinct spans of ``min_words..max_words`` words the index can score."""
        max_words = self.max_words if max_words is None else max_words
        return int((self.span_norms[:, min_words - 1 : max_words] > 0).sum())

    # ------------------------------------------------------------------------------------------------- search
    def search(
        self,
        queries,
        top_k: int = 10,
        threshold: float | None = None,
        min_words: int = 1,
        max_words: int | None = None,
        nms: bool = True,
        first_stage: str | None = None,
        candidates: int = 100,
    ):
        """Best spans for each query: a list of :class:`SpanMatch` per query (one list for a single query).

        Args:
            queries: a string or list of strings (needs ``encoder``), or query vectors ``(d,)`` / ``(n, d)``.
            top_k: spans returned per query (fewer if fewer pass ``threshold``).
            threshold: keep spans with cosine >= this.
            min_words, max_words: span lengths (``max_words`` at most the index's ``max_words``).
            nms: drop spans that overlap a better span of the same passage (else every span is a candidate).
            first_stage: ``None`` scores every span exactly; ``"passage"`` (passage mean vectors) or ``"word"``
                (single-word vectors) first picks ``candidates`` passages (FAISS inner-product search when installed,
                a flat matrix product otherwise) and scores only their spans, exactly. Approximate: a passage whose
                mean (or best word) is not among the candidates is never scored. ``"word"`` keeps a float32 unit
                copy of every word vector in memory (n_words x d x 4 bytes) once used; ``"passage"`` costs
                n_passages x d.
        """
        vectors, single = self._query_vectors(queries)
        min_words, max_words = self._lengths(min_words, max_words)
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or np.isnan(threshold)
        ):
            raise ValueError(f"threshold must be a number (a cosine) or None, got {threshold!r}.")
        if first_stage not in (None, "passage", "word"):
            raise ValueError(f"first_stage must be None, 'passage' or 'word', got {first_stage!r}.")
        results = []
        if first_stage is None:
            slots = np.arange(self.n_slots)
            results = self._search_slots(vectors, slots, top_k, threshold, min_words, max_words, nms)
        else:
            for q in range(len(vectors)):
                rows = self._candidate_rows(vectors[q], first_stage, candidates)
                slots = self._rows_to_slots(rows)
                results += self._search_slots(vectors[q : q + 1], slots, top_k, threshold, min_words, max_words, nms)
        return results[0] if single else results

    def passage_scores(self, queries, min_words: int = 1, max_words: int | None = None) -> np.ndarray:
        """``(n_queries, n_passages)`` best-span cosine of every passage (``-inf`` for a passage without words)."""
        vectors, _ = self._query_vectors(queries)
        min_words, max_words = self._lengths(min_words, max_words)
        best = torch.full((len(vectors), len(self.passages)), float("-inf"), dtype=torch.float32)
        row_of_slot = self._row_of_slot()
        passage_of_slot = torch.from_numpy(self.row_passage[row_of_slot])
        for chunk in self._score_chunks(vectors, np.arange(self.n_slots), min_words, max_words):
            target = passage_of_slot[torch.from_numpy(chunk.slots)]
            best.scatter_reduce_(1, target.unsqueeze(0).expand(len(vectors), -1), chunk.best, "amax")
        return best.numpy()

    # ------------------------------------------------------------------------------------------------ scoring
    def _score_chunks(self, vectors: np.ndarray, slots: np.ndarray, min_words: int, max_words: int):
        """Yield a :class:`_Chunk` per run of whole rows of ``slots`` (rows must be complete).

        Per chunk, the dot of every span with each query is built length by length as a running sum of the word
        dots (float32, no cancellation) and scaled by the stored inverse span norm; only the best span per start
        word is kept (``best``, ``(nq, n)``), so memory stays ``O(nq x n)`` whatever the number of lengths.
        Spans that leave their row have norm 0 and score -inf.
        """
        queries = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32))
        step = max(1, self.chunk_budget // max(1, len(vectors)))
        contiguous = len(slots) > 0 and int(slots[-1]) - int(slots[0]) + 1 == len(slots)
        start = 0
        while start < len(slots):
            stop = self._extend_to_row_end(slots, min(len(slots), start + step))
            chunk = slots[start:stop]
            if contiguous:
                block = self.word_vectors[int(chunk[0]) : int(chunk[-1]) + 1]
                norms = self.span_norms[int(chunk[0]) : int(chunk[-1]) + 1, min_words - 1 : max_words]
            else:
                block = self.word_vectors[chunk]
                norms = self.span_norms[chunk, min_words - 1 : max_words]
            words = torch.from_numpy(np.asarray(block, dtype=np.float32))
            dots = queries @ words.T  # (nq, n)
            norms = torch.from_numpy(np.ascontiguousarray(norms.T, dtype=np.float32))  # (L, n)
            valid = norms > 0
            inverse = torch.where(valid, 1.0 / norms.clamp(min=1e-12), torch.zeros_like(norms))
            bias = torch.where(valid, torch.zeros_like(norms), torch.full_like(norms, float("-inf")))
            n = len(chunk)
            running = dots.clone()
            best = torch.full_like(dots, float("-inf"))
            for length in range(1, max_words + 1):
                if 1 < length <= n:
                    running[:, : n - length + 1] += dots[:, length - 1 :]
                if length >= min_words:
                    k = length - min_words
                    torch.maximum(best, torch.addcmul(bias[k], running, inverse[k]), out=best)
            yield _Chunk(chunk, best, dots, inverse, bias, min_words)
            start = stop

    def _search_slots(self, vectors, slots, top_k, threshold, min_words, max_words, nms) -> list[list[SpanMatch]]:
        """Top spans per query among ``slots``: the best start words per chunk, all their spans, then greedy overlap
        suppression.

        Exact: the top-k spans of a chunk start at its top-k start words (by best span), so without overlap
        suppression ``top_k`` start words per chunk suffice. With it, a span left out scores at most the chunk's
        cut-off (the best span of the last start word kept), so the selection is final once it is complete above
        every cut-off (or the threshold is above them); otherwise more start words are kept.
        """
        per_chunk = max(4 * top_k, 64) if nms else top_k
        n_lengths = max_words - min_words + 1
        while True:
            parts: list[tuple[torch.Tensor, np.ndarray, torch.Tensor]] = []
            cutoff = np.full(len(vectors), -np.inf)
            for chunk in self._score_chunks(vectors, slots, min_words, max_words):
                m = min(per_chunk, len(chunk.slots))
                best, selected = chunk.best.topk(m, dim=1)  # (nq, m)
                if m < len(chunk.slots):
                    cutoff = np.maximum(cutoff, best[:, -1].numpy())
                parts.append((chunk.span_scores(selected), chunk.slots[selected.numpy()], selected))
            lengths = np.arange(min_words, max_words + 1)
            results = []
            for q in range(len(vectors)):
                values = torch.cat([v[q].reshape(-1) for v, _, _ in parts]).numpy()
                starts = np.concatenate([np.repeat(s[q], n_lengths) for _, s, _ in parts])
                spans = np.tile(lengths, len(values) // n_lengths)
                keep = np.isfinite(values)
                if threshold is not None:
                    keep &= values >= threshold
                values, starts, spans = values[keep], starts[keep], spans[keep]
                order = np.argsort(-values, kind="stable")
                results.append(self._select(values[order], starts[order], spans[order], top_k, nms))
            if not nms:
                return results
            complete = [
                cutoff[q] == -np.inf
                or (threshold is not None and cutoff[q] < threshold)
                or (len(r) == top_k and r[-1].cosine >= cutoff[q])
                for q, r in enumerate(results)
            ]
            if all(complete):
                return results
            per_chunk *= 4

    def _select(self, values, starts, lengths, top_k: int, nms: bool) -> list[SpanMatch]:
        """Greedy pass over candidates sorted best first; stops at ``top_k`` chosen spans."""
        chosen: list[SpanMatch] = []
        taken: dict[int, list[tuple[int, int]]] = {}
        row_of_slot = self._row_of_slot()
        for value, slot, length in zip(values.tolist(), starts.tolist(), lengths.tolist()):
            row = int(row_of_slot[slot])
            passage = int(self.row_passage[row])
            word_start = int(self.row_first_word[row] + slot - self.row_slot_start[row])
            word_end = word_start + length
            if nms and any(word_start < e and s < word_end for s, e in taken.get(passage, ())):
                continue
            base = int(self.passage_word_start[passage])
            char_start = int(self.word_chars[base + word_start, 0])
            char_end = int(self.word_chars[base + word_end - 1, 1])
            text = self.passages[passage][char_start:char_end]
            chosen.append(SpanMatch(passage, char_start, char_end, text, value, (1 + value) / 2, word_start, word_end))
            taken.setdefault(passage, []).append((word_start, word_end))
            if len(chosen) == top_k:
                break
        return chosen

    # -------------------------------------------------------------------------------------------- first stage
    def _candidate_rows(self, vector: np.ndarray, first_stage: str, candidates: int) -> np.ndarray:
        if isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)) or candidates < 1:
            raise ValueError(f"candidates must be a positive integer, got {candidates!r}.")
        query = np.ascontiguousarray(vector.reshape(1, -1), dtype=np.float32)
        if first_stage == "passage":
            hits = self._flat_search("_passage_faiss", self.passage_vectors, query, candidates)
            passages = hits
        else:
            word_units = self._word_units()
            hits = self._flat_search("_word_faiss", word_units, query, max(candidates * 4, candidates))
            passages = self.row_passage[self._row_of_slot()[hits]]
            passages = list(dict.fromkeys(passages.tolist()))[:candidates]
        return np.flatnonzero(np.isin(self.row_passage, np.asarray(passages, dtype=self.row_passage.dtype)))

    def _word_units(self) -> np.ndarray:
        """Unit vectors of single words (their token mean), the ``"word"`` first stage's keys."""
        vectors = np.asarray(self.word_vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def _flat_search(self, cache: str, keys: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
        k = min(k, len(keys))
        if faiss is not None:
            index = getattr(self, cache)
            if index is None:
                index = faiss.IndexFlatIP(keys.shape[1])
                index.add(np.ascontiguousarray(keys, dtype=np.float32))
                setattr(self, cache, index)
            _, ids = index.search(query, k)
            return ids[0][ids[0] >= 0]
        scores = np.asarray(keys, dtype=np.float32) @ query[0]
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]

    # ---------------------------------------------------------------------------------------------- plumbing
    def _row_of_slot(self) -> np.ndarray:
        if getattr(self, "_row_cache", None) is None or len(self._row_cache) != self.n_slots:
            counts = np.diff(self.row_slot_start)
            self._row_cache = np.repeat(np.arange(len(counts)), counts)
        return self._row_cache

    def _rows_to_slots(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.arange(self.row_slot_start[r], self.row_slot_start[r + 1]) for r in rows])

    def _extend_to_row_end(self, slots: np.ndarray, stop: int) -> int:
        """Move ``stop`` forward so that a chunk never splits a row (spans must see their whole row)."""
        if stop >= len(slots):
            return len(slots)
        row_of_slot = self._row_of_slot()
        row = row_of_slot[slots[stop - 1]]
        while stop < len(slots) and row_of_slot[slots[stop]] == row:
            stop += 1
        return stop

    def _lengths(self, min_words: int, max_words: int | None) -> tuple[int, int]:
        max_words = self.max_words if max_words is None else max_words
        for name, value in (("min_words", min_words), ("max_words", max_words)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be an integer, got {value!r}.")
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}.")
        if min_words < 1 or min_words > max_words:
            raise ValueError(f"Need 1 <= min_words <= max_words, got min_words={min_words}, max_words={max_words}.")
        if max_words > self.max_words:
            raise ValueError(
                f"max_words={max_words} exceeds the index's max_words={self.max_words}; rebuild the index with "
                f"build_index(..., max_words={max_words})."
            )
        return int(min_words), int(max_words)

    def _query_vectors(self, queries) -> tuple[np.ndarray, bool]:
        if isinstance(queries, str) or (isinstance(queries, (list, tuple)) and queries and isinstance(queries[0], str)):
            single = isinstance(queries, str)
            if self.encoder is None:
                raise ValueError(
                    "This SpanIndex has no encoder for query strings: load it with SpanIndex.load(path, "
                    "encoder=model.encode) or pass query vectors."
                )
            if single and not queries.strip():
                raise ValueError("The query is empty; give at least one word.")
            vectors = np.asarray(self.encoder([queries] if single else list(queries)), dtype=np.float32)
            return vectors.reshape(-1, self.dim), single
        if isinstance(queries, torch.Tensor):
            queries = queries.detach().cpu().numpy()
        if isinstance(queries, np.ndarray) and queries.dtype.kind == "f":
            single = queries.ndim == 1
            vectors = queries.reshape(1, -1) if single else queries
            if vectors.ndim != 2 or vectors.shape[1] != self.dim or len(vectors) == 0:
                raise ValueError(f"Query vectors must be (d,) or (n, d) with d={self.dim}, got {queries.shape}.")
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            if not np.isfinite(vectors).all() or (norms == 0).any():
                raise ValueError("Query vectors must be finite and non-zero.")
            return (vectors / norms).astype(np.float32), single
        raise ValueError(
            f"Queries must be a string, a non-empty list of strings or a float array, got {type(queries).__name__}."
        )

    # --------------------------------------------------------------------------------------------- save/load
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``span_index.npz`` + ``span_index.json`` into folder ``path``, each atomically (temp + rename).

        The json is written last and names a token stored in the npz, so a half-written pair is detected on load.
        """
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex
        arrays = {name: np.asarray(getattr(self, name)) for name in ARRAYS}
        arrays["token"] = np.frombuffer(token.encode(), dtype=np.uint8)
        _atomic_write(folder / "span_index.npz", lambda handle: np.savez(handle, **arrays))
        meta = {
            "format_version": FORMAT_VERSION,
            "token": token,
            "max_words": self.max_words,
            "meta": self.meta,
            "passages": self.passages,
        }
        _atomic_write(folder / "span_index.json", lambda handle: handle.write(json.dumps(meta).encode()))
        return folder

    @classmethod
    def load(cls, path: str | os.PathLike, encoder=None) -> SpanIndex:
        """Read an index written by :meth:`save` (no pickle). ``encoder``: e.g. ``model.encode`` for string queries."""
        folder = Path(path)
        if not (folder / "span_index.json").exists() or not (folder / "span_index.npz").exists():
            raise ValueError(f"{folder} holds no span index (span_index.json + span_index.npz); build and save one.")
        meta = json.loads((folder / "span_index.json").read_text())
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"Unsupported span index format {meta.get('format_version')} (expected {FORMAT_VERSION}).")
        with np.load(folder / "span_index.npz", allow_pickle=False) as data:
            arrays = {name: data[name] for name in ARRAYS}
            token = bytes(data["token"]).decode()
        if token != meta["token"]:
            raise ValueError(f"{folder}: span_index.npz and span_index.json come from different saves; save again.")
        return cls(meta["passages"], arrays, meta["max_words"], meta.get("meta"), encoder=encoder)


def _atomic_write(target: Path, write) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
