"""The results file: one JSON document per evaluated model, read by reports, model cards and the pipeline.

Shape (fixed; other tools read it)::

    {"model": str, "model_revision": str | null, "created": ISO-8601 time,
     "results": [{"task": str, "metric": str, "value": float | null, "n": int, "seconds": float, "notes": str}, ...]}

Values are fractions (0.706, not 70.6). ``value`` is ``null`` for a task that was skipped (``notes`` says why). An
entry may carry one extra field, ``details`` (e.g. AutoFJ's per-dataset accuracies).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from phrasezoo.core.errors import InputError
from phrasezoo.core.files import read_user_json, readable_replace

ENTRY_KEYS = ("task", "metric", "value", "n", "seconds", "notes")


@dataclass
class TaskResult:
    """One number of one task (a task may report several metrics)."""

    task: str
    metric: str
    value: float | None
    n: int
    seconds: float = 0.0
    notes: str = ""
    details: dict[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        value = None if self.value is None or not math.isfinite(float(self.value)) else round(float(self.value), 6)
        entry = {
            "task": self.task,
            "metric": self.metric,
            "value": value,
            "n": int(self.n),
            "seconds": round(float(self.seconds), 2),
            "notes": self.notes,
        }
        if self.details is not None:
            entry["details"] = self.details
        return entry


def make_document(model: str, revision: str | None, results: list[TaskResult]) -> dict[str, Any]:
    """The results document for ``model``."""
    return {
        "model": model,
        "model_revision": revision,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": [r.to_dict() for r in results],
    }


def write_results(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``doc`` as JSON atomically (temporary file in the same folder, then ``os.replace``)."""
    validate_document(doc)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf8") as handle:
            json.dump(doc, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        readable_replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_results(path: str | os.PathLike) -> dict[str, Any]:
    """Load and check a results file (:class:`~phrasezoo.core.errors.InputError` naming the file and the bad entry)."""
    doc = read_user_json(path, "results file")
    validate_document(doc, source=str(path))
    return doc


def validate_document(doc: Any, source: str = "results document") -> None:
    """Raise :class:`~phrasezoo.core.errors.InputError` (a ``ValueError``) naming the first entry and field that does not
    have the results-file shape (see the module docstring), or a task and metric given twice."""
    if not isinstance(doc, dict) or not {"model", "model_revision", "created", "results"} <= set(doc):
        raise InputError(f"{source}: expected a JSON object with keys model, model_revision, created, results.")
    for key, kinds in (("model", (str,)), ("model_revision", (str, type(None))), ("created", (str,))):
        if not isinstance(doc[key], kinds):
            raise InputError(f"{source}: '{key}' must be a string, got {doc[key]!r}.")
    if not isinstance(doc["results"], list):
        raise InputError(f"{source}: 'results' must be a list.")
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(doc["results"]):
        if not isinstance(entry, dict) or not set(ENTRY_KEYS) <= set(entry):
            raise InputError(f"{source}: result {i} lacks one of {', '.join(ENTRY_KEYS)}.")
        problem = _entry_problem(entry)
        if problem:
            raise InputError(f"{source}: result {i} ({entry.get('task')!r}): {problem}.")
        key = (entry["task"], entry["metric"])
        if key in seen:
            raise InputError(f"{source}: result {i} repeats task {key[0]!r} metric {key[1]!r} (result {seen[key]}).")
        seen[key] = i


def _entry_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with the fields of one results entry, or ``None``."""
    for key in ("task", "metric"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            return f"'{key}' must be a non-empty string, got {entry[key]!r}"
    value, n, seconds = entry["value"], entry["n"], entry["seconds"]
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
    ):
        return f"'value' must be a finite number or null (skipped), got {value!r}"
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        return f"'n' must be a non-negative integer, got {n!r}"
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        return f"'seconds' must be a non-negative number, got {seconds!r}"
    if not isinstance(entry["notes"], str):
        return f"'notes' must be a string, got {entry['notes']!r}"
    return None


def get_value(doc: dict[str, Any], task: str, metric: str | None = None) -> float | None:
    """The value of ``task`` (its first entry, or the entry with ``metric``) in a results document, or ``None``."""
    for entry in doc.get("results", []):
        if entry["task"] == task and (metric is None or entry["metric"] == metric):
            return entry["value"]
    return None
