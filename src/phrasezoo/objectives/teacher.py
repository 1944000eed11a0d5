"""A teacher for distillation: a stronger sentence encoder's embeddings of the training phrases, computed once.

The mini recipes can learn from all-mpnet-base-v2 (the embedded ``mpnet-base``, 110M parameters, 768-d) while they
train all-MiniLM-L6-v2 (22.7M, 384-d). The teacher never runs inside the training loop: every phrase of the
training table is embedded once, before training, and cached on disk (``cache_dir()/teacher/``, keyed by the teacher
and a hash of the strings), so a rerun or a resumed run reads the cache. Dimensions differ, so the loss compares
*similarities* (see :func:`phrasezoo.objectives.losses.similarity_distillation`), never the vectors themselves.

A teacher may also be a *blend* of encoders, ``{"mpnet-base": 0.5, "minilm-l6": 0.5}``: each is cached on its own,
and their unit rows are joined as ``[sqrt(w1) a, sqrt(w2) b]`` (weights summing to 1), so that the blend's cosine
of two phrases is the weighted mean of the encoders' cosines. Blending in the student's own backbone keeps the
teacher term from pulling the student wholly towards a teacher that is worse than it on some tasks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from phrasezoo.files import atomic_write_text
from phrasezoo.precision import has_fast_bf16
from phrasezoo.resources import cache_dir

logger = logging.getLogger(__name__)

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


@dataclass
class TeacherEmbeddings:
    """L2-normalised teacher rows of a fixed set of strings, looked up by string."""

    teacher: str
    index: dict[str, int]
    vectors: torch.Tensor  # (n, d) float32, unit rows

    def __len__(self) -> int:
        return len(self.index)

    def lookup(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """``(rows, found)``: the teacher rows of ``texts`` (zeros where unknown) and a bool mask of known ones."""
        ids = torch.tensor([self.index.get(t, -1) for t in texts], dtype=torch.long)
        found = ids >= 0
        rows = torch.zeros(len(texts), self.vectors.shape[1], dtype=self.vectors.dtype)
        if bool(found.any()):
            rows[found] = self.vectors[ids[found]]
        return rows, found


def _strings_key(teacher: str, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(teacher.encode())
    for text in texts:
        digest.update(text.encode("utf8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:20]


def _cached_rows(folder: Path, tag: str, wanted: Sequence[str]) -> dict[str, np.ndarray]:
    """Rows of ``wanted`` strings already embedded by the same teacher and precision (``tag``) in earlier cache
    files of ``folder`` (their ``.strings.json`` sidecars list the strings), so a table that gained a few strings
    encodes only those."""
    wanted_set = set(wanted)
    found: dict[str, np.ndarray] = {}
    for sidecar in sorted(folder.glob("*.strings.json")) if folder.is_dir() else []:
        matrix_path = sidecar.with_name(sidecar.name.removesuffix(".strings.json") + ".npy")
        try:
            meta = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("teacher") != tag or not matrix_path.exists():
            continue
        rows = [i for i, text in enumerate(meta["strings"]) if text in wanted_set and text not in found]
        if rows:
            matrix = np.load(matrix_path, mmap_mode="r")
            if matrix.shape[0] != len(meta["strings"]):
                continue
            found.update((meta["strings"][i], np.array(matrix[i])) for i in rows)
        if len(found) == len(wanted_set):
            break
    return found


def teacher_embeddings(
    texts: Sequence[str],
    teacher: TeacherSpec = DEFAULT_TEACHER,
    batch_size: int = 256,
    progress: bool = True,
    cache: bool = True,
    precision: str = "auto",
) -> TeacherEmbeddings:
    """Embed the unique ``texts`` with ``teacher`` (masked mean pooling, L2-normalised, as the sentence-transformers
    model does) and cache the matrix as ``.npy`` with its strings beside it (written atomically); a second call with
    the same strings loads it, and a call with other strings encodes only those no earlier cache file holds.

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
    vectors = torch.cat([w**0.5 * part.vectors for w, part in zip(weights.values(), parts)], dim=1)
    return TeacherEmbeddings(teacher=teacher_label(teacher), index=parts[0].index, vectors=vectors.contiguous())


def _encoder_embeddings(
    texts: Sequence[str],
    teacher: str,
    batch_size: int = 256,
    progress: bool = True,
    cache: bool = True,
    precision: str = "auto",
) -> TeacherEmbeddings:
    """One encoder's cached rows (see :func:`teacher_embeddings`)."""
    from phrasezoo.encoders import load_encoder

    if precision not in ("auto", "fp32"):
        raise ValueError(f"precision must be 'auto' or 'fp32', got {precision!r}.")
    unique = sorted(set(texts))
    if not unique:
        raise ValueError("teacher_embeddings needs at least one string.")
    if any(not isinstance(t, str) or not t.strip() for t in unique):
        raise ValueError("teacher_embeddings takes non-empty strings only.")
    bf16 = precision == "auto" and has_fast_bf16(torch.device("cpu"))
    tag = f"{teacher}|bf16" if bf16 else teacher
    key = _strings_key(tag, unique)
    path = cache_dir() / "teacher" / f"{Path(teacher).name}-{key}.npy"
    if cache and path.exists():
        vectors = np.load(path)
        logger.info("teacher %s: %d cached rows from %s", teacher, len(unique), path)
    else:
        known = _cached_rows(path.parent, tag, unique) if cache else {}
        missing = [t for t in unique if t not in known]
        if known:
            logger.info("teacher %s: %d of %d rows from earlier caches", teacher, len(known), len(unique))
        fresh = np.zeros((0, 0), dtype=np.float32)
        if missing:
            encoder = load_encoder(f"baseline:{teacher}", batch_size=batch_size, progress=progress)
            with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext():
                fresh = np.asarray(encoder.encode(missing), dtype=np.float32)
        rows = dict(zip(missing, fresh))
        vectors = np.stack([known[t] if t in known else rows[t] for t in unique]).astype(np.float32)
        if cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}.npy")
            np.save(tmp, vectors)
            # the sidecar first: a matrix is only ever found beside the strings it holds
            atomic_write_text(
                path.with_suffix(".strings.json"), json.dumps({"teacher": tag, "strings": unique}, ensure_ascii=False)
            )
            os.replace(tmp, path)
    return TeacherEmbeddings(
        teacher=teacher,
        index={text: i for i, text in enumerate(unique)},
        vectors=torch.from_numpy(np.ascontiguousarray(vectors)),
    )
