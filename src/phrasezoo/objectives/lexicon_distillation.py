"""The lexicon term: the student learns the teacher's ranking of each word's nearest neighbours (not in the papers).

The mini recipes' phrase tables teach a phrase encoder what a *phrase* is close to; they say little about the
meaning of the 130k words and short expressions of a dictionary, where all-mpnet-base-v2 (the embedded teacher) is
far ahead of all-MiniLM-L6-v2 (dev suite: word similarity 51.0 vs 34.9, compounds 60.9 vs 56.9). This term closes
part of that gap:

1. a vocabulary (WordNet lemmas, :mod:`phrasezoo.objectives.lexicon_vocabulary`) without test-benchmark items and without
   any dev-suite string, so dev selection stays honest;
2. the teacher embeds it once (cached, :mod:`phrasezoo.objectives.teacher`) and its ``neighbours`` nearest strings are found
   with faiss (cached); a neighbour that forms a benchmark pair with its anchor is dropped;
3. each training step draws ``anchors`` strings and ``group`` of each one's neighbours, and the student's
   similarity ranking over that batch is pulled towards the teacher's (:func:`phrasezoo.objectives.losses.listwise_distillation`,
   softmax temperature ``temperature``). The phrase encoder alone (backbone + mean pooling) takes part.

Prototyped on raw MiniLM alone (300 steps): dev average 56.7 vs 54.2, word similarity 42.4 vs 34.9.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from phrasezoo.data.benchmark_filter import load_blocklist, normalize
from phrasezoo.data.benchmarks.held_out import dev_set_strings
from phrasezoo.objectives.lexicon_vocabulary import lexicon_strings
from phrasezoo.objectives.losses import listwise_distillation
from phrasezoo.objectives.teacher import teacher_embeddings, teacher_label
from phrasezoo.resources import cache_dir, load_wordnet

logger = logging.getLogger(__name__)

#: the ``lexicon`` options of a recipe (``training.method_args.lexicon``) and their defaults
LEXICON_DEFAULTS: dict[str, Any] = {
    "sources": ["wordnet"],  # vocabularies of phrasezoo.objectives.lexicon_vocabulary
    "anchors": 32,  # anchor strings per step
    "group": 7,  # neighbours drawn per anchor (of its `neighbours` nearest under the teacher)
    "neighbours": 16,  # teacher neighbours kept per string
    "temperature": 0.05,  # softmax temperature of both rankings
    # at most this many strings (None: all), drawn at random (seeded) before the teacher embeds them, neighbourhoods
    # found within them: for a run whose teacher rows must travel in a few MiB (the GPU job)
    "max_strings": None,
}


@dataclass
class TeacherNeighbourhoods:
    """Strings, their unit teacher rows and the indices of each one's nearest strings under the teacher."""

    strings: list[str]
    vectors: torch.Tensor  # (n, d_t) float32, unit rows
    neighbours: list[list[int]]  # per string, nearest first (itself and dropped pairs left out)

    def __len__(self) -> int:
        return len(self.strings)

    def sample(self, rng: random.Random, anchors: int, group: int) -> list[int]:
        """``anchors`` random strings, each followed by ``group`` of its neighbours drawn at random; no index twice."""
        ids: list[int] = []
        for anchor in rng.sample(range(len(self.strings)), min(anchors, len(self.strings))):
            pool = self.neighbours[anchor]
            ids.append(anchor)
            ids.extend(rng.sample(pool, min(group, len(pool))))
        return list(dict.fromkeys(ids))


def nearest_neighbours(vectors: np.ndarray, k: int, cache_key: str | None = None) -> np.ndarray:
    """``(n, k)`` indices of each unit row's ``k`` nearest other rows by inner product (exact, faiss), nearest first;
    cached under ``cache_dir()/teacher/`` when ``cache_key`` is given (written atomically)."""
    import faiss  # lazy: faiss stays off the GPU job, which rebuilds tasks without it

    if k < 1:
        raise ValueError(f"neighbours must be >= 1, got {k}.")
    path = cache_dir() / "teacher" / f"neighbours-{cache_key}-k{k}.npy" if cache_key else None
    if path is not None and path.exists():
        found = np.load(path)
        if found.shape == (len(vectors), k):
            return found
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(matrix.shape[1])
    index.add(matrix)
    _, found = index.search(matrix, min(k + 1, len(matrix)))
    rows = []
    for i, row in enumerate(found):  # drop the row itself (usually first; ties may move it)
        others = [j for j in row.tolist() if j != i and j >= 0][:k]
        rows.append(others + [-1] * (k - len(others)))
    found = np.asarray(rows, dtype=np.int64)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}.npy")
        np.save(tmp, found)
        os.replace(tmp, path)
    return found


def teacher_neighbourhoods(
    strings: Sequence[str],
    teacher,
    k: int,
    keep_pair: Callable[[str, str], bool] | None = None,
    progress: bool = True,
) -> TeacherNeighbourhoods:
    """Embed ``strings`` with ``teacher`` (cached) and find each one's ``k`` nearest (cached); ``keep_pair(a, b)``
    False drops ``b`` from ``a``'s neighbours (a benchmark pair)."""
    rows = teacher_embeddings(sorted(set(strings)), teacher, progress=progress)
    ordered = sorted(rows.index, key=rows.index.__getitem__)
    digest = hashlib.sha256(teacher_label(teacher).encode())
    for text in ordered:
        digest.update(text.encode("utf8", "surrogatepass") + b"\x00")
    found = nearest_neighbours(rows.vectors.numpy(), k, cache_key=digest.hexdigest()[:20])
    neighbours = []
    for i, row in enumerate(found.tolist()):
        kept = [j for j in row if j >= 0]
        if keep_pair is not None:
            kept = [j for j in kept if keep_pair(ordered[i], ordered[j])]
        neighbours.append(kept)
    return TeacherNeighbourhoods(strings=ordered, vectors=rows.vectors, neighbours=neighbours)


class LexiconDistillation:
    """Draws a lexicon batch per step and scores the student's ranking of it against the teacher's."""

    def __init__(self, neighbourhoods: TeacherNeighbourhoods, anchors: int, group: int, temperature: float):
        if anchors < 1 or group < 1:
            raise ValueError(f"lexicon anchors and group must be >= 1, got {anchors} and {group}.")
        self.neighbourhoods = neighbourhoods
        self.anchors = anchors
        self.group = group
        self.temperature = temperature

    def sample(self, rng: random.Random) -> tuple[list[int], list[str]]:
        """The batch's indices and strings."""
        ids = self.neighbourhoods.sample(rng, self.anchors, self.group)
        return ids, [self.neighbourhoods.strings[i] for i in ids]

    def loss(self, student: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
        """Listwise distillation of the student's rows of the batch ``ids``."""
        teacher = self.neighbourhoods.vectors[torch.as_tensor(list(ids), dtype=torch.long)]
        return listwise_distillation(student, teacher.to(student.device), self.temperature)

    def facts(self) -> dict[str, Any]:
        n = len(self.neighbourhoods)
        kept = sum(len(row) for row in self.neighbourhoods.neighbours)
        return {
            "lexicon strings (teacher neighbourhoods; benchmark items and dev-suite strings removed)": n,
            "lexicon neighbours per string (after dropping benchmark pairs)": f"{kept / max(n, 1):.1f}",
        }


def lexicon_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The recipe's ``lexicon`` options completed with :data:`LEXICON_DEFAULTS` (unknown keys refused)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(LEXICON_DEFAULTS))
    if unknown:
        raise ValueError(f"Unknown lexicon options {unknown}; known: {sorted(LEXICON_DEFAULTS)}.")
    return {**LEXICON_DEFAULTS, **options}


def build_lexicon_distillation(
    options: Mapping[str, Any] | None,
    teacher,
    filter_mode: str | None,
    progress: bool = True,
) -> LexiconDistillation:
    """The lexicon term of a recipe: vocabulary, filters, teacher rows and neighbourhoods (see the module doc).

    Benchmark items always leave the vocabulary (in ``filter_mode``, ``"multiword"`` when the recipe names none), and
    so does every dev-suite string (:func:`phrasezoo.data.benchmarks.held_out.dev_set_strings`).
    """
    opts = lexicon_options(options)
    mode = filter_mode or "multiword"
    blocklist = load_blocklist()
    dev = dev_set_strings(progress=progress)
    strings = lexicon_strings(opts["sources"], wordnet=load_wordnet() if "wordnet" in opts["sources"] else None)
    kept = [s for s in strings if normalize(s) not in dev and not blocklist.matches(s, mode)]
    logger.info(
        "lexicon: %d of %d strings kept after the benchmark (%s) and dev-suite filters", len(kept), len(strings), mode
    )
    if opts["max_strings"] is not None and len(kept) > int(opts["max_strings"]):
        kept = random.Random(0).sample(sorted(set(kept)), int(opts["max_strings"]))
        logger.info("lexicon: %d strings drawn at random by max_strings", len(kept))
    if len(kept) < 3:
        raise ValueError("The lexicon holds fewer than 3 strings after the filters; check its sources.")
    neighbourhoods = teacher_neighbourhoods(
        kept,
        teacher,
        int(opts["neighbours"]),
        keep_pair=lambda a, b: not blocklist.item_matches([a, b], mode),
        progress=progress,
    )
    return LexiconDistillation(neighbourhoods, int(opts["anchors"]), int(opts["group"]), float(opts["temperature"]))
