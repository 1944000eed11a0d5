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
        self.texts: list[str] = []
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        if (self.folder / "texts.json").exists():
            self.texts = json.loads((self.folder / "texts.json").read_text())
            self.vectors = np.load(self.folder / "vectors.npy")
        self.row = {t: i for i, t in enumerate(self.texts)}

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
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".vectors.npy.tmp", "wb") as handle:
            np.save(handle, self.vectors)
        (self.folder / ".texts.json.tmp").write_text(json.dumps(self.texts))
        os.replace(self.folder / ".vectors.npy.tmp", self.folder / "vectors.npy")
        os.replace(self.folder / ".texts.json.tmp", self.folder / "texts.json")


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
