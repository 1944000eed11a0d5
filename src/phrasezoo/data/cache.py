"""On-disk cache of derived ``datasets.Dataset`` objects (mined sentences, PEARL training tables).

Why: parsing the corpus takes minutes and encoding hard-negative candidates tens of seconds, while
``load_from_disk`` memory-maps a saved dataset in about a second. A cache entry lives in
``cache_dir()/datasets/<stage>-<key>`` where ``key`` hashes the stage's parameters together with a *code version*:
a manual version string plus a digest of the source files that produce the data, so any code change invalidates old
entries instead of silently serving stale data.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from datasets import Dataset, load_from_disk

from phrasezoo.resources import cache_dir

from .cache_keys import cache_key, code_version, corpus_fingerprint

__all__ = ["cache_key", "cached_dataset", "code_version", "corpus_fingerprint", "dataset_cache_path"]


def dataset_cache_path(stage: str, params: dict) -> Path:
    """Folder of a cache entry for ``stage`` and ``params`` (not created)."""
    return cache_dir() / "datasets" / f"{stage}-{cache_key(params)}"


def cached_dataset(stage: str, params: dict, build: Callable[[], Dataset], enabled: bool = True) -> Dataset:
    """Load the dataset cached for (stage, params), or build it, save it and return the saved copy.

    The entry is written to a temporary folder and renamed, so an interrupted run never leaves a half-written entry.
    With ``enabled=False`` the builder runs and nothing is read or written. The parameters are also stored as
    ``params.json`` in the entry, which makes cache folders self-describing.
    """
    if not enabled:
        return build()
    path = dataset_cache_path(stage, params)
    if (path / "dataset_info.json").exists():
        return load_from_disk(str(path))
    dataset = build()
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    dataset.save_to_disk(str(tmp))
    (tmp / "params.json").write_text(json.dumps(params, sort_keys=True, indent=1, default=str))
    if path.exists():  # another process won the race; keep its entry
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(path)
    return load_from_disk(str(path))
