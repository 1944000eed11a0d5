"""Augmentations: each changes the phrase, is deterministic under a seeded rng and never returns an empty string."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from rapidfuzz.distance import Levenshtein

from phrasezoo.data.lexical.synonyms import SynonymTable
from phrasezoo.methods.pearl.augment import CHAR_OPS, DEFAULT_MIX, Augmenter, char_edit, synonym_replace, word_swap

pytestmark = pytest.mark.usefixtures("fresh_cache")  # a fresh cache per test, as in tests/data/

TABLE = SynonymTable({"newspaper": ["paper", "daily"], "new york": ["New York City"], "difficult": ["hard"]})
PHRASES = ["The New York Times", "very difficult", "a", "X", "New York newspaper", "in 1999", "(the state)"]


@pytest.mark.parametrize("op", CHAR_OPS)
def test_each_character_operation(op):
    for seed in range(30):
        for phrase in ["The New York Times", "difficult"]:
            out = char_edit(phrase, random.Random(seed), ops=(op,))
            assert out and out != phrase
            assert Levenshtein.distance(out, phrase) <= 2  # one typo (a swap counts 2)
            assert char_edit(phrase, random.Random(seed), ops=(op,)) == out  # deterministic


def test_character_edit_short_inputs():
    for seed in range(30):
        for phrase in ["a", "X", "ab"]:
            out = char_edit(phrase, random.Random(seed))
            assert out and out.strip() and out != phrase
        assert char_edit("7", random.Random(seed)) is None  # a number has no typo that keeps its meaning


def test_word_swap():
    assert word_swap("New York", random.Random(0)) == "York New"
    out = word_swap("The New York Times", random.Random(3))
    assert sorted(out.split()) == sorted(["The", "New", "York", "Times"]) and out != "The New York Times"
    assert word_swap("Times", random.Random(0)) is None
    assert word_swap("very very", random.Random(0)) is None


def test_synonym_replace():
    outs = {synonym_replace("New York newspaper", random.Random(s), TABLE) for s in range(40)}
    assert outs == {"New York City newspaper", "New York paper", "New York daily"}
    assert synonym_replace("Newspaper", random.Random(0), TABLE) in {"Paper", "Daily"}  # case follows the input
    assert synonym_replace("(very difficult)", random.Random(0), TABLE) == "(very hard)"
    assert synonym_replace("the New York Times", random.Random(0), TABLE) is None  # "New York" is part of a name
    assert synonym_replace("anarchism", random.Random(0), TABLE) is None


def make_augmenter(**kwargs) -> Augmenter:
    paraphrases = {"The New York Times": ["NYT", "New York Times"], "New York newspaper": ["a NYC paper"]}
    return Augmenter(TABLE, paraphrases, **kwargs)


def test_augmenter_is_deterministic_and_never_empty():
    aug = make_augmenter()
    first = [aug.augment(p, random.Random(7)) for p in PHRASES]
    assert first == [aug.augment(p, random.Random(7)) for p in PHRASES]
    rng_a, rng_b = random.Random(11), random.Random(11)
    seq_a = [aug.augment(p, rng_a) for p in PHRASES * 20]
    seq_b = [make_augmenter().augment(p, rng_b) for p in PHRASES * 20]
    assert seq_a == seq_b  # a fresh augmenter with the same rng state gives the same views
    for (view, kind), phrase in zip(seq_a, PHRASES * 20):
        assert view and view.strip()
        assert kind in DEFAULT_MIX
        assert (view == phrase) == (kind == "none")


def test_augmenter_mix_and_fallback():
    aug = make_augmenter()
    rng = random.Random(0)
    kinds = Counter(aug.augment("New York newspaper", rng)[1] for _ in range(3000))  # every kind applies
    for kind, weight in DEFAULT_MIX.items():
        assert abs(kinds[kind] / 3000 - weight) < 0.04, kinds
    # a one-word phrase without synonyms or paraphrases: every draw but "none" falls back to a character edit
    kinds = Counter(aug.augment("anarchism", rng)[1] for _ in range(1000))
    assert set(kinds) == {"char", "none"} and kinds["none"] < 100
    only_synonyms = make_augmenter(mix={"synonym": 1.0})
    view, kind = only_synonyms.augment("anarchism", random.Random(0))
    assert kind == "char" and view != "anarchism"  # last resort


def test_augmenter_paraphrase_fallback_paraphraser_and_errors():
    class Echo:
        calls = 0

        def paraphrase(self, phrases):
            Echo.calls += 1
            return [[p.upper()] for p in phrases]

    aug = Augmenter(TABLE, {}, mix={"paraphrase": 1.0}, paraphraser=Echo())
    assert aug.augment("new idea", random.Random(0)) == ("NEW IDEA", "paraphrase")
    aug.augment("new idea", random.Random(0))
    assert Echo.calls == 1  # memoised
    with pytest.raises(ValueError):
        Augmenter(mix={"typo": 1.0})
    with pytest.raises(ValueError):
        Augmenter(mix={"char": 0.0})
    with pytest.raises(ValueError):
        make_augmenter().augment("  ", random.Random(0))


def test_char_edit_never_touches_numbers():
    rng = random.Random(0)
    for _ in range(200):
        edited = char_edit("1962 Wisconsin Badgers", rng)
        assert edited.split()[0] == "1962"
    assert char_edit("1962", rng) is None and char_edit("A320", rng) is None
