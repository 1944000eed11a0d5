"""The matching engine behind :func:`phrasezoo.match.join` and :func:`phrasezoo.match.link`: fit once, match later.

A :class:`Matcher` is fitted on a reference table (the left table, the canonical names, a KB's names): it embeds it
once, fits the TF-IDF vocabulary on it and builds the search index. ``search`` answers top-k queries against it,
optionally restricted to blocks of rows that share a key with the query (:mod:`phrasezoo.match.engine.blocking`);
``transform`` returns the matches as a DataFrame. ``save``/``load`` keep a fitted matcher in a folder (JSON +
safetensors, no pickle), so new names are matched later without re-encoding the reference.

```python
matcher = Matcher().fit(canonical_names)          # the hybrid default
matcher.save("companies.matcher")
Matcher.load("companies.matcher").transform(["JPM", "Goldman"], threshold="auto")
```
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.progress import row_bar

from ..io.inputs import as_column, check_strings
from ..scoring.hybrid import HybridScorer
from ..scoring.index import INDEX_TYPES, top_k_rows
from ..scoring.scorers import DEFAULT_MODEL
from ..scoring.specs import make_scorer
from .blocking import FALLBACKS, BlockIndex, KeyFunction
from .results import check_target_precision, match_rows

FORMAT_VERSION = 1
STATE_FILE = "matcher.json"
ARRAYS_FILE = "matcher.safetensors"


class Matcher:
    """Top-k matching of query strings against a fitted reference table.

    Args:
        model: what scores pairs (see :mod:`phrasezoo.match.scoring.scorers`): ``"hybrid"`` (default: all-MiniLM-L6-v2 +
            lexical channels, learned combination), ``"hybrid:<encoder>"``, an encoder alone (``"baseline:minilm-l6"``,
            an exported zoo folder, a recipe name, a loaded model with ``encode``), ``"tfidf:char"``/``"tfidf:word"``
            or ``"rapidfuzz:<scorer>"``.
        index: ``"auto"``, ``"flat"`` (exact), ``"ivf"`` or ``"hnsw"`` (approximate, for large tables).
        blocking: ``None`` (compare with every row), ``"first_token"``, ``"tokens"``, ``"char3"`` or a key function.
        blocking_fallback: ``"all"``: queries with no candidate in their blocks search the whole table; ``"none"``:
            they stay unmatched.
        batch_size: encoder batch size. progress: show progress bars on long work.
        nprobe, hnsw_m, ef_search: approximate-index settings (see :func:`phrasezoo.match.scoring.index.build_index`).
    """

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        index: str = "auto",
        blocking: str | KeyFunction | None = None,
        blocking_fallback: str = "all",
        batch_size: int | None = None,
        progress: bool = True,
        nprobe: int = 16,
        hnsw_m: int = 32,
        ef_search: int = 128,
    ) -> None:
        if blocking_fallback not in FALLBACKS:
            raise ValueError(f"blocking_fallback must be one of {FALLBACKS}, got {blocking_fallback!r}.")
        if index not in INDEX_TYPES:
            raise ValueError(f"index must be one of {', '.join(INDEX_TYPES)}, got {index!r}.")
        if blocking is not None:
            BlockIndex([], blocking)  # validate the scheme name now, not after encoding
        self.index_kind = index
        self.index_options = {"nprobe": nprobe, "hnsw_m": hnsw_m, "ef_search": ef_search}
        self.scorer = make_scorer(model, batch_size=batch_size, progress=progress, index=index,
                                  index_options=self.index_options)  # fmt: skip
        self.blocking = blocking
        self.blocking_fallback = blocking_fallback
        self.progress = progress
        self.reference: list[str] | None = None
        self.labels: list[Any] | None = None
        self._blocks: BlockIndex | None = None

    @property
    def name(self) -> str:
        return self.scorer.name

    def fit(self, reference: list[str], labels: list[Any] | None = None) -> Matcher:
        """Embed, vectorise and index the reference strings (the left table, or the names of a knowledge base).

        ``labels`` (one per string, default the positions) are what :meth:`transform` reports as ``left_index``.
        """
        reference = check_strings(reference, "reference")
        if labels is not None and len(labels) != len(reference):
            raise ValueError(f"labels has {len(labels)} entries for {len(reference)} reference strings.")
        self.reference = reference
        self.labels = list(labels) if labels is not None else list(range(len(reference)))
        self.scorer.fit(self.reference)
        self._blocks = BlockIndex(self.reference, self.blocking) if self.blocking is not None else None
        return self

    def threshold_for(self, target_precision: float = 0.9, dedupe: bool = False) -> float:
        """The score threshold that kept matches at ``target_precision`` on the training joins (default matcher
        only: its score is a calibrated match probability): the decision's cut, or the combination's calibration
        table for a combination without a decision. ``dedupe``: the decision's cut for a dedupe's pairs (set on
        dedupe lists, where most rows are unique), when it has one."""
        combination = getattr(self.scorer, "combination", None)
        decision = getattr(self.scorer, "decision", None)
        if combination is None or not (decision is not None or combination.calibration):
            raise ValueError(
                f"threshold='auto' needs a calibrated matcher (the default 'hybrid'); {self.name} scores are not "
                "calibrated: pass a number as threshold."
            )
        check_target_precision(target_precision)
        if decision is not None:
            return decision.cut_for(float(target_precision), dedupe=dedupe)
        return combination.threshold_for(float(target_precision))

    def search(self, queries: list[str], top_k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, ids)`` of shape ``(len(queries), top_k)``, best first; id -1 where there is no candidate."""
        if self.reference is None:
            raise RuntimeError("Call fit(reference) before search(queries).")
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
        top_k = int(top_k)
        queries = list(queries)
        if not queries:
            return np.zeros((0, top_k), dtype=np.float32), np.zeros((0, top_k), dtype=np.int64)
        if self._blocks is not None:
            return self._search_blocked(queries, top_k)
        with row_bar(len(queries), f"search {self.name}", self.progress) as bar:
            scores, ids = self.scorer.search(queries, top_k, progress=bar)
        scores[ids < 0] = -np.inf
        return scores, ids

    def transform(self, queries: list[str], top_k: int = 1, threshold: float | str | None = None,
                  target_precision: float = 0.9, keep_unmatched: bool = False, on_missing: str = "raise",
                  calibration: Any = None):  # fmt: skip
        """Match new strings against the fitted reference: a DataFrame like :func:`phrasezoo.match.join`'s
        (``right`` = the query, ``left`` = the reference string, ``left_index`` = its label); the other arguments
        and the ``attrs`` report are :func:`~phrasezoo.match.join`'s."""
        column = as_column(queries, None, what="queries", on_missing=on_missing, allow_empty=True)
        return match_rows(self, column, top_k, threshold, target_precision, keep_unmatched, self.labels,
                          self.reference, skipped={"queries": column.skipped}, calibration=calibration)  # fmt: skip

    # ------------------------------------------------------------------------------------------------ save/load
    def save(self, folder: str | os.PathLike) -> Path:
        """Write the fitted matcher to ``folder`` (``matcher.json`` + ``matcher.safetensors``; no pickle)."""
        if self.reference is None:
            raise RuntimeError("Fit the matcher before saving it.")
        if self.blocking is not None and not isinstance(self.blocking, str):
            raise ValueError("A matcher with a blocking function cannot be saved; use a named scheme or none.")
        meta, arrays = self.scorer.state()
        try:
            labels = json.loads(json.dumps(self.labels))
        except TypeError as err:
            raise ValueError("The reference labels must be JSON values (str/int/float) to save the matcher.") from err
        state = {
            "format": FORMAT_VERSION, "scorer": meta, "reference": self.reference, "labels": labels,
            "blocking": self.blocking, "blocking_fallback": self.blocking_fallback, "index": self.index_kind,
            "index_options": self.index_options,
        }  # fmt: skip
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{ARRAYS_FILE}.tmp"
        save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()} or {"empty": np.zeros(0)}, str(tmp))
        os.replace(tmp, folder / ARRAYS_FILE)
        atomic_write_text(folder / STATE_FILE, json.dumps(state, ensure_ascii=False))
        return folder

    @classmethod
    def load(cls, folder: str | os.PathLike, progress: bool = True, batch_size: int | None = None) -> Matcher:
        """A matcher saved with :meth:`save`; the encoder is loaded for new queries, the reference is not re-encoded."""
        folder = Path(folder)
        if not (folder / STATE_FILE).is_file():
            raise FileNotFoundError(f"{folder} holds no saved matcher ({STATE_FILE} is missing).")
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
        if state.get("format") != FORMAT_VERSION:
            raise ValueError(f"{folder}: matcher format {state.get('format')} is not {FORMAT_VERSION}.")
        arrays = load_file(str(folder / ARRAYS_FILE))
        meta = state["scorer"]
        matcher = cls.__new__(cls)
        matcher.index_kind = state["index"]
        matcher.index_options = state["index_options"]
        matcher.blocking = state["blocking"]
        matcher.blocking_fallback = state["blocking_fallback"]
        matcher.progress = progress
        matcher.reference = state["reference"]
        matcher.labels = state["labels"]
        matcher.scorer = _restore_scorer(meta, arrays, matcher.reference, batch_size, progress, matcher.index_options)
        matcher._blocks = BlockIndex(matcher.reference, matcher.blocking) if matcher.blocking is not None else None
        return matcher

    # ----------------------------------------------------------------------------------------------- internals
    def _search_blocked(self, queries: list[str], top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """Each query against its block's rows, scored alone: the decision reads no claims of other queries here
        (those without a block and searched in full, ``blocking_fallback="all"``, read them among themselves)."""
        scores = np.full((len(queries), top_k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), top_k), -1, dtype=np.int64)
        blocks = [self._blocks.candidates(text) for text in queries]
        fallback = [row for row, found in enumerate(blocks) if found.size == 0]
        with row_bar(len(queries), f"search {self.name} (blocked)", self.progress) as bar:
            for row, found in enumerate(blocks):
                bar.update(1)
                if found.size == 0:
                    continue
                row_scores = self.scorer.pair_scores([queries[row]], found[None, :])
                s, i = top_k_rows(row_scores, top_k)
                scores[row], ids[row] = s[0], np.where(i[0] >= 0, found[np.maximum(i[0], 0)], -1)
        if fallback and self.blocking_fallback == "all":
            s, i = self.scorer.search([queries[r] for r in fallback], top_k)
            scores[fallback], ids[fallback] = s, i
        scores[ids < 0] = -np.inf
        return scores, ids


def _restore_scorer(meta: dict, arrays: dict, reference: list[str], batch_size, progress: bool, index_options: dict):
    kind = meta["kind"]
    if kind == "rapidfuzz":
        scorer = make_scorer(f"rapidfuzz:{meta['scorer']}")
        scorer.fit(reference)
        return scorer
    if kind == "tfidf":
        scorer = make_scorer(f"tfidf:{meta['channel']}")
        scorer.restore(arrays, meta, reference)
        return scorer
    if kind == "vectors":
        scorer = make_scorer(meta["model"], batch_size=batch_size, progress=progress, index=meta["index"],
                             index_options=index_options)  # fmt: skip
        scorer.restore(arrays)
        return scorer
    if kind == "hybrid":
        scorer = HybridScorer(meta.get("model"), combination=meta["combination"], candidates=meta["candidates"],
                              batch_size=batch_size, progress=progress, index=meta.get("index", "auto"),
                              index_options=index_options)  # fmt: skip
        scorer.restore(arrays, meta, reference)
        return scorer
    raise ValueError(f"Unknown scorer kind {kind!r} in a saved matcher.")
