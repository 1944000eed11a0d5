"""The learned combinations as data: versioned JSON files, read and checked here, written by the study scripts.

A combination's weights, probability map and calibration table are numbers fitted on dev data, not code, so they live
in JSON files (as splink saves a trained model) with one reader and one writer:

* ``learned.json`` beside this module: the combinations the package ships, by encoder name (the default encoder's,
  the torch path's, nomic's);
* ``matcher.json`` in a zoo method's folder (``methods/<name>/matcher.json``): the combinations learned for that
  method's exports, by export name (``pearl-mini``), found through the registry's :attr:`Method.folder`, so this
  module names no method.

A file is ``{"format_version": 1, "about": ..., "combinations": {encoder name: Combination.to_dict()}}``. The
reader checks the version and that every feature is one of :data:`~phrasezoo.match.features.pairs.FEATURES`, and
says which file is wrong and what to do. The study scripts (``experiments/matching/matching_dev.py fit``,
``names_dev.py fit``, ``names_calibration.py --write``, ``probability_context.py --write``) write through
:func:`store_learned`; do not edit the numbers by hand.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from phrasezoo.core.files import atomic_write_text

from ..features.pairs import FEATURES
from .combinations import BLEND, Combination

#: the layout of the learned files this code reads and writes; a file with another version is refused
FORMAT_VERSION = 1
#: the combinations the package ships (in the wheel as package data)
LEARNED_FILE = Path(__file__).with_name("learned.json")
#: a zoo method's own file, in its folder
METHOD_FILE = "matcher.json"
#: all-MiniLM-L6-v2 run by ONNX Runtime in int8 with a scale per token (phrasezoo.encoders.onnx_int8): the default
#: since round 8 of docs/experiments/matching.md (rule 30: level on dev, 2.1x the rows/s of the torch encoder, answers
#: independent of batching). The torch path is one spec away: "hybrid:baseline:minilm-l6". Its combination is the
#: fallback of every encoder without one of its own.
DEFAULT_ENCODER = "baseline:minilm-l6@onnx-int8"
ABOUT = (
    "Combinations of phrasezoo's hybrid matcher learned on dev data, by encoder name (phrasezoo.match.model.learned). "
    "Written by experiments/matching/*.py; do not edit by hand."
)
REFIT = "re-fit it with experiments/matching/names_dev.py fit (docs/experiments/matching.md)"


class LearnedFileError(ValueError):
    """A learned-combinations file this code cannot use; the message names the file and what to do."""


def read_learned(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The combinations of a learned file, by encoder name (each a :meth:`Combination.to_dict` dict), checked: the
    file's ``format_version`` is :data:`FORMAT_VERSION` and each combination is valid and uses known features."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise LearnedFileError(f"{path}: cannot read the learned combinations ({err}); restore the file from the "
                               f"package or {REFIT}.") from err  # fmt: skip
    version = data.get("format_version") if isinstance(data, dict) else None
    if version != FORMAT_VERSION:
        raise LearnedFileError(
            f"{path}: format_version {version!r}, but this phrasezoo reads version {FORMAT_VERSION}. A newer file "
            f"needs a newer phrasezoo (upgrade it); an older one must be written again: {REFIT}."
        )
    combinations = data.get("combinations")
    if not isinstance(combinations, dict):
        raise LearnedFileError(f"{path}: no 'combinations' mapping (encoder name -> combination); {REFIT}.")
    for key, entry in combinations.items():
        check_entry(path, key, entry)
    return combinations


def check_entry(path: Path, key: str, entry: Any) -> None:
    """Raise :class:`LearnedFileError` when ``entry`` (the combination ``key`` of ``path``) is not a usable one."""
    features = entry.get("features") if isinstance(entry, dict) else None
    if not isinstance(features, list):
        raise LearnedFileError(f"{path}: combination {key!r} has no list of features; {REFIT}.")
    unknown = [f for f in features + list(entry.get("context", [])) if f not in FEATURES]
    if unknown:
        raise LearnedFileError(
            f"{path}: combination {key!r} uses feature(s) {unknown} that this phrasezoo does not compute (known: "
            f"{', '.join(FEATURES)}). Upgrade phrasezoo to the version that wrote the file, or {REFIT}."
        )
    try:
        Combination.from_dict(entry)
    except (TypeError, ValueError) as err:
        raise LearnedFileError(f"{path}: combination {key!r} is not valid ({err}); {REFIT}.") from err


def write_learned(path: str | os.PathLike, combinations: dict[str, dict[str, Any]]) -> None:
    """Write ``combinations`` (encoder name -> combination dict) as a learned file (atomically)."""
    document = {"format_version": FORMAT_VERSION, "about": ABOUT, "combinations": combinations}
    atomic_write_text(Path(path), json.dumps(document, indent=1, ensure_ascii=False) + "\n")


def store_learned(key: str, combination: Combination | dict[str, Any], path: str | os.PathLike = LEARNED_FILE) -> None:
    """Set the combination of encoder ``key`` in the learned file ``path`` (created when missing), keeping the
    others: what the study scripts call after a fit or a calibration."""
    path = Path(path)
    combinations = read_learned(path) if path.exists() else {}
    combinations[key] = combination.to_dict() if isinstance(combination, Combination) else dict(combination)
    check_entry(path, key, combinations[key])
    write_learned(path, combinations)
    shipped_learned.cache_clear()


@cache
def shipped_learned() -> dict[str, dict[str, Any]]:
    """The combinations the package ships (:data:`LEARNED_FILE`), by encoder name; read once."""
    return read_learned(LEARNED_FILE)


def zoo_learned() -> dict[str, dict[str, Any]]:
    """Combinations learned for the zoo's exports, by export name: each method's ``matcher.json`` in its folder
    (found through the registry, so the matcher names no method)."""
    from phrasezoo.zoo.registry import get_method, list_methods  # lazy: the registry's scan imports every method

    found: dict[str, dict[str, Any]] = {}
    for name in list_methods():
        folder = get_method(name).folder
        if folder is not None and (folder / METHOD_FILE).is_file():
            found.update(read_learned(folder / METHOD_FILE))
    return found


def default_combination(encoder_name: str | None = None) -> Combination:
    """The combination the hybrid matcher uses with ``encoder_name``: the one learned for that encoder on the dev
    splits (shipped, or in a method's ``matcher.json`` for the zoo's exports), else the one learned for the default
    encoder (its features are cosines and lexical clues, so it carries over to other encoders; measured in
    docs/experiments/matching.md)."""
    shipped = shipped_learned()
    own = shipped.get(encoder_name) or (zoo_learned().get(encoder_name) if encoder_name else None)
    learned = own or shipped.get(DEFAULT_ENCODER)
    return Combination.from_dict(learned) if learned else BLEND
