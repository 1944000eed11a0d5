"""The ``names`` alias source: the name benchmark's training entities as positives, look-alike siblings as hard
negatives; no scored dev/test string can enter, siblings are never aliases, the cap holds. And PEARL's views and
word noise as plain objects (what the GPU job's codec carries) draw what the augmenter draws."""

from __future__ import annotations

import random

import pytest

from phrasezoo.data.benchmark_filter import BenchmarkBlocklist
from phrasezoo.data.benchmarks.name_sources import NameEntity
from phrasezoo.methods.pearl.aliases import name_aliases
from phrasezoo.methods.pearl.augment import Augmenter, char_edit
from phrasezoo.methods.pearl.views import CharNoise, PositiveViews
from phrasezoo.resources.splits import normalize

ENTITIES = [
    NameEntity("vera", "who", "World Health Organization", [("WHO", "acronym")]),
    NameEntity("vera", "wto", "World Trade Organization", [("WTO", "acronym")]),
    NameEntity("vera", "wmo", "World Meteorological Organization", [("WMO", "acronym")]),
    NameEntity("wordnet", "ibm", "International Business Machines", [("Big Blue", "other"), ("IBM", "acronym")]),
    NameEntity("wordnet", "ibc", "International Business Council", [("IBC", "acronym")]),
    NameEntity("wordnet", "dickens", "Charles Dickens", [("Dickens", "short")], kind="person"),
    NameEntity("wordnet", "darwin", "Charles Darwin", [("Darwin", "short")], kind="person"),
    NameEntity("foldoc", "ansi", "American National Standards Institute", [("ANSI", "acronym")]),
    NameEntity("foldoc", "nist", "National Institute of Standards and Technology", [("NIST", "acronym")]),
]
SCORED = frozenset({normalize("WTO"), normalize("Charles Darwin")})  # a dev query and a test gold


@pytest.fixture
def no_benchmarks():
    return BenchmarkBlocklist.build({})


@pytest.fixture
def benchmark(monkeypatch):
    monkeypatch.setattr(name_aliases, "training_entities", lambda: list(ENTITIES))
    monkeypatch.setattr(name_aliases, "scored_strings", lambda: SCORED)


def test_pairs_hold_the_stated_aliases_and_a_noisy_variant_never_a_scored_string():
    pairs, dropped = name_aliases.name_pairs(ENTITIES, SCORED)
    assert ("WHO", "World Health Organization") in pairs and ("Big Blue", "International Business Machines") in pairs
    assert all(normalize(s) not in SCORED for pair in pairs for s in pair)
    assert dropped >= 3  # WTO <-> its name, Darwin <-> his name, and their noisy variants
    noisy = [p for p in pairs if p[1] == "World Health Organization" and p[0] != "WHO"]
    assert len(noisy) == 1 and normalize(noisy[0][0]) != normalize("World Health Organization")
    assert name_aliases.name_pairs(ENTITIES, SCORED) == (pairs, dropped)  # the same draws on every call


def test_the_cap_keeps_a_stable_subset_in_order():
    pairs, _ = name_aliases.name_pairs(ENTITIES, frozenset())
    three, five = name_aliases.cap_pairs(pairs, 3), name_aliases.cap_pairs(pairs, 5)
    assert len(three) == 3 and set(three) <= set(five) and three == [p for p in pairs if p in set(three)]
    assert name_aliases.cap_pairs(pairs, None) == pairs
    with pytest.raises(ValueError, match="names_max"):
        name_aliases.cap_pairs(pairs, 0)


def test_siblings_are_look_alikes_never_a_name_of_the_same_entity():
    pairs, _ = name_aliases.name_pairs(ENTITIES, frozenset())
    pool = [e.canonical for e in ENTITIES]
    siblings = name_aliases.mine_siblings(pairs, pool, 2, refuse=lambda s: s == "World Meteorological Organization")
    own = {}
    for a, b in pairs:
        own.setdefault(a, set()).update({a, b})
        own.setdefault(b, set()).update({a, b})
    assert siblings["World Health Organization"] and "World Trade Organization" in siblings["World Health Organization"]
    for name, found in siblings.items():
        assert len(found) <= 2
        assert not {normalize(s) for s in found} & {normalize(s) for s in own[name]}  # never the gold alias
        assert "World Meteorological Organization" not in found  # refused (a scored or benchmark string)


def test_the_source_keeps_scored_and_dev_strings_out_and_counts_them(benchmark, no_benchmarks):
    dev = frozenset({normalize("Big Blue")})
    pairs, siblings, facts = name_aliases.name_alias_rows({"names_max": 6}, no_benchmarks, lambda: dev)
    strings = {normalize(s) for pair in pairs for s in pair} | {normalize(s) for v in siblings.values() for s in v}
    assert not strings & (SCORED | dev)
    assert len(pairs) == facts["name alias pairs (the name benchmark's training entities)"] == 6
    assert facts["name pairs dropped: a scored name-benchmark or dev-suite string"] >= 4
    names = {s for pair in pairs for s in pair}
    assert set(siblings) <= names


def test_the_benchmark_filter_drops_name_pairs_too(benchmark):
    blocklist = BenchmarkBlocklist.build({"autofj": (["World Health Organization"], [], [])})
    pairs, siblings, facts = name_aliases.name_alias_rows({}, blocklist, frozenset)
    assert all("World Health Organization" not in pair for pair in pairs)
    assert all("World Health Organization" not in found for found in siblings.values())
    assert facts["name pairs dropped by the benchmark filter"] >= 1


def test_views_draw_what_the_augmenter_draws_and_travel_through_the_codec():
    from phrasezoo.data.lexical.synonyms import SynonymTable
    from phrasezoo.gpu_job.codec import StateReader, StateWriter

    table = SynonymTable({"big": ["large", "huge"], "blue": ["azure"]})
    paraphrases = {"big blue": ["IBM"], "red car": ["crimson automobile"]}
    mix = {"char": 0.2, "synonym": 0.3, "paraphrase": 0.4, "none": 0.1}
    blocklist = BenchmarkBlocklist.build({"ppdb": ([], [("big blue", "IBM")], [])})
    views = PositiveViews(table, paraphrases, mix, blocklist, "multiword")
    writer = StateWriter()
    document = writer.document(writer.encode(views))
    travelled = StateReader(document, writer.arrays).decode(document["root"])
    augmenter = Augmenter(synonyms=table, paraphrases=paraphrases, mix=mix)
    for seed in range(200):
        phrase = ["big blue", "red car", "big blue car"][seed % 3]
        expected = augmenter.augment(phrase, random.Random(seed))[0]
        if {phrase, expected} == {"big blue", "IBM"}:
            expected = phrase  # the guard: a benchmark pair never becomes a training pair
        assert views(phrase, random.Random(seed)) == travelled(phrase, random.Random(seed)) == expected
    noise = CharNoise()
    assert all(noise("keyboard", random.Random(s)) == (char_edit("keyboard", random.Random(s)) or "keyboard")
               for s in range(20))  # fmt: skip
