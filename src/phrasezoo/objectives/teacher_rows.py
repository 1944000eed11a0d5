"""Teacher rows embedded when first needed, with the bits an eager pass over their string set gives.

An eager pass (what :mod:`phrasezoo.objectives.teacher` did before rows were embedded lazily) sorts a set's strings by token
length, embeds them ``batch_size`` at a time and pads each batch to its longest string. On a CPU the bits of a row
depend on the shape of its batch: the length it was padded to and, on some CPUs, the number of rows and its own
row's place (an AVX-512 Xeon takes other matrix kernels for 2 rows than for 4 at some lengths, and for edge rows),
and on that CPU the thread count too, but not on the other rows' contents (measured for all-mpnet-base-v2 and
MiniLM, bf16 and float32: ``tests/test_teacher.py``). So a row embedded later at its place in a batch of the eager
pass's shape (the other places filled with copies), with the process's thread count (never switched by the encoder's
thread tuner), has the eager pass's bits; and the eager pass's shapes follow from the set alone. One thing about the
other rows does count: whether any row of the batch is padded. A batch without padding gets no attention mask
(transformers drops an all-ones mask), and the rows then differ in their last bits (measured 2026-12-06 for
all-mpnet-base-v2 under bf16: "Seagate Tecnoligy" at 9 tokens, 1e-4 apart). So each row is embedded in a batch that
is padded exactly when its eager batch was (a free place gets an empty string when it must be).

A *plan* records them: when a set is first asked for, its strings that no cache file or earlier plan holds (the ones
an eager pass would have embedded: the others came from the cache) get their padded lengths, their batch's rows, their
place in it and whether it was padded, saved as
``<cache>/teacher/*.plan.json``. Rows are embedded when looked up or prefetched, grouped by padded length, and saved
by content as ``*.npy`` matrices with their strings beside them (``*.strings.json``), so that every process and
every later run reads them instead of embedding them again.

A process that runs one torch thread on a machine with more cores (a training run pinned to one thread) embeds many
missing rows in a pool of forked processes, one thread each (:func:`embedding_workers`): every batch keeps its shape
and thread count, so every row keeps its bits, and the idle cores share the work.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.machine import env_count, usable_cores
from phrasezoo.core.progress import progress_enabled
from phrasezoo.core.vectors import l2_normalize

logger = logging.getLogger(__name__)
BF16_TAG = "|bf16"
_SPENT = [0.0]  # seconds this process spent embedding teacher rows (for the main job's stage table)
#: a pool starts when at least this many batches are missing (forking and the first batches cost about a second)
POOL_MIN_BATCHES = 8
_POOL_ENCODER: dict[str, Any] = {}  # what a forked worker embeds with (set before the fork, inherited)


def embedding_workers() -> int:
    """Processes that embed missing rows side by side: the cores this process may use, when it runs one torch
    thread (a training run pinned to one; each forked worker runs one too, so rows keep their bits), else 1 (this
    process's threads use the cores already; forking a process whose OpenMP pool has threads is unsafe).
    ``PHRASEZOO_TEACHER_WORKERS`` overrides it (1: embed in this process)."""
    forced = env_count("PHRASEZOO_TEACHER_WORKERS")
    if forced:
        return forced if torch.get_num_threads() == 1 else 1
    if torch.get_num_threads() != 1 or "fork" not in mp.get_all_start_methods():
        return 1
    return usable_cores()


def seconds_spent() -> float:
    """Seconds this process has spent embedding teacher rows so far."""
    return _SPENT[0]


def strings_key(tag: str, texts: Sequence[str]) -> str:
    digest = hashlib.sha256(tag.encode())
    for text in texts:
        digest.update(text.encode("utf8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:20]


def save_rows(path: Path, tag: str, strings: list[str], matrix: np.ndarray) -> None:
    """Write ``matrix`` with its strings beside it, atomically (the sidecar first: a matrix is only ever found beside
    the strings it holds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}.npy")
    np.save(tmp, matrix)
    atomic_write_text(path.with_suffix(".strings.json"), json.dumps({"teacher": tag, "strings": strings}))
    os.replace(tmp, path)


class RowStore:
    """One encoder's rows (one teacher, precision and batch size) in this process: the rows embedded or read so far
    and the planned padded length of every string claimed, shared by every string set of that encoder."""

    flush_every = 4096

    def __init__(self, teacher: str, tag: str, batch_size: int, folder: Path | None, load: Callable[[], Any]):
        self.teacher, self.tag, self.batch_size, self.folder, self._load = teacher, tag, batch_size, folder, load
        self.rows: dict[str, np.ndarray] = {}
        self.lengths: dict[str, int] = {}
        self.batch_rows: dict[str, int] = {}  # rows of the eager batch each string sat in (plans before it: none)
        self.places: dict[str, int] = {}  # and its row in that batch
        self.padded: dict[str, bool] = {}  # and whether that batch held a padded row (plans before it: none)
        self.unsaved: list[str] = []
        self.encoder = None
        self.scanned: set[Path] = set()
        if folder is not None:
            atexit.register(self.flush)

    def claim(self, strings: list[str]) -> None:
        """Make every string of a sorted unique set embeddable: rows from the cache files, padded lengths from the
        plans, and a new plan for the strings neither holds (the ones an eager pass over the set would embed)."""
        self._scan(set(strings))
        fresh = [s for s in strings if s not in self.rows and s not in self.lengths]
        if fresh:
            lengths, rows, places, padded = planned_shapes(self._encoder(), fresh, self.batch_size)
            self.lengths.update(zip(fresh, lengths))
            self.batch_rows.update(zip(fresh, rows))
            self.places.update(zip(fresh, places))
            self.padded.update(zip(fresh, padded))
            if self.folder is not None:
                plan = {"teacher": self.tag, "batch_size": self.batch_size, "strings": fresh, "lengths": lengths,
                        "rows": rows, "places": places, "padded": padded}  # fmt: skip
                path = self.folder / f"{Path(self.teacher).name}-{strings_key(self.tag, fresh)}.plan.json"
                self.folder.mkdir(parents=True, exist_ok=True)
                atomic_write_text(path, json.dumps(plan))
                self.scanned.add(path)
        if any(s not in self.rows for s in strings):
            self._encoder()  # loaded now, before any training step: nothing it does can touch a step's random state

    def _scan(self, wanted: set[str]) -> None:
        """Rows (``*.strings.json`` + ``*.npy``) and plans (``*.plan.json``) of this encoder in the cache folder."""
        if self.folder is None or not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.json")):
            if path in self.scanned or not path.name.endswith((".strings.json", ".plan.json")):
                continue
            try:
                meta = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if meta.get("teacher") != self.tag:
                continue
            if path.name.endswith(".plan.json"):
                if meta.get("batch_size") == self.batch_size:
                    self.lengths.update(zip(meta["strings"], meta["lengths"]))
                    if "rows" in meta and "places" in meta:
                        self.batch_rows.update(zip(meta["strings"], meta["rows"]))
                        self.places.update(zip(meta["strings"], meta["places"]))
                    if "rows" in meta and "padded" not in meta:  # a plan from before padding was kept: add it
                        meta = self._with_padding(path, meta)
                    if "padded" in meta:
                        self.padded.update(zip(meta["strings"], meta["padded"]))
                    self.scanned.add(path)
                continue
            matrix_path = path.with_name(path.name.removesuffix(".strings.json") + ".npy")
            if not matrix_path.exists():
                continue
            self.scanned.add(path)
            rows = [i for i, text in enumerate(meta["strings"]) if text in wanted and text not in self.rows]
            if rows:
                matrix = np.load(matrix_path, mmap_mode="r")
                if matrix.shape[0] == len(meta["strings"]):
                    self.rows.update((meta["strings"][i], np.array(matrix[i])) for i in rows)
                else:
                    self.scanned.discard(path)

    def _with_padding(self, path: Path, meta: dict) -> dict:
        """An older plan with each batch's padding added (from the same tokenizer's shapes), written back."""
        lengths, rows, places, padded = planned_shapes(self._encoder(), meta["strings"], self.batch_size)
        if (lengths, rows, places) != (meta["lengths"], meta["rows"], meta["places"]):
            return meta  # another tokenizer made it: leave it as it is
        meta = {**meta, "padded": padded}
        atomic_write_text(path, json.dumps(meta))
        return meta

    def _encoder(self):
        if self.encoder is None:
            self.encoder = self._load()
        return self.encoder

    def dim(self) -> int:
        """The width of a row."""
        return next(iter(self.rows.values())).shape[0] if self.rows else self._encoder().model.config.hidden_size

    def embed(self, strings: Iterable[str], progress: bool = False) -> None:
        """Embed the strings that have no row yet: grouped by planned padded length, ``batch_size`` at a time."""
        missing = [s for s in dict.fromkeys(strings) if s not in self.rows]
        if not missing:
            return
        started = time.perf_counter()
        batches = planned_batches(missing, self.lengths, self.batch_rows, self.places, self.batch_size, self.padded)
        bar = tqdm(total=len(missing), desc=f"teacher {self.teacher}", unit="text", disable=not progress_enabled(progress), leave=False)  # fmt: skip
        for slots, vectors in self._embedded(batches):
            done = [(text, vectors[i]) for i, text in enumerate(slots) if text is not None]
            self.rows.update(done)
            bar.update(len(done))
        bar.close()
        self.unsaved.extend(missing)
        _SPENT[0] += time.perf_counter() - started
        if len(self.unsaved) >= self.flush_every:
            self.flush()

    def _embedded(self, batches: list) -> Iterator[tuple[list[str | None], np.ndarray]]:
        """``(slots, rows)`` of each planned batch: here, or in a pool of forked one-thread workers when
        :func:`embedding_workers` gives several and the batches are many (in the order they finish)."""
        bf16, encoder = self.tag.endswith(BF16_TAG), self._encoder()
        workers = min(embedding_workers(), len(batches)) if len(batches) >= POOL_MIN_BATCHES else 1
        if workers <= 1:
            for batch in batches:
                yield batch[1], _embed_batch(encoder, bf16, *batch)
            return
        before = os.environ.get("TOKENIZERS_PARALLELISM")
        os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the forked workers' tokenizers: no threads (and no warning)
        _POOL_ENCODER.update(encoder=encoder, bf16=bf16)
        try:
            with mp.get_context("fork").Pool(workers, initializer=_one_thread) as pool:
                yield from pool.imap_unordered(_embed_in_worker, batches)
        finally:
            _POOL_ENCODER.clear()
            if before is None:  # this process and what it starts later keep their own setting
                os.environ.pop("TOKENIZERS_PARALLELISM", None)
            else:
                os.environ["TOKENIZERS_PARALLELISM"] = before

    def flush(self) -> None:
        """Save the rows embedded since the last flush (a cache file of their own, found by content later)."""
        if self.folder is None or not self.unsaved:
            return
        strings = sorted(set(self.unsaved))
        path = self.folder / f"{Path(self.teacher).name}-rows-{strings_key(self.tag, strings)}.npy"
        save_rows(path, self.tag, strings, np.stack([self.rows[s] for s in strings]).astype(np.float32))
        self.scanned.add(path.with_suffix(".strings.json"))
        self.unsaved.clear()


def planned_shapes(encoder, strings: list[str], batch_size: int) -> tuple[list[int], list[int], list[int], list[bool]]:
    """The length each string is padded to in an eager pass of ``encoder`` over ``strings`` (in this order), the
    number of rows of its batch, its place there and whether a row of that batch was padded: sorted by token length,
    longest first, ``batch_size`` at a time, each batch padded to its longest string."""
    tokenizer, limit = encoder.tokenizer, encoder.max_length
    bare = [len(ids) for ids in tokenizer(strings, add_special_tokens=False, truncation=True, max_length=limit)["input_ids"]]  # fmt: skip
    full = [len(ids) for ids in tokenizer(strings, truncation=True, max_length=limit)["input_ids"]]
    order = sorted(range(len(strings)), key=lambda i: -bare[i])  # the encoder's own order (a stable sort)
    lengths, rows, places, padded = [0] * len(strings), [0] * len(strings), [0] * len(strings), [False] * len(strings)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        longest = max(full[i] for i in chunk)
        any_padded = min(full[i] for i in chunk) < longest
        for place, i in enumerate(chunk):
            lengths[i], rows[i], places[i], padded[i] = longest, len(chunk), place, any_padded
    return lengths, rows, places, padded


def _embed_batch(encoder, bf16: bool, length: int, slots: list[str | None], shaped: bool, padded=None) -> np.ndarray:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        return embed_padded(encoder, slots, length, len(slots) if shaped else None, padded)


def _one_thread() -> None:
    torch.set_num_threads(1)  # the parent's count (the pool only forks a one-thread process): the rows' bits


def _embed_in_worker(batch: tuple) -> tuple[list[str | None], np.ndarray]:
    return batch[1], _embed_batch(_POOL_ENCODER["encoder"], _POOL_ENCODER["bf16"], *batch)


def planned_batches(
    strings: list[str], lengths: dict, rows: dict, places: dict, batch_size: int, padded: dict | None = None
) -> list:
    """``(length, slots, shaped, padded)`` batches that embed ``strings`` at their eager batch's shape: each string
    at its own place (``slots[place]``), free places ``None`` (filled when embedded), with strings whose eager batch
    was padded apart from those whose batch was not (``padded``; ``None`` for plans that did not record it). Strings
    of a plan that recorded no shape are packed ``batch_size`` at a time by length (``shaped`` False: embedded as
    before shapes were kept)."""
    out: list[tuple[int, list[str | None], bool, bool | None]] = []
    open_batches: dict[tuple, list[list[str | None]]] = {}
    loose: dict[int, list[str]] = {}
    padded = padded or {}
    for text in strings:
        if text not in rows:
            loose.setdefault(lengths[text], []).append(text)
            continue
        key, place = (lengths[text], rows[text], padded.get(text)), places[text]
        batches = open_batches.setdefault(key, [])
        slots = next((b for b in batches if b[place] is None), None)
        if slots is None:
            slots = [None] * rows[text]
            batches.append(slots)
        slots[place] = text
    for (length, _, was_padded), batches in sorted(open_batches.items(), key=lambda kv: (*kv[0][:2], str(kv[0][2]))):
        out += [(length, slots, True, was_padded) for slots in batches]
    for length, group in sorted(loose.items()):
        out += [(length, list(group[i : i + batch_size]), False, None) for i in range(0, len(group), batch_size)]
    return out


def embed_padded(
    encoder, texts: list[str | None], length: int, rows: int | None = None, padded: bool | None = None
) -> np.ndarray:
    """Unit rows of ``texts`` by the encoder's masked mean pooling, every text padded to ``length`` tokens, in a batch
    of ``rows`` rows (``None`` places and the rows past the texts filled with a copy of a text: the eager batch's
    shape); without ``rows``, a lone text is embedded beside a copy of itself (a batch of one takes other kernels in
    float32). ``padded``: whether the eager batch held a padded row; when it did and no row here is, a free place
    holds an empty string (or, with none free, the batch is embedded twice, each time with one row emptied). The rows
    of ``None`` places are returned too; callers drop them."""
    if rows is None:
        batch = texts if len(texts) > 1 else texts * 2
    else:
        filler = next(t for t in texts if t is not None)
        batch = [filler if t is None else t for t in texts] + [filler] * (rows - len(texts))
        if padded:
            tokens = _tokens(encoder, batch, length)
            if bool(tokens["attention_mask"].all()):  # no row padded here: the eager batch had one
                free = next((i for i, t in enumerate(texts) if t is None), len(texts) if rows > len(texts) else None)
                if free is None:  # every place holds a full-length string: two passes, one row emptied in each
                    first = _pooled_rows(encoder, ["", *batch[1:]], length)
                    second = _pooled_rows(encoder, [batch[0], "", *batch[2:]], length)
                    return np.concatenate([second[:1], first[1:]])[: len(texts)]
                batch[free] = ""
            else:
                return _pooled_rows(encoder, batch, length, tokens)[: len(texts)]  # tokenized once
    return _pooled_rows(encoder, batch, length)[: len(texts)]


def _tokens(encoder, batch: list[str], length: int):
    return encoder.tokenizer(batch, padding="max_length", truncation=True, max_length=length, return_tensors="pt")


def _pooled_rows(encoder, batch: list[str], length: int, tokens=None) -> np.ndarray:
    with torch.inference_mode():
        enc = (tokens if tokens is not None else _tokens(encoder, batch, length)).to(encoder.device)
        hidden = encoder.model(**enc).last_hidden_state  # the process's threads: the tuner would change the bits
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return l2_normalize(pooled.float().cpu().numpy())
