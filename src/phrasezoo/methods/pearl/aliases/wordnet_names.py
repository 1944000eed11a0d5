"""Real name aliases from WordNet: the other names of the people, places, organisations, drugs and species it lists.

A WordNet noun synset whose lemmas include a capitalised name holds several names of one thing: "Yangtze" /
"Chang Jiang", "Khomeini" / "Ayatollah Khomeini", "calciferol" / "cholecalciferol", "maned wolf" / "Canis rufus".
Each pair of such lemmas is an alias pair, the evidence an entity-matching phrase encoder needs beyond the embedded
dump's links (about 28k pairs after the filters, against 3.5k link and lead aliases).

Left out: the synsets ``dev_compound`` is built from, pairs with a digit, names over six words, taxonomic wrappers
("genus Crocodylus" / "Crocodylus": the same name) and pairs that touch a string of the dev suite (``exclude``, the
normal forms of :func:`phrasezoo.data.benchmarks.held_out.dev_set_strings`), so no dev item is trained on. Benchmark items are
removed by the caller's filter.
"""

from __future__ import annotations

import re

from phrasezoo.data.benchmark_filter import normalize
from phrasezoo.data.lexical.dev_compound import compound_dev_synsets
from phrasezoo.resources.splits import stable_hash

#: a taxonomic rank word in front of a name ("genus Crocodylus", "family Lardizabalaceae")
_RANK = re.compile(
    r"^(?:genus|subgenus|family|subfamily|superfamily|order|suborder|superorder|infraorder|class|subclass|superclass"
    r"|phylum|subphylum|division|subdivision|kingdom|subkingdom|tribe|species|subspecies|variety|group) ",
    re.IGNORECASE,
)
MAX_WORDS = 6


def _usable(name: str) -> bool:
    return not _RANK.match(name) and not any(ch.isdigit() for ch in name) and len(name.split()) <= MAX_WORDS


def wordnet_name_pairs(wordnet, exclude: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """``(name, other name)`` pairs of the WordNet noun synsets that hold a capitalised lemma (see the module doc), in
    WordNet order; ``exclude`` holds normal forms (:func:`phrasezoo.data.benchmark_filter.normalize`) a pair may not
    touch."""
    held_out = compound_dev_synsets(wordnet)
    pairs: list[tuple[str, str]] = []
    for synset in wordnet.all_synsets("n"):
        if synset.name() in held_out:
            continue
        names = [" ".join(n.split("_")) for n in synset.lemma_names()]
        if len(names) < 2 or not any(n[:1].isupper() for n in names):
            continue
        names = [n for n in names if _usable(n) and normalize(n) not in exclude]
        pairs += [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if normalize(a) != normalize(b)]
    return pairs


def sample_pairs(
    pairs: list[tuple[str, str]], max_pairs: int | None, salt: str = "wordnet-names"
) -> list[tuple[str, str]]:
    """At most ``max_pairs`` of ``pairs`` (``None``: all), chosen by a stable hash of the pair salted with ``salt``,
    so the same pairs on every machine and a larger cap keeps every pair of a smaller one; the kept pairs stay in
    their order. The ``names`` source caps its pairs with it too (:func:`.name_aliases.cap_pairs`)."""
    if max_pairs is not None and max_pairs < 1:
        raise ValueError(f"data.alias_pairs.wordnet_names_max must be a positive number or null, got {max_pairs}.")
    if max_pairs is None or len(pairs) <= max_pairs:
        return list(pairs)
    keep = set(sorted(pairs, key=lambda p: (stable_hash(f"{p[0]} | {p[1]}", salt), p))[:max_pairs])
    return [p for p in pairs if p in keep]
