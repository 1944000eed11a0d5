"""The name benchmark as the evaluation reads it: a domain's split by name, and the ``calib`` split.

The ``dev`` and ``test`` splits are built and cached on the shared level (:mod:`phrasezoo.data.benchmarks.name_benchmark`),
because training leaves out their strings. The ``calib`` split is the evaluation's alone: each domain's queries
built as dev and test are, from the training entities (no dev or test string), for calibrating a matcher's
thresholds on names it never fitted; it is cached beside the benchmark (``calib-v<VERSION>.json``).
"""

from __future__ import annotations

from phrasezoo.data.benchmarks.held_out import scored_strings, training_entities
from phrasezoo.data.benchmarks.name_benchmark import (
    CALIB,
    DOMAINS,
    SPLITS,
    VERSION,
    NameTask,
    build_task,
    cached_tasks,
    load_benchmark,
    query_extras,
)
from phrasezoo.data.benchmarks.name_generators import SiblingMiner
from phrasezoo.data.benchmarks.name_sources import NameEntity
from phrasezoo.resources import cache_dir
from phrasezoo.resources.splits import normalize


def load_name_task(domain: str, split: str) -> NameTask:
    """One domain's ``dev``, ``test`` or ``calib`` task (see :data:`DOMAINS` and :func:`load_calibration`)."""
    if domain not in DOMAINS:
        raise ValueError(f"Unknown name domain {domain!r}; use one of {', '.join(DOMAINS)}.")
    if split == CALIB:
        return load_calibration()[f"names-{domain}-{split}"]
    if split not in SPLITS:
        raise ValueError(f"Name benchmark split must be one of {', '.join(SPLITS + (CALIB,))}, got {split!r}.")
    return load_benchmark()[f"names-{domain}-{split}"]


def build_calibration(entities: list[NameEntity] | None = None) -> dict[str, NameTask]:
    """Every domain's ``calib`` task: built as dev and test are, from :func:`training_entities` (no dev or test
    string), for calibrating a matcher's thresholds on names it never fitted. A model trained on the train entities
    (a PEARL ``names`` recipe) must not be calibrated on it. ``entities``: :func:`training_entities`' result, when
    the caller has it already."""
    extras = query_extras()
    entities = training_entities() if entities is None else entities
    pool = list({normalize(e.canonical): e.canonical for e in entities}.values())
    taken, miner = scored_strings(), SiblingMiner(pool)
    return {(t := build_task(domain, CALIB, entities, pool, extras, taken, miner)).name: t for domain in DOMAINS}


def load_calibration() -> dict[str, NameTask]:
    """The ``calib`` tasks, built once and cached as JSON beside the benchmark."""
    return cached_tasks(cache_dir() / "name-benchmark" / f"calib-v{VERSION}.json", build_calibration)
