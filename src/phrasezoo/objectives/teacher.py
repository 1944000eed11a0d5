"""A teacher for distillation: a stronger sentence encoder's embeddings of the training phrases, computed once.

The mini recipes can learn from all-mpnet-base-v2 (the embedded ``mpnet-base``, 110M parameters, 768-d) while they
train all-MiniLM-L6-v2 (22.7M, 384-d). Dimensions differ, so the loss compares *similarities* (see
:func:`phrasezoo.objectives.losses.similarity_distillation`), never the vectors themselves.

A training table holds far more strings than a run draws (pearl-mini: 206,649 strings; its 300 steps look up a
fraction of them), so rows are embedded *lazily*: when a run first looks them up, or all of a run's strings before
its first step (:meth:`TeacherEmbeddings.prefetch`), in the order training draws them. Each row is embedded padded as
an eager pass over the whole table would have padded it, so it has that pass's bits (:mod:`phrasezoo.objectives.teacher_rows`);
rows are cached on disk by content (``cache_dir()/teacher/``), so a rerun, a resumed run or another soup ingredient
reads what any run embedded before. :attr:`TeacherEmbeddings.vectors` still gives every row (embedding the missing
ones), for users that need them all (the lexicon term's nearest neighbours).

A teacher may also be a *blend* of encoders, ``{"mpnet-base": 0.5, "minilm-l6": 0.5}``: each is cached on its own,
and their unit rows are joined as ``[sqrt(w1) a, sqrt(w2) b]`` (weights summing to 1), so that the blend's cosine
of two phrases is the weighted mean of the encoders' cosines. Blending in the student's own backbone keeps the
teacher term from pulling the student wholly towards a teacher that is worse than it on some tasks.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import torch

from phrasezoo.core.machine import has_fast_bf16
from phrasezoo.objectives.teacher_rows import BF16_TAG, RowStore, save_rows, seconds_spent, strings_key
from phrasezoo.resources import cache_dir

logger = logging.getLogger(__name__)
__all__ = ["DEFAULT_TEACHER", "TeacherEmbeddings", "seconds_spent", "teacher_embeddings", "teacher_label"]

#: teacher names a recipe may use; anything else is read as ``baseline:<path or Hub id>`` (mean pooling)
DEFAULT_TEACHER = "mpnet-base"

#: a teacher: one encoder (backbone name, folder or Hub id) or a blend ``{encoder: weight}``
TeacherSpec = str | Mapping[str, float]


def blend_weights(teacher: TeacherSpec) -> dict[str, float]:
    """``{encoder: weight}`` of a teacher spec, weights normalised to sum to 1 (a single encoder has weight 1)."""
    if isinstance(teacher, str):
        return {teacher: 1.0}
    if not isinstance(teacher, Mapping) or not teacher:
        raise ValueError(
            f"A teacher is an encoder name or a non-empty mapping {{encoder: weight}}, got {teacher!r}; "
            "e.g. teacher: mpnet-base, or teacher: {mpnet-base: 0.5, minilm-l6: 0.5}."
        )
    weights = {str(name): float(w) for name, w in teacher.items()}
    bad = {name: w for name, w in weights.items() if not (w > 0 and math.isfinite(w))}
    if bad:
        raise ValueError(f"Teacher blend weights must be positive and finite, got {bad}.")
    total = sum(weights.values())
    return {name: w / total for name, w in weights.items()}


def teacher_label(teacher: TeacherSpec) -> str:
    """A readable name: ``mpnet-base``, or ``0.5 mpnet-base + 0.5 minilm-l6`` for a blend."""
    if isinstance(teacher, str):
        return teacher
    return " + ".join(f"{w:.3g} {name}" for name, w in blend_weights(teacher).items())


class TeacherEmbeddings:
    """L2-normalised teacher rows of a fixed set of strings, looked up by string and embedded on first use.

    ``index`` maps every string of the set to its row, so that ``lookup`` knows at once which strings the teacher
    covers; a row is embedded the first time it is looked up (or prefetched). ``vectors`` gives every row. Built by
    :func:`teacher_embeddings`; a ready matrix is wrapped as ``TeacherEmbeddings(name, index, matrix)``.
    """

    def __init__(self, teacher: str, index: dict[str, int], vectors: torch.Tensor | None = None, rows=None):
        if (vectors is None) == (rows is None):
            raise ValueError("TeacherEmbeddings needs either a ready matrix or a row source, not both.")
        self.teacher = teacher
        self.index = index
        self._vectors = vectors
        self._rows = rows  # _SetRows or _BlendRows: rows embedded on demand; PackedRows: the rows a run draws

    @property
    def lazy(self) -> bool:
        """Whether rows are embedded on demand (an encoder stands behind them) rather than held as tensors."""
        return self._vectors is None and not isinstance(self._rows, PackedRows)

    def __len__(self) -> int:
        return len(self.index)

    @property
    def vectors(self) -> torch.Tensor:
        """``(n, d)`` float32 unit rows of every string, in ``index`` order (the missing ones are embedded now)."""
        if self._vectors is None:
            self._vectors = self._rows.all_rows()
            self._rows = None
        return self._vectors

    def lookup(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """``(rows, found)``: the teacher rows of ``texts`` (zeros where unknown) and a bool mask of known ones."""
        ids = torch.tensor([self.index.get(t, -1) for t in texts], dtype=torch.long)
        found = ids >= 0
        return self.rows_at(ids[found].tolist(), found), found

    def prefetch(self, texts: Iterable[str], progress: bool = True) -> None:
        """Embed now, in large batches, the rows of ``texts`` a run will look up (strings outside the set are
        ignored), so that its steps find them ready."""
        if self._rows is not None:
            known = [t for t in dict.fromkeys(texts) if t in self.index]
            self._rows.prefetch(known, [self.index[t] for t in known], progress)

    def rows_at(self, ids: list[int], found: torch.Tensor) -> torch.Tensor:
        """A ``(len(found), d)`` tensor holding the rows ``ids`` where ``found`` is True and zeros elsewhere."""
        if self._vectors is None:
            return self._rows.rows_at(ids, found)
        rows = torch.zeros(len(found), self._vectors.shape[1], dtype=self._vectors.dtype)
        if ids:
            rows[found] = self._vectors[torch.tensor(ids, dtype=torch.long)]
        return rows

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[int]]:
        """Within the block, collect the ids of every row looked up or prefetched (still embedding them as usual):
        the rows a run draws, when the block replays its batches."""
        seen: set[int] = set()
        inner = self._rows
        if inner is not None:
            self._rows = _Recording(inner, seen)
        try:
            yield seen
        finally:
            if self._rows is not None:
                self._rows = inner

    def packed(self, ids: Iterable[int]) -> TeacherEmbeddings:
        """A teacher over the same strings (the whole ``index``) that holds the rows ``ids`` only, embedded now, as
        plain tensors: what travels to a machine without the encoder (the GPU job). Looking up another row there
        is an error, never a silent zero."""
        ids = sorted(set(ids))
        wanted = set(ids)
        self.prefetch([text for text, i in self.index.items() if i in wanted], progress=True)
        matrix = self.rows_at(ids, torch.ones(len(ids), dtype=torch.bool)).contiguous()
        slots = torch.full((len(self.index),), -1, dtype=torch.int32)
        slots[torch.tensor(ids, dtype=torch.long)] = torch.arange(len(ids), dtype=torch.int32)
        return TeacherEmbeddings(self.teacher, self.index, rows=PackedRows(slots, matrix))


class PackedRows:
    """Rows held without their encoder: ``matrix`` holds the rows of the strings a run draws and ``slots[i]`` the
    place of string ``i``'s row in it (-1: not carried). See :meth:`TeacherEmbeddings.packed`."""

    def __init__(self, slots: torch.Tensor, matrix: torch.Tensor):
        self.slots, self.matrix = slots, matrix

    def _places(self, ids: list[int]) -> torch.Tensor:
        places = self.slots[torch.tensor(ids, dtype=torch.long)].long()
        missing = int((places < 0).sum())
        if missing:
            raise LookupError(
                f"{missing} teacher row(s) asked for that were not carried ({len(self.matrix)} of {len(self.slots)} "
                "were: those the planned run draws). The run draws other strings than the pack planned: repack "
                "the recipe with this code (phrasezoo device pack <recipe>)."
            )
        return places

    def prefetch(self, texts: list[str], ids: list[int], progress: bool) -> None:
        self._places(ids)  # before the first step: a row that did not travel fails now, not mid-run

    def rows_at(self, ids: list[int], found: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(len(found), self.matrix.shape[1], dtype=torch.float32)
        if ids:
            out[found] = self.matrix[self._places(ids)].float()
        return out

    def all_rows(self) -> torch.Tensor:
        raise LookupError(
            f"this teacher holds only the {len(self.matrix)} of {len(self.slots)} rows its run draws (it travelled "
            "without its encoder), so it cannot give every row."
        )


class _Recording:
    """A row source that notes the ids asked of the one it wraps (:meth:`TeacherEmbeddings.recording`)."""

    def __init__(self, inner, seen: set[int]):
        self.inner, self.seen = inner, seen

    def prefetch(self, texts: list[str], ids: list[int], progress: bool) -> None:
        self.seen.update(ids)
        self.inner.prefetch(texts, ids, progress)

    def rows_at(self, ids: list[int], found: torch.Tensor) -> torch.Tensor:
        self.seen.update(ids)
        return self.inner.rows_at(ids, found)

    def all_rows(self) -> torch.Tensor:
        return self.inner.all_rows()  # every row: the teacher then holds them all, as a plain matrix


class _SetRows:
    """The rows of one string set from its encoder's :class:`~phrasezoo.objectives.teacher_rows.RowStore`."""

    def __init__(self, store: RowStore, strings: list[str], path: Path | None, dim: int):
        self.store, self.strings, self.path, self.dim = store, strings, path, dim

    def prefetch(self, texts: list[str], ids: list[int], progress: bool) -> None:
        self.store.embed(texts, progress)

    def rows_at(self, ids: list[int], found: torch.Tensor) -> torch.Tensor:
        texts = [self.strings[i] for i in ids]
        self.store.embed(texts)
        out = torch.zeros(len(found), self.dim, dtype=torch.float32)
        if texts:
            out[found] = torch.from_numpy(np.stack([self.store.rows[t] for t in texts]))
        return out

    def all_rows(self) -> torch.Tensor:
        self.store.embed(self.strings, progress=True)
        matrix = np.stack([self.store.rows[t] for t in self.strings]).astype(np.float32)
        if self.path is not None and not self.path.exists():  # the whole set, under the key of its strings
            save_rows(self.path, self.store.tag, self.strings, matrix)
        return torch.from_numpy(np.ascontiguousarray(matrix))


class _BlendRows:
    """A blend's rows: each encoder's rows times the square root of its weight, side by side."""

    def __init__(self, parts: list[TeacherEmbeddings], weights: list[float]):
        self.parts, self.weights = parts, weights

    def prefetch(self, texts: list[str], ids: list[int], progress: bool) -> None:
        for part in self.parts:
            part.prefetch(texts, progress)

    def rows_at(self, ids: list[int], found: torch.Tensor) -> torch.Tensor:
        return torch.cat([w**0.5 * part.rows_at(ids, found) for w, part in zip(self.weights, self.parts)], dim=1)

    def all_rows(self) -> torch.Tensor:
        return torch.cat([w**0.5 * part.vectors for w, part in zip(self.weights, self.parts)], dim=1).contiguous()


_STORES: dict[tuple[str, str, int, str | None], RowStore] = {}


def teacher_embeddings(
    texts: Sequence[str],
    teacher: TeacherSpec = DEFAULT_TEACHER,
    batch_size: int = 256,
    progress: bool = True,
    cache: bool = True,
    precision: str = "auto",
) -> TeacherEmbeddings:
    """The teacher rows of the unique ``texts``: masked mean pooling, L2-normalised, as the sentence-transformers
    model does; embedded when looked up or prefetched (or all at once through ``.vectors``), with the bits of an
    eager pass over the set, and cached by content under ``cache_dir()/teacher/``.

    ``teacher`` is a backbone name (``mpnet-base``, ``minilm-l6``), a local model folder or a Hub id, or a blend
    ``{name: weight}`` of them (each encoder cached on its own; rows joined so that cosines are the weighted mean).
    ``precision``: ``"auto"`` encodes under bf16 autocast where the CPU/GPU has bf16 units (3.4x faster for
    all-mpnet-base-v2 on an AMX CPU, every row at cosine >= 0.9999 to its float32 twin), ``"fp32"`` never does; it is
    part of the cache key.
    """
    weights = blend_weights(teacher)
    if isinstance(teacher, str):
        return _encoder_embeddings(texts, teacher, batch_size, progress, cache, precision)
    parts = [
        _encoder_embeddings(texts, name, batch_size, progress, cache, precision) for name in weights
    ]  # each sorts the same unique strings, so their indexes agree
    return TeacherEmbeddings(teacher_label(teacher), parts[0].index, rows=_BlendRows(parts, list(weights.values())))


def _encoder_embeddings(
    texts: Sequence[str],
    teacher: str,
    batch_size: int = 256,
    progress: bool = True,
    cache: bool = True,
    precision: str = "auto",
) -> TeacherEmbeddings:
    """One encoder's rows (see :func:`teacher_embeddings`): the cached matrix of exactly these strings when there is
    one, else rows from the cache by content and the others embedded on demand."""
    if precision not in ("auto", "fp32"):
        raise ValueError(f"precision must be 'auto' or 'fp32', got {precision!r}.")
    unique = sorted(set(texts))
    if not unique:
        raise ValueError("teacher_embeddings needs at least one string.")
    if any(not isinstance(t, str) or not t.strip() for t in unique):
        raise ValueError("teacher_embeddings takes non-empty strings only.")
    bf16 = precision == "auto" and has_fast_bf16(torch.device("cpu"))
    tag = f"{teacher}{BF16_TAG}" if bf16 else teacher
    folder = cache_dir() / "teacher" if cache else None
    path = folder / f"{Path(teacher).name}-{strings_key(tag, unique)}.npy" if folder else None
    index = {text: i for i, text in enumerate(unique)}
    if path is not None and path.exists():
        logger.info("teacher %s: %d cached rows from %s", teacher, len(unique), path)
        return TeacherEmbeddings(teacher, index, torch.from_numpy(np.ascontiguousarray(np.load(path))))
    key = (teacher, tag, batch_size, str(folder) if folder else None)
    if key not in _STORES:
        _STORES[key] = RowStore(teacher, tag, batch_size, folder, partial(_load_teacher, teacher, batch_size))
    store = _STORES[key]
    store.claim(unique)
    logger.info("teacher %s: %d strings, rows embedded when used", teacher, len(unique))
    return TeacherEmbeddings(teacher, index, rows=_SetRows(store, unique, path, store.dim()))


def _load_teacher(teacher: str, batch_size: int):
    """The teacher encoder, loaded when its first rows are embedded (a GPU pack carries the rows and never loads it)."""
    from phrasezoo.encoders import load_encoder  # lazy: a GPU machine has no teacher encoder, only its cached rows

    return load_encoder(f"baseline:{teacher}", batch_size=batch_size, progress=False)
