"""Name aliases for PEARL's training (``data.alias_pairs.sources: [..., names]``): the name benchmark's training
entities as alias positives, with look-alike siblings as their hard negatives.

* **Positives.** Each training entity of :func:`phrasezoo.data.benchmarks.held_out.training_entities` (the ``train``
  bucket: no dev or test entity, no dev or test string) gives ``(variant, canonical)`` pairs: its acronyms, other
  names and short names as its sources state them, and one noisy variant of a multiword name (typos, a dropped word,
  abbreviated words, drawn by a seed of the entity that differs from the benchmark's). A pair that touches a scored
  string of the benchmark (:func:`~phrasezoo.data.benchmarks.held_out.scored_strings`, checked again here) or a dev-suite
  string is dropped and counted; so is one the benchmark filter drops. At most ``names_max`` pairs are kept, chosen
  by a stable hash of the pair.
* **Hard negatives.** For each name of a kept pair, the look-alike siblings the benchmark mines for its knowledge
  bases (:class:`~phrasezoo.data.benchmarks.name_generators.SiblingMiner`: character TF-IDF neighbours, then names sharing its
  rarest words) among the training entities' canonical names, never a name of its own alias group (the gold alias
  itself, or any name linked to it through a pair), a scored string or a benchmark item.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from phrasezoo.data.benchmarks.held_out import scored_strings, training_entities
from phrasezoo.data.benchmarks.name_generators import SiblingMiner, noisy_variant
from phrasezoo.data.corpus.wiki_links import clean_alias_pairs
from phrasezoo.resources.splits import normalize, stable_hash

from ..data import alias_groups
from .wordnet_names import sample_pairs

#: salt of the noisy variants drawn for training (the benchmark draws its own with other salts)
NOISY_SALT = "pearl-names-noisy"
#: default number of look-alike siblings mined per name (a batch samples ``hard_negatives`` of them)
DEFAULT_SIBLINGS = 4


def entity_pairs(entity) -> list[tuple[str, str]]:
    """``(variant, canonical)`` pairs of one entity: its stated aliases, and a noisy variant of a multiword name."""
    pairs = [(name, entity.canonical) for name, _ in entity.aliases]
    if len(entity.canonical.split()) >= 2 and len(entity.canonical) <= 80:
        variant = noisy_variant(
            entity.canonical, random.Random(stable_hash(f"{entity.source}:{entity.key}", NOISY_SALT))
        )
        if variant:
            pairs.append((variant, entity.canonical))
    return pairs


def name_pairs(entities: Iterable, excluded: frozenset[str] | set[str]) -> tuple[list[tuple[str, str]], int]:
    """``(pairs, dropped)``: every entity's pairs (:func:`entity_pairs`) without those with a string whose normal form
    is in ``excluded`` (the benchmark's scored strings and the dev suite's), and how many that dropped."""
    pairs, dropped = [], 0
    for entity in entities:
        for variant, canonical in entity_pairs(entity):
            if normalize(variant) in excluded or normalize(canonical) in excluded:
                dropped += 1
            else:
                pairs.append((variant, canonical))
    return pairs, dropped


def cap_pairs(pairs: list[tuple[str, str]], max_pairs: int | None) -> list[tuple[str, str]]:
    """At most ``max_pairs`` pairs (``None``: all), chosen by a stable hash of the pair (salted for this source:
    :func:`.wordnet_names.sample_pairs`); the kept stay in order."""
    cap = None if max_pairs is None else int(max_pairs)
    if cap is not None and cap < 1:
        raise ValueError(f"data.alias_pairs.names_max must be a positive number or null, got {max_pairs}.")
    return sample_pairs(pairs, cap, salt="pearl-names")


def mine_siblings(
    pairs: list[tuple[str, str]], pool: list[str], per_name: int, refuse: Callable[[str], bool]
) -> dict[str, list[str]]:
    """Per name of ``pairs``, up to ``per_name`` look-alike siblings from ``pool`` (character TF-IDF neighbours
    first, then names sharing its rarest words), none in its alias group and none that ``refuse`` rejects."""
    if per_name < 1 or not pairs or not pool:
        return {}
    groups = alias_groups(pairs)
    names = sorted(groups)
    miner = SiblingMiner(pool)
    near = miner.nearest(names, per_name + 4)
    out: dict[str, list[str]] = {}
    for name, rows in zip(names, near):
        own = {normalize(s) for s in groups[name]}
        picked: dict[str, None] = {}
        for j in [*rows, *miner.sharing_words(name, per_name + 2)]:
            sibling = pool[j]
            if len(picked) < per_name and normalize(sibling) not in own and not refuse(sibling):
                picked.setdefault(sibling, None)
        if picked:
            out[name] = list(picked)
    return out


def name_alias_rows(
    alias: Mapping[str, Any], blocklist, dev_strings: Callable[[], frozenset[str]]
) -> tuple[list[tuple[str, str]], dict[str, list[str]], dict[str, Any]]:
    """``(pairs, siblings, facts)`` of the ``names`` source (see the module docstring) for the recipe's
    ``alias_pairs`` section (``names_max``, ``names_siblings``)."""
    entities = training_entities()
    scored = scored_strings()
    excluded = scored | frozenset(dev_strings())
    pairs, dropped_scored = name_pairs(entities, excluded)
    pairs, report, _ = clean_alias_pairs(pairs, blocklist, split=None)
    pairs = cap_pairs(pairs, alias.get("names_max"))
    pool = list(
        {normalize(e.canonical): e.canonical for e in entities if normalize(e.canonical) not in excluded}.values()
    )
    siblings = mine_siblings(
        pairs,
        pool,
        int(alias.get("names_siblings", DEFAULT_SIBLINGS)),
        lambda s: normalize(s) in excluded or bool(blocklist.matches(s, "strict")),
    )
    facts = {
        "name alias pairs (the name benchmark's training entities)": len(pairs),
        "name pairs dropped: a scored name-benchmark or dev-suite string": dropped_scored,
        "name pairs dropped by the benchmark filter": report.get("dropped", 0),
        "names with look-alike siblings as hard negatives": len(siblings),
    }
    return pairs, siblings, facts
