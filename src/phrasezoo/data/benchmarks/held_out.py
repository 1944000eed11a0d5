"""What training leaves out: every item of the sets that models are chosen and scored on.

Checkpoints, hyper-parameters and mixing weights are chosen on the dev suite's sets (:mod:`phrasezoo.data.benchmarks.dev_sets`),
and the name benchmark scores on its dev and test splits (:mod:`phrasezoo.data.benchmarks.name_benchmark`). A training source
that is not split like them must not touch their strings, so that no choice and no score is made on an item a model
was trained on. The strings held out are exactly those of the built sets, which is why the sets are built on this
shared level rather than in the evaluation workflow (the evaluation reads the same cached sets). Training asks here:

* :func:`dev_set_strings`: the normal form of every string of the dev suite's sets;
* :func:`scored_strings`: the normal form of every dev and test query and gold of the name benchmark;
* :func:`training_entities`: the name benchmark's ``train`` entities, none with a dev or test string.

The stable splits by hash (wiki-leads titles, alias titles) are :mod:`phrasezoo.resources.splits`; the synsets of
the compound dev set, which training synonym tables leave out, :func:`phrasezoo.data.lexical.dev_compound.compound_dev_synsets`.
"""

from __future__ import annotations

import os
from typing import Any

from phrasezoo.resources.splits import normalize

from . import dev_sets
from .name_benchmark import all_entities, entity_strings, load_benchmark, split_entities
from .name_sources import NameEntity


def _strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.add(normalize(value))
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out)


def dev_set_strings(
    sources: tuple[str, ...] = dev_sets.SOURCES,
    benchmarks_dir: str | os.PathLike | None = None,
    progress: bool = False,
) -> frozenset[str]:
    """The normal forms of every string in the given sources' dev sets (queries, candidates, pairs, passages): what
    a training source that is not split like the dev sets (e.g. :mod:`phrasezoo.methods.pearl.aliases.wordnet_names`) must not
    touch, so that checkpoints chosen on the dev suite were never trained on its items."""
    out: set[str] = set()
    for source in sources:
        _strings(dev_sets.load_dev_set(source, benchmarks_dir=benchmarks_dir, progress=progress), out)
    out.discard("")
    return frozenset(out)


def scored_strings() -> frozenset[str]:
    """The normal forms of every dev and test query and gold of the name benchmark: training data made from
    :func:`training_entities` (a generated short name, a typo) must leave these out."""
    return frozenset(normalize(s) for task in load_benchmark().values() for s in task.queries + task.gold)


def training_entities() -> list[NameEntity]:
    """The name benchmark's ``train`` bucket: entities a training recipe may read (no dev or test entity, no dev or
    test string: an entity one of whose names is a made dev or test query, a surname or a typo, is left out too)."""
    scored = scored_strings()
    return [e for e in split_entities(all_entities())["train"] if not entity_strings(e) & scored]
