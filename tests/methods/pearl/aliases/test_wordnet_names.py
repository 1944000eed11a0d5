"""WordNet name aliases: which synsets and lemma pairs become alias positives, and what is kept out."""

from __future__ import annotations

import pytest

from phrasezoo.data.benchmark_filter import normalize
from phrasezoo.data.lexical.dev_compound import compound_dev_synsets
from phrasezoo.methods.pearl.aliases.wordnet_names import sample_pairs, wordnet_name_pairs


class _Synset:
    def __init__(self, name: str, lemmas: list[str], hypernyms: tuple = ()):
        self._name, self._lemmas, self._hypernyms = name, lemmas, hypernyms

    def name(self) -> str:
        return self._name

    def lemma_names(self) -> list[str]:
        return list(self._lemmas)

    def hypernyms(self) -> tuple:
        return self._hypernyms


class _WordNet:
    """Just enough of NLTK's reader for the name source and the compound dev set's held-out synsets."""

    def __init__(self, synsets: list[_Synset]):
        self._synsets = synsets

    def all_synsets(self, pos: str):
        assert pos == "n"
        return iter(self._synsets)

    def synsets(self, word: str, pos: str):
        return [s for s in self._synsets if word in s.lemma_names()]


@pytest.fixture
def fake_wordnet() -> _WordNet:
    return _WordNet(
        [
            _Synset("yangtze.n.01", ["Yangtze", "Yangtze_River", "Chang_Jiang"]),
            _Synset("crocodylus.n.01", ["Crocodylus", "genus_Crocodylus"]),
            _Synset("ununpentium.n.01", ["ununpentium", "Uup", "element_115"]),
            _Synset("dog.n.01", ["dog", "domestic_dog"]),  # no capitalised lemma: not a named thing
            _Synset("vespasian.n.01", ["Vespasian", "Titus_Flavius_Sabinus_Vespasianus_the_Emperor_of_Rome"]),
            _Synset("nyc.n.01", ["New_York", "New_York_City", "Greater_New_York"]),
        ]
    )


def test_name_pairs_are_other_names_of_named_things(fake_wordnet):
    pairs = wordnet_name_pairs(fake_wordnet)
    assert pairs == [
        ("Yangtze", "Yangtze River"),
        ("Yangtze", "Chang Jiang"),
        ("Yangtze River", "Chang Jiang"),
        ("ununpentium", "Uup"),
        ("New York", "New York City"),
        ("New York", "Greater New York"),
        ("New York City", "Greater New York"),
    ]
    # taxonomic wrappers, digits, names over six words and synsets without a capitalised lemma give nothing
    flat = {name for pair in pairs for name in pair}
    assert not flat & {"genus Crocodylus", "element 115", "dog", "Vespasian"}


def test_name_pairs_never_touch_an_excluded_string(fake_wordnet):
    pairs = wordnet_name_pairs(fake_wordnet, exclude=frozenset({normalize("new york city")}))
    assert ("New York", "Greater New York") in pairs
    assert all("New York City" not in pair for pair in pairs)


def test_sample_is_stable_nested_and_in_order():
    pairs = [(f"Name {i}", f"Other {i}") for i in range(50)]
    small, large = sample_pairs(pairs, 10), sample_pairs(pairs, 30)
    assert len(small) == 10 and len(large) == 30
    assert set(small) <= set(large)  # a larger cap keeps every pair of a smaller one
    assert small == sorted(small, key=pairs.index) and small == sample_pairs(list(pairs), 10)
    assert sample_pairs(pairs, None) == pairs and sample_pairs(pairs, 99) == pairs
    with pytest.raises(ValueError, match="wordnet_names_max"):
        sample_pairs(pairs, 0)


def test_real_wordnet_names_skip_the_compound_dev_synsets(wordnet):
    pairs = wordnet_name_pairs(wordnet)
    assert len(pairs) > 20_000
    assert ("Yangtze", "Chang Jiang") in pairs or ("Chang Jiang", "Yangtze") in pairs
    held_out = compound_dev_synsets(wordnet)
    for a, b in pairs[:300]:
        shared = [s for s in wordnet.synsets(a.replace(" ", "_"), "n") if b.replace(" ", "_") in s.lemma_names()]
        assert shared and not {s.name() for s in shared} <= held_out
