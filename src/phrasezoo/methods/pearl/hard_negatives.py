"""PEARL's hard negatives: phrases that look alike but mean something else ("The New York Times" / "New York Post").

Paper, section 3.4: retrieve candidates with a small edit distance to the phrase, encode them with the base text
encoder, keep the candidates with a *low* cosine similarity. Here:

1. **Candidates** -- ``rapidfuzz.process.cdist`` with ``fuzz.ratio`` (normalised Indel similarity, 0-100) on
   lower-cased phrases, ``score_cutoff`` (default 70) and all cores, in blocks of anchors so memory stays at
   ``block_size x n`` bytes. Excluded: the phrase itself, case/space/punctuation-insensitive duplicates and
   article-only differences ("the United States" / "United States" / "united-states"), and the phrase's own
   paraphrases (a positive must never come back as a negative). At most ``max_candidates`` (default 20, the most
   similar in spelling) are kept, so the low-similarity choice below stays among close look-alikes.
2. **Selection** -- all phrases are encoded once by ``encode`` (L2-normalised rows); per anchor, candidates whose
   cosine reaches ``max_similarity`` (default 0.9: near-certain paraphrases such as plural forms) are dropped, and the
   ``per_anchor`` (default 2) lowest-cosine ones are kept.
3. **Too few candidates** -- ``fallback="none"`` (default) keeps fewer (possibly zero) hard negatives for that
   phrase; the training batch then has in-batch negatives only for it. ``fallback="random"`` fills up with phrases
   drawn at random (seeded, deterministic), i.e. ordinary negatives.

:class:`MiningEncoder` is the default base encoder: the embedded MiniLM backbone (``resolve_backbone
("minilm-l6")``) with masked mean pooling, as PEARL's E5 encoder is used.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

import numpy as np
from tqdm.auto import tqdm

from phrasezoo.encoders import MeanPoolingEncoder
from phrasezoo.resources import resolve_backbone

Encoder = Callable[[list[str]], np.ndarray]
_NON_ALNUM = re.compile(r"[\W_]+")
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def duplicate_key(phrase: str) -> str:
    """Key under which two phrases count as the same string: lower-cased, leading article and punctuation/space
    removed ("The United-States" == "united states")."""
    return _NON_ALNUM.sub("", _ARTICLES.sub("", phrase.strip()).lower())


class MiningEncoder:
    """The base encoder of hard-negative mining: ``encoder(texts) -> (n, d)`` L2-normalised float32 rows.

    Masked mean pooling over a backbone through the one implementation, :class:`phrasezoo.encoders.MeanPoolingEncoder`
    (loaded on first use, so a cached dataset never loads the model), plus the ``cache_key`` that names its outputs
    in dataset cache keys.

    Args:
        model: a backbone name for :func:`phrasezoo.resources.resolve_backbone` (``"minilm-l6"``), a Hub id or a
            local folder.
        batch_size: texts per forward pass (texts are sorted by length to limit padding).
        max_length: token limit (phrases are short; longer texts are truncated).
        device: default CUDA when available, else CPU.
    """

    def __init__(
        self,
        model: str = "minilm-l6",
        batch_size: int = 256,
        max_length: int = 32,
        device: str | None = None,
        progress: bool = True,
    ) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.progress = progress
        self._encoder = None

    @property
    def cache_key(self) -> str:
        """Identifies this encoder's outputs in dataset cache keys."""
        return f"meanpool:{self.model_name}:{self.max_length}"

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if self._encoder is None:
            self._encoder = MeanPoolingEncoder(
                resolve_backbone(self.model_name),
                name=f"baseline:{self.model_name}",
                batch_size=self.batch_size,
                max_length=self.max_length,
                device=self.device,
                progress=self.progress,
            )
        return self._encoder.encode(texts)


def edit_candidates(
    phrases: Sequence[str],
    score_cutoff: float = 70,
    max_candidates: int = 20,
    exclude: Sequence[Sequence[str]] | None = None,
    block_size: int = 2048,
    progress: bool = True,
) -> list[np.ndarray]:
    """Per phrase, indices of spelling-similar phrases (``fuzz.ratio >= score_cutoff``), most similar first.

    Duplicates by :func:`duplicate_key` and the phrase's entries in ``exclude`` (its paraphrases) are removed.
    """
    from rapidfuzz import fuzz, process  # lazy: keeps rapidfuzz off the registry's scan

    lowered = [" ".join(p.lower().split()) for p in phrases]
    keys = [duplicate_key(p) for p in phrases]
    out: list[np.ndarray] = []
    starts = range(0, len(phrases), block_size)
    for lo in tqdm(starts, desc="edit-distance candidates", disable=not progress or len(starts) < 2):
        scores = process.cdist(
            lowered[lo : lo + block_size],
            lowered,
            scorer=fuzz.ratio,
            score_cutoff=score_cutoff,
            workers=-1,
            dtype=np.uint8,
        )
        rows, cols = np.nonzero(scores)
        order = np.lexsort((cols, -scores[rows, cols].astype(np.int16), rows))  # by row, then best score first
        rows, cols = rows[order], cols[order]
        bounds = np.searchsorted(rows, np.arange(scores.shape[0] + 1))
        for r in range(scores.shape[0]):
            i = lo + r
            idx = cols[bounds[r] : bounds[r + 1]]
            banned = {keys[i]}
            if exclude is not None and exclude[i]:
                banned.update(duplicate_key(p) for p in exclude[i])
            kept = [j for j in idx.tolist() if j != i and keys[j] not in banned][:max_candidates]
            out.append(np.asarray(kept, dtype=np.int64))
    return out


def select_low_similarity(
    embeddings: np.ndarray,
    candidates: Sequence[np.ndarray],
    per_anchor: int = 2,
    max_similarity: float = 0.9,
) -> list[list[int]]:
    """Per anchor, the ``per_anchor`` candidates with the lowest cosine (below ``max_similarity``), lowest first."""
    chosen: list[list[int]] = []
    for i, cands in enumerate(candidates):
        if len(cands) == 0:
            chosen.append([])
            continue
        sims = embeddings[cands] @ embeddings[i]
        order = np.argsort(sims, kind="stable")
        chosen.append([int(cands[j]) for j in order if sims[j] < max_similarity][:per_anchor])
    return chosen


def mine_hard_negatives(
    phrases: Sequence[str],
    encode: Encoder | None = None,
    per_anchor: int = 2,
    score_cutoff: float = 70,
    max_candidates: int = 20,
    max_similarity: float = 0.9,
    exclude: Sequence[Sequence[str]] | None = None,
    fallback: str = "none",
    seed: int = 0,
    block_size: int = 2048,
    progress: bool = True,
) -> list[list[str]]:
    """Hard negatives for each phrase (see the module docstring); returns one list of strings per phrase.

    Args:
        phrases: the phrase table (hard negatives are drawn from it).
        encode: ``encode(texts) -> (n, d)`` L2-normalised array; default :class:`MiningEncoder` (MiniLM).
        per_anchor: hard negatives per phrase (PEARL: 2).
        score_cutoff: minimum ``fuzz.ratio`` (0-100) for a candidate.
        max_candidates: candidates kept per phrase before the similarity step.
        max_similarity: candidates at or above this cosine are treated as paraphrases and skipped.
        exclude: per phrase, strings that must not be returned (its paraphrases).
        fallback: ``"none"`` or ``"random"`` (see the module docstring).
        seed: seed of the ``"random"`` fallback.
    """
    if fallback not in ("none", "random"):
        raise ValueError(f"fallback must be 'none' or 'random', got {fallback!r}")
    phrases = list(phrases)
    if not phrases:
        return []
    candidates = edit_candidates(phrases, score_cutoff, max_candidates, exclude, block_size, progress)
    needed = sorted({i for i, c in enumerate(candidates) if len(c)} | {int(j) for c in candidates for j in c})
    encode = encode or MiningEncoder(progress=progress)
    embeddings = np.zeros((len(phrases), 1), dtype=np.float32)
    if needed:
        vectors = np.asarray(encode([phrases[i] for i in needed]), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        embeddings = np.zeros((len(phrases), vectors.shape[1]), dtype=np.float32)
        embeddings[needed] = vectors
    chosen = select_low_similarity(embeddings, candidates, per_anchor, max_similarity)
    if fallback == "random":
        keys = [duplicate_key(p) for p in phrases]
        for i, picked in enumerate(chosen):
            rng = random.Random(seed * 1_000_003 + i)
            banned = {keys[i]} | {keys[j] for j in picked}
            if exclude is not None and exclude[i]:
                banned.update(duplicate_key(p) for p in exclude[i])
            attempts = 0
            while len(picked) < per_anchor and attempts < 20 * per_anchor and len(phrases) > 1:
                j = rng.randrange(len(phrases))
                attempts += 1
                if keys[j] not in banned:
                    picked.append(j)
                    banned.add(keys[j])
    return [[phrases[j] for j in picked] for picked in chosen]
