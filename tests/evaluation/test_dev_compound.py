"""benchmarks/dev_compound.py: Turney-style items from a (fake) WordNet, benchmark strings left out."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "dev_compound.py"


class Synset:
    def __init__(self, names: list[str], hypernyms: list[Synset] | None = None) -> None:
        self.names, self._hypernyms = names, hypernyms or []

    def lemma_names(self) -> list[str]:
        return self.names

    def hypernyms(self) -> list[Synset]:
        return self._hypernyms


class FakeWordNet:
    def __init__(self, synsets: list[Synset]) -> None:
        self.synsets_ = synsets

    def all_synsets(self, pos: str):
        return iter(self.synsets_)

    def synsets(self, word: str, pos: str) -> list[Synset]:
        return [s for s in self.synsets_ if word in s.names]


class Blocklist:
    def __init__(self, blocked: set[str]) -> None:
        self.blocked = blocked

    def matches(self, text: str, mode: str = "strict") -> set[str]:
        return {"turney"} if text in self.blocked else set()

    def item_matches(self, strings, mode: str = "strict") -> set[str]:
        return set().union(*(self.matches(s) for s in strings))


def test_items_pair_compounds_with_synonyms_and_skip_benchmark_strings():
    build_items = runpy.run_path(str(SCRIPT))["build_items"]
    star = Synset(["star"], [Synset(["celestial_body", "body"])])
    double = Synset(["double", "dual"])
    wordnet = FakeWordNet(
        [
            star,
            double,
            Synset(["double_star", "binary", "binary_star"]),  # -> "double star" | binary, near: dual or body
            Synset(["green_onion", "scallion"]),  # "scallion" is a benchmark string: dropped
            Synset(["green", "putting_green"]),
            Synset(["onion"]),
            Synset(["apple"]),
            Synset(["pear"]),
            Synset(["plum"]),
            Synset(["fig"]),
            Synset(["kiwi"]),  # blocked as a random distractor
        ]
    )
    items = build_items(wordnet, Blocklist({"scallion", "kiwi"}), max_items=10, seed=0)
    assert [query for query, _ in items] == ["double star"]
    candidates = items[0][1]
    assert candidates[0] == "binary" and candidates[1] in {"dual", "body"} and len(candidates) == 5
    assert "kiwi" not in candidates and not {"double", "star"} & set(candidates)
