"""A Turney-style dev set from WordNet: a two-word noun compound -> its one-word synonym among five candidates.

Built the way Turney (2012) built his set: a WordNet noun synset that holds a two-word compound and a one-word lemma
gives the item ("badger dog" -> "dachshund"). The four distractors are one word close to a component word (a lemma
of one of its two most frequent noun senses or of their hypernyms, like Turney's "dual" for "double star") and three
random WordNet nouns. Scoring is the Turney task's (the answer is the first candidate).

The synsets these items come from (:func:`compound_dev_synsets`) are left out of every training synonym table
(:func:`phrasezoo.data.lexical.synonyms._wordnet_synonyms`), so no recipe trains on a dev pair; items that share a string
with a test benchmark are dropped by the dev suite's strict filter, so none of Turney's compounds or answers is here.
"""

from __future__ import annotations

import random
from functools import lru_cache

#: items are a seeded sample of at most this many (there are about 900 after the benchmark filter)
MAX_ITEMS = 1000
SEED = 0


def _single(name: str) -> bool:
    return name.isalpha() and name.islower()


def _candidates(wordnet) -> list[tuple[str, str, str, str]]:
    """``(synset name, compound, answer, near distractor)`` for every qualifying synset lemma, in WordNet order."""
    out = []
    for synset in wordnet.all_synsets("n"):
        names = synset.lemma_names()
        singles = [n for n in names if _single(n)]
        if not singles:
            continue
        for compound in names:
            words = compound.split("_")
            if len(words) != 2 or not all(_single(w) for w in words):
                continue
            answer = singles[0]
            if answer in words:
                continue
            near = set()
            for word in words:
                for sense in wordnet.synsets(word, "n")[:2]:
                    near.update(n for n in sense.lemma_names() if _single(n))
                    for hypernym in sense.hypernyms():
                        near.update(n for n in hypernym.lemma_names() if _single(n))
            near -= {answer, *words, *singles}
            if near:
                out.append((synset.name(), " ".join(words), answer, sorted(near)[0]))
    return out


@lru_cache(maxsize=4)
def _cached_candidates(wordnet) -> tuple[tuple[str, str, str, str], ...]:
    return tuple(_candidates(wordnet))


def compound_dev_synsets(wordnet) -> frozenset[str]:
    """Names of every synset a dev item can come from (before the benchmark filter): training leaves them out."""
    return frozenset(name for name, *_ in _cached_candidates(wordnet))


def build_compound_dev(wordnet, blocklist, max_items: int | None = None, seed: int = SEED) -> dict:
    """``{"queries": [...], "candidates": [[answer, near, random x3], ...], "synsets": [...]}``, items sharing a
    string with a test benchmark removed (strict mode), a seeded sample of at most ``max_items``."""
    max_items = max_items or MAX_ITEMS
    nouns = sorted({n for s in wordnet.all_synsets("n") for n in s.lemma_names() if _single(n)})
    rng = random.Random(seed)
    items = sorted(_cached_candidates(wordnet), key=lambda c: (c[1], [c[2], c[3]]))
    rng.shuffle(items)
    queries, candidates, synsets = [], [], []
    for name, query, answer, near in items:
        if blocklist.item_matches([query, answer, near], mode="strict"):
            continue
        randoms: list[str] = []
        while len(randoms) < 3:
            word = nouns[rng.randrange(len(nouns))]
            if word not in {answer, near, *query.split(), *randoms} and not blocklist.matches(word, mode="strict"):
                randoms.append(word)
        queries.append(query)
        candidates.append([answer, near, *randoms])
        synsets.append(name)
        if len(queries) >= max_items:
            break
    return {"queries": queries, "candidates": candidates, "synsets": synsets}


def wordnet_training_pairs(wordnet) -> list[tuple[str, str]]:
    """``(multiword lemma, one-word lemma)`` synonym pairs of WordNet noun synsets that no dev item comes from
    (:func:`compound_dev_synsets` left out), lower-case lemmas of at most three words only: the compound-to-word
    knowledge Turney's task asks for, from the synsets the dev set does not use. Benchmark items are removed by the
    caller's filter."""
    held_out = compound_dev_synsets(wordnet)
    pairs = []
    for synset in wordnet.all_synsets("n"):
        if synset.name() in held_out:
            continue
        names = synset.lemma_names()
        singles = [n for n in names if _single(n)]
        for name in names:
            words = name.split("_")
            if not 2 <= len(words) <= 3 or not all(w.replace("-", "").isalpha() and w.islower() for w in words):
                continue
            for single in singles[:2]:
                if single not in words:
                    pairs.append((" ".join(words), single))
    return pairs
