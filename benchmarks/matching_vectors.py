"""Embeddings of every string the matching studies read, cached on disk per model (so dev iterations are cheap).

The matching study (``experiments/matching/matching_dev.py``) scores many feature sets and combinations on the same strings:
the AutoFJ tables (all 50: the dev-10 for choices, the test-40 for the final report), the YAGO/UMLS test pairs and
the offline alias proxy. Encoding them once per model takes minutes to an hour on this 2-core machine, so this
script encodes them once and stores ``texts.json`` + ``vectors.npy`` under
``<cache>/match-vectors/<model name>-<revision>/`` (``<cache>`` is ``PHRASEZOO_CACHE`` or ``~/.cache/phrasezoo``);
a later run adds only the strings not yet stored.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/matching_vectors.py --model baseline:minilm-l6
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
from pathlib import Path

import numpy as np


def store_dir(encoder) -> Path:
    from phrasezoo.resources import cache_dir

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{encoder.name}-{encoder.revision or 'norev'}")
    return cache_dir() / "match-vectors" / name


class VectorStore:
    """A model's cached vectors: ``lookup(texts)`` answers from disk, ``add`` encodes and appends the missing ones."""

    def __init__(self, encoder) -> None:
        self.encoder = encoder
        self.folder = store_dir(encoder)
        with self._locked():
            self.texts, self.vectors = self._read()
        self.row = {t: i for i, t in enumerate(self.texts)}

    @contextlib.contextmanager
    def _locked(self):
        """An exclusive lock on the store, so that two processes (say a test read and a benchmark sharing the int8
        cache) never interleave their writes of ``texts.json`` and ``vectors.npy``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> tuple[list[str], np.ndarray]:
        """The stored strings and vectors (call under the lock); a store whose two files disagree is an error."""
        if not (self.folder / "texts.json").exists():
            return [], np.zeros((0, 0), dtype=np.float32)
        texts, vectors = json.loads((self.folder / "texts.json").read_text()), np.load(self.folder / "vectors.npy")
        if len(texts) != len(vectors):
            raise RuntimeError(f"{self.folder}: {len(texts)} strings but {len(vectors)} vectors; delete the folder "
                               "and run again (it is a cache: the vectors are encoded again).")  # fmt: skip
        return texts, vectors

    def add(self, texts: list[str], chunk: int = 20000) -> None:
        """Encode the strings not stored yet (in chunks, saved after each, so an interrupted run keeps its work)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.row]
        for start in range(0, len(missing), chunk):
            part = missing[start : start + chunk]
            vectors = self.encoder.encode(part)
            self.encoder._cache.clear()
            self.vectors = vectors if not len(self.texts) else np.concatenate([self.vectors, vectors])
            base = len(self.texts)
            self.texts += part
            self.row.update({t: base + i for i, t in enumerate(part)})  # not len(self.row): it grows in update
            self._save()
            print(f"{self.encoder.name}: {len(self.texts)} strings stored ({start + len(part)}/{len(missing)} new)")

    def lookup(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.row]
        if missing:
            self.add(missing)
        return self.vectors[[self.row[t] for t in texts]]

    def _save(self) -> None:
        """Write both files under the lock, first taking in what another process stored meanwhile."""
        with self._locked():
            texts, vectors = self._read()
            extra = [i for i, t in enumerate(texts) if t not in self.row]
            if extra:
                base = len(self.texts)
                self.texts += [texts[i] for i in extra]
                self.vectors = np.concatenate([self.vectors, vectors[extra]])
                self.row.update({texts[i]: base + k for k, i in enumerate(extra)})
            tmp = f".{os.getpid()}.tmp"
            with open(self.folder / f"vectors{tmp}", "wb") as handle:
                np.save(handle, self.vectors)
            (self.folder / f"texts{tmp}").write_text(json.dumps(self.texts))
            os.replace(self.folder / f"vectors{tmp}", self.folder / "vectors.npy")
            os.replace(self.folder / f"texts{tmp}", self.folder / "texts.json")


def study_strings(benchmarks_dir: str, alias_proxy: bool = True) -> list[str]:
    """Every string the matching study reads, in the order the study needs them: the AutoFJ dev-10 tables, the alias
    proxy, the AutoFJ test-40 tables, then the YAGO/UMLS test pairs."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj

    strings: list[str] = []
    for table in read_autofj(autofj_names("dev")):
        strings += table.left + table.right
    if alias_proxy:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments" / "matching"))
        from matching_alias_proxy import load_alias_groups

        for group in load_alias_groups():
            strings += group.strings()
    for table in read_autofj(autofj_names("test")):
        strings += table.left + table.right
    for task in ("yago", "umls"):
        for line in (Path(benchmarks_dir) / task / f"{task}_test_samples.tsv").read_text(encoding="utf8").splitlines():
            strings += [f for f in line.split("\t")[:2] if f]
    return list(dict.fromkeys(strings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="encoder spec (baseline:minilm-l6, an exported folder, ...)")
    parser.add_argument("--benchmarks-dir", default=os.environ.get("PHRASEZOO_BENCHMARKS", "../shared/benchmarks"))
    parser.add_argument("--no-alias-proxy", action="store_true", help="leave the alias proxy's strings out")
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()

    from phrasezoo.encoders import load_encoder

    encoder = load_encoder(args.model, batch_size=args.batch_size)
    store = VectorStore(encoder)
    strings = study_strings(args.benchmarks_dir, alias_proxy=not args.no_alias_proxy)
    # shortest first within AutoFJ is not needed: the encoder sorts each chunk by length itself
    store.add(strings)
    print(f"{encoder.name}: {len(store.texts)} strings in {store.folder}")


if __name__ == "__main__":
    main()
