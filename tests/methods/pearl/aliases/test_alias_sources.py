"""The alias sources of a PEARL recipe: what each adds, and that none reaches a dev or test item."""

from __future__ import annotations

import pytest

from phrasezoo.data.benchmark_filter import load_blocklist, normalize
from phrasezoo.methods.pearl.aliases.alias_sources import collect_alias_pairs


@pytest.fixture(scope="module")
def blocklist(benchmarks_dir):
    return load_blocklist(benchmarks_dir)


def test_wordnet_names_add_capped_pairs_off_the_dev_strings_and_benchmarks(wordnet, blocklist):
    base, base_counts = collect_alias_pairs({"sources": ["wordnet"]}, blocklist)
    dev = frozenset({normalize("Chang Jiang")})
    pairs, counts = collect_alias_pairs(
        {"sources": ["wordnet", "wordnet-names"], "wordnet_names_max": 500}, blocklist, lambda: dev
    )
    assert pairs[: len(base)] == base  # the earlier sources come first, unchanged
    names = pairs[len(base) :]
    assert len(names) == counts["WordNet name pairs (no dev-suite string)"] == 500
    assert counts["dropped"] > base_counts["dropped"]  # names that are benchmark items are gone
    assert all(normalize(s) not in dev and not blocklist.matches(s, "strict") for pair in names for s in pair)


def test_unknown_alias_source_names_the_known_ones(blocklist):
    with pytest.raises(ValueError, match="wordnet-names"):
        collect_alias_pairs({"sources": ["redirects"]}, blocklist)
