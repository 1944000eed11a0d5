"""The keys of the on-disk caches: a code version (a manual version string plus a digest of the code that shapes the
data), a stable hash of parameters and a corpus's fingerprint. Apart from :mod:`.cache` (which loads ``datasets``)
so that a key is computed without importing ``datasets``.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType


def code_version(version: str, modules: Iterable[ModuleType | Callable]) -> str:
    """``version`` plus a short digest of the code of ``modules`` (modules, functions or classes: the code that
    shapes a cached dataset).

    The digest is taken over the parsed syntax tree, so reformatting or editing comments keeps cache entries valid
    while any change of code (or docstrings) invalidates them.
    """
    digest = hashlib.sha256()
    for module in modules:
        digest.update(ast.dump(ast.parse(textwrap.dedent(inspect.getsource(module)))).encode())
    return f"{version}-{digest.hexdigest()[:10]}"


def cache_key(params: dict) -> str:
    """Stable 16-hex-digit hash of JSON-serialisable parameters (keys sorted)."""
    blob = json.dumps(params, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def corpus_fingerprint(corpus: str) -> str | dict:
    """What identifies a corpus in a cache key: its name, plus size and mtime when it is a local file."""
    path = Path(corpus)
    if path.is_file():
        stat = path.stat()
        return {"path": str(path.resolve()), "size": stat.st_size, "mtime": int(stat.st_mtime)}
    return corpus
