"""A training task's batch source as JSON and numpy arrays, without pickle, for a machine without the data builders.

A task (:class:`phrasezoo.training.loop.TrainingTask`) holds its examples as plain Python values (lists of
strings, tuples, ints, dicts), tensors and small objects of phrasezoo classes (e.g. the lexicon term). This codec
writes that state as one gzipped JSON document (``task.json.gz``) plus one compressed ``.npz`` of arrays, and reads
it back on any Python >= 3.11 with numpy and torch: no pickle, so other Python, torch or numpy versions read it, and
nothing of ``datasets`` or spaCy is needed. Objects are rebuilt from their class (by import path, from the same
source tree) and their attributes; the model is never stored (:data:`MODEL` marks where it goes back).

Large homogeneous lists are stored as columns: strings as ids into one string table, ints as int arrays, lists of
lists as flat arrays with offsets, lists of equal-length tuples as one column per position. Float32 tensors of at
least :data:`HALF_MIN_ELEMENTS` values travel as float16 (like the weights) and come back as float32; every such
conversion is listed in :attr:`StateWriter.halved`.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import torch

FORMAT = "phrasezoo-task-state/1"
#: marks the attribute that held the model; the reader puts the model given to it back there
MODEL = {"__model__": True}
#: columnar storage from this many items on (shorter lists stay readable JSON)
COLUMN_MIN_ITEMS = 16
#: float32 tensors/arrays with at least this many values travel as float16
HALF_MIN_ELEMENTS = 1 << 16
#: modules whose classes may be rebuilt (everything the reader imports comes from this package)
ALLOWED_MODULE_PREFIX = "phrasezoo."


class StateWriter:
    """Encodes a task object into ``(document, arrays)``; see the module docstring."""

    def __init__(self, model=None, canonical: bool = False):
        self.model = model
        self.canonical = canonical  # dicts in key order: for the fingerprint, not for storage
        self.arrays: dict[str, np.ndarray] = {}
        self.strings: dict[str, int] = {}
        self.halved: list[str] = []

    # ----------------------------------------------------------------------------------------------- plumbing
    def _array(self, value: np.ndarray, path: str) -> str:
        name = f"a{len(self.arrays)}"
        if value.dtype == np.float32 and value.size >= HALF_MIN_ELEMENTS:
            value = value.astype(np.float16)
            self.halved.append(path)
        self.arrays[name] = np.ascontiguousarray(value)
        return name

    def _string_ids(self, values: list[str]) -> np.ndarray:
        table = self.strings
        ids = [table.setdefault(s, len(table)) for s in values]
        return np.asarray(ids, dtype=np.int64 if len(table) > 2**31 - 1 else np.int32)

    @staticmethod
    def _int_array(values: list[int]) -> np.ndarray:
        array = np.asarray(values, dtype=np.int64)
        if array.size and array.min() >= np.iinfo(np.int32).min and array.max() <= np.iinfo(np.int32).max:
            array = array.astype(np.int32)
        return array

    # -------------------------------------------------------------------------------------------------- encode
    def encode(self, value: Any, path: str = "task") -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if self.model is not None and value is self.model:
            return MODEL
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            value = float(value)
            return value if np.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, torch.Tensor):
            tensor = value.detach().cpu()
            dtype = str(tensor.dtype).removeprefix("torch.")
            if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16
                tensor = tensor.float()
            return {"__tensor__": self._array(tensor.numpy(), path), "dtype": dtype}
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                raise TypeError(f"cannot pack an object array at {path}: use lists or numeric arrays.")
            return {"__ndarray__": self._array(value, path), "dtype": str(value.dtype)}
        if isinstance(value, list):
            return self._encode_list(value, path)
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, (set, frozenset)):
            return {"__set__": self._encode_list(sorted(value, key=repr), path)}
        if isinstance(value, dict):
            items = sorted(value.items(), key=lambda item: repr(item[0])) if self.canonical else value.items()
            keys, values = [k for k, _ in items], [v for _, v in items]
            if len(values) < COLUMN_MIN_ITEMS:  # small: each value encoded under its own key's path
                encoded = [self.encode(v, f"{path}[{k!r}]") for k, v in items]
            else:
                encoded = self._encode_list(values, f"{path}.values")
            return {"__dict__": [self._encode_list(keys, f"{path}.keys"), encoded]}
        if isinstance(value, torch.nn.Module):
            raise TypeError(
                f"cannot pack the module {type(value).__name__} at {path}: only the task's model travels, as weights."
            )
        return self._encode_object(value, path)

    def _encode_list(self, items: list, path: str) -> Any:
        if len(items) >= COLUMN_MIN_ITEMS:
            kinds = {type(v) for v in items}
            if kinds == {str}:
                return {"__strs__": self._array(self._string_ids(items), path)}
            if kinds <= {int} and not any(isinstance(v, bool) for v in items):
                return {"__ints__": self._array(self._int_array(items), path)}
            if kinds == {float}:
                return {"__floats__": self._array(np.asarray(items, dtype=np.float64), path)}
            if kinds == {list}:
                inner = {type(v) for row in items for v in row}
                if inner in ({str}, {int}, set()):
                    flat = [v for row in items for v in row]
                    offsets = np.cumsum([0] + [len(row) for row in items], dtype=np.int64)
                    values = self._string_ids(flat) if inner == {str} else self._int_array(flat)
                    key = "__ragged_strs__" if inner == {str} else "__ragged_ints__"
                    return {key: [self._array(values, path), self._array(offsets, f"{path}.offsets")]}
            if kinds == {tuple} and len({len(t) for t in items}) == 1:
                width = len(items[0])
                return {
                    "__tuples__": [self._encode_list([t[i] for t in items], f"{path}[:, {i}]") for i in range(width)]
                }
        return [self.encode(v, f"{path}[{i}]") for i, v in enumerate(items)]

    def _encode_object(self, value: Any, path: str) -> Any:
        cls = type(value)
        where = f"{cls.__module__}:{cls.__qualname__}"
        if not cls.__module__.startswith(ALLOWED_MODULE_PREFIX) or "<locals>" in cls.__qualname__:
            raise TypeError(
                f"cannot pack {where} at {path}: a task's state may hold plain values, tensors and objects of "
                "phrasezoo's own module-level classes only."
            )
        if not hasattr(value, "__dict__"):
            raise TypeError(f"cannot pack {where} at {path}: it has no attribute dictionary (__slots__?).")
        return {"__object__": where, "state": {k: self.encode(v, f"{path}.{k}") for k, v in vars(value).items()}}

    def document(self, root: Any) -> dict:
        """The JSON document of ``root`` (call after :meth:`encode`)."""
        table = [""] * len(self.strings)
        for text, i in self.strings.items():
            table[i] = text
        return {"format": FORMAT, "strings": table, "root": root, "halved": self.halved}


def _encoded(task, model, canonical: bool) -> tuple[StateWriter, bytes]:
    writer = StateWriter(model, canonical)
    document = writer.document(writer.encode(task))
    return writer, json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf8")


def task_fingerprint(task, model) -> str:
    """sha256 of the task's content, dict order aside: the data fingerprint (the same examples, the same digest)."""
    writer, text = _encoded(task, model, canonical=True)
    digest = hashlib.sha256(text)
    for name in sorted(writer.arrays, key=lambda n: int(n[1:])):
        array = writer.arrays[name]
        digest.update(f"{name}:{array.dtype}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def write_task_state(task, model, folder: Path) -> dict[str, Any]:
    """Write ``task`` (its ``model`` left out) to ``folder/task.json.gz`` and ``folder/task.npz``.

    Returns ``{"digest": its fingerprint (:func:`task_fingerprint`), "halved": [...], "files": [...]}``."""
    writer, text = _encoded(task, model, canonical=False)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "task.json.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(text)  # mtime 0: the same task gives the same bytes
    np.savez_compressed(folder / "task.npz", **writer.arrays)
    digest = task_fingerprint(task, model)
    return {"digest": digest, "halved": writer.halved, "files": ["task.json.gz", "task.npz"]}


# ------------------------------------------------------------------------------------------------------- read
class StateReader:
    """Decodes what :class:`StateWriter` wrote; ``model`` goes where the task held it."""

    def __init__(self, document: dict, arrays, model=None):
        if document.get("format") != FORMAT:
            raise ValueError(f"task state format {document.get('format')!r} is not {FORMAT!r}: repack with this code.")
        self.strings: list[str] = document["strings"]
        self.arrays = arrays
        self.model = model

    def _array(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def _strs(self, ids: np.ndarray) -> list[str]:
        table = self.strings
        return [table[i] for i in ids.tolist()]

    def decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        (key, payload), *rest = value.items()
        if key == "__model__":
            return self.model
        if key == "__float__":
            return float(payload)
        if key == "__tensor__":
            array = self._array(payload)
            dtype = getattr(torch, value["dtype"])
            tensor = torch.from_numpy(np.array(array))
            return tensor.to(dtype) if tensor.dtype != dtype else tensor
        if key == "__ndarray__":
            return np.array(self._array(payload)).astype(value["dtype"], copy=False)
        if key == "__tuple__":
            return tuple(self.decode(v) for v in payload)
        if key == "__set__":
            return set(self.decode(payload))
        if key == "__dict__":
            keys, values = (self.decode(part) for part in payload)
            return dict(zip(keys, values, strict=True))
        if key == "__strs__":
            return self._strs(self._array(payload))
        if key == "__ints__":
            return self._array(payload).tolist()
        if key == "__floats__":
            return self._array(payload).tolist()
        if key in ("__ragged_strs__", "__ragged_ints__"):
            values, offsets = (self._array(name) for name in payload)
            flat = self._strs(values) if key == "__ragged_strs__" else values.tolist()
            bounds = offsets.tolist()
            return [flat[a:b] for a, b in zip(bounds, bounds[1:])]
        if key == "__tuples__":
            columns = [self.decode(column) for column in payload]
            return list(zip(*columns, strict=True))
        if key == "__object__":
            cls = import_class(payload)
            obj = cls.__new__(cls)
            obj.__dict__.update({k: self.decode(v) for k, v in value["state"].items()})
            return obj
        raise ValueError(f"unknown entry {key!r} in a task state document.")


def read_task_state(folder: Path, model=None):
    """The task written by :func:`write_task_state`, with ``model`` put back."""
    with gzip.open(folder / "task.json.gz", "rb") as handle:
        document = json.loads(handle.read().decode("utf8"))
    with np.load(folder / "task.npz", allow_pickle=False) as arrays:
        loaded = {name: arrays[name] for name in arrays.files}
    return StateReader(document, loaded, model).decode(document["root"])


def import_class(where: str) -> type:
    """The class ``"module:qualname"``; the module is imported without its packages' ``__init__`` when those fail
    to import (a method package imports its data builders, which need libraries a training machine may lack)."""
    module_name, qualname = where.split(":", 1)
    if not module_name.startswith(ALLOWED_MODULE_PREFIX):
        raise ValueError(f"refusing to rebuild {where}: only phrasezoo classes are rebuilt from a task state.")
    module = import_module_alone(module_name)
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def import_module_alone(module_name: str) -> types.ModuleType:
    """Import ``module_name``; if one of its parent packages fails to import (an ``ImportError`` of a library the
    package's ``__init__`` pulls in), import the module itself with bare parent packages instead."""
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        first_error = error
    parts = module_name.split(".")
    root = importlib.import_module(parts[0])
    for depth in range(2, len(parts)):
        name = ".".join(parts[:depth])
        if name in sys.modules:
            continue
        package = types.ModuleType(name)
        package.__path__ = [str(Path(root.__path__[0], *parts[1:depth]))]
        package.__package__ = name
        sys.modules[name] = package
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(
            f"{module_name} cannot be imported here ({error}; its package first failed with: {first_error}). The "
            "task's module must import without the data builders' libraries (datasets, spaCy, faiss): import them "
            "inside the functions that build data."
        ) from error
