"""Wikipedia link reading (phrasezoo.data.corpus.wiki_links) and the dev suite's alias set built from its links."""

from __future__ import annotations

import pytest

from phrasezoo.data.benchmark_filter import load_blocklist
from phrasezoo.data.benchmarks.dev_sets import build_alias_dev, load_dev_set
from phrasezoo.data.corpus.wiki_links import wiki_link_sentences


@pytest.fixture(scope="module")
def blocklist(benchmarks_dir):
    return load_blocklist(benchmarks_dir)


def test_embedded_dump_sentences_carry_anchor_spans_and_titles():
    sentences = list(wiki_link_sentences("embedded", max_documents=3, progress=False))
    assert len(sentences) > 10
    for sentence, spans in sentences:
        assert spans
        for start, end, title in spans:
            anchor = sentence[start:end]
            assert anchor and anchor == anchor.strip() and "ZQLINK" not in anchor
            assert title and title[0] == title[0].upper() and ":" not in title


def test_alias_dev_filters_pairs_and_links_every_target(blocklist):
    benchmark_phrase = sorted(s for s in blocklist.strings["bird"] if " " in s)[0]
    pairs = [
        ("I-20", "Interstate 20 in Alabama"),
        ("North Atlantic Drift", "North Atlantic Current"),
        ("Montgomery", "Montgomery County, Alabama"),
        ("Montgomery", "Montgomery, Alabama"),  # one anchor, two targets: two gold indices
        ("North Atlantic Drift", "North Atlantic Current"),  # a duplicate
        ("phonemes", "Phoneme"),
        ("Phoneme", "phoneme"),  # same text
        ("Neutron", "NEUTRON"),  # same text, case aside
        ("1964", "U.S. presidential election, 1964"),  # a year is not an alias
        ("n", "Neutron"),  # too short
        (benchmark_phrase, "Montgomery, Alabama"),  # a benchmark string
    ]
    kept = pairs[:4] + pairs[5:6]
    assert not any(blocklist.item_matches(list(p), "strict") for p in kept)

    data = build_alias_dev(pairs, blocklist, split=None)
    assert sorted(data["queries"]) == ["I-20", "Montgomery", "North Atlantic Drift", "phonemes"]
    assert sorted(data["candidates"]) == sorted(
        ["Interstate 20 in Alabama", "North Atlantic Current", "Montgomery County, Alabama", "Montgomery, Alabama",
         "Phoneme"]
    )  # fmt: skip
    linked = {q: sorted(data["candidates"][j] for j in g) for q, g in zip(data["queries"], data["gold"])}
    assert linked == {
        "I-20": ["Interstate 20 in Alabama"],
        "Montgomery": ["Montgomery County, Alabama", "Montgomery, Alabama"],
        "North Atlantic Drift": ["North Atlantic Current"],
        "phonemes": ["Phoneme"],
    }
    assert data["filter"]["dropped"] == 1 and data["filter"]["dropped_per_benchmark"]["bird"] == 1
    assert data["dropped"] == {"short": 1, "numeric": 1, "same_text": 2, "other_split": 0, "ambiguous": 0}
    assert data == build_alias_dev(list(reversed(pairs)), blocklist, split=None)  # order-independent
    capped = build_alias_dev(pairs, blocklist, max_items=2, split=None)
    assert capped["queries"] == data["queries"][:2]  # a cap takes a prefix in stable-hash order
    assert {capped["candidates"][j] for g in capped["gold"] for j in g} == set(capped["candidates"])


def test_an_anchor_that_is_another_title_is_ambiguous(blocklist):
    pairs = [
        ("dinoflagellate", "Dinoflagellates"),  # each anchor is the other's title: neither is an alias
        ("dinoflagellates", "Dinoflagellate"),
        ("Chukchi", "Chukchi Sea"),  # "Chukchi" is a title below: ambiguous
        ("Chukotka natives", "Chukchi"),
        ("I-20", "Interstate 20 in Alabama"),
    ]
    assert not any(blocklist.item_matches(list(p), "strict") for p in pairs)
    data = build_alias_dev(pairs, blocklist, split=None)
    assert sorted(data["queries"]) == ["Chukotka natives", "I-20"]
    assert sorted(data["candidates"]) == ["Chukchi", "Interstate 20 in Alabama"]
    assert data["dropped"]["ambiguous"] == 3


def test_alias_dev_set_of_the_embedded_dump_touches_no_benchmark_item(benchmarks_dir, blocklist):
    data = load_dev_set("alias", benchmarks_dir=benchmarks_dir, progress=False)
    assert len(data["queries"]) > 2000 and len(data["candidates"]) > 2000
    assert len(data["gold"]) == len(data["queries"]) and all(data["gold"])
    assert all(0 <= j < len(data["candidates"]) for g in data["gold"] for j in g)
    assert len(set(data["queries"])) == len(data["queries"]) and len(set(data["candidates"])) == len(data["candidates"])
    assert all(not blocklist.matches(s, "strict") for s in data["queries"] + data["candidates"])
    assert data["filter"]["dropped"] > 0  # Wikipedia titles do occur in AutoFJ/YAGO/Turney: they are gone


def test_alias_pairs_split_by_title_between_dev_and_training(blocklist):
    from phrasezoo.data.corpus.wiki_links import clean_alias_pairs, link_pairs
    from phrasezoo.resources.splits import is_dev_alias_title

    pairs = list(link_pairs("embedded", progress=False))
    every, _, _ = clean_alias_pairs(pairs, blocklist)
    dev, _, dropped_dev = clean_alias_pairs(pairs, blocklist, split="dev")
    train, _, _ = clean_alias_pairs(pairs, blocklist, split="train")
    assert sorted(dev + train) == sorted(every) and len(dev) > 1500 and len(train) > 1500
    assert all(is_dev_alias_title(t) for _, t in dev) and not any(is_dev_alias_title(t) for _, t in train)
    assert not {t for _, t in dev} & {t for _, t in train}  # a title's aliases stay on one side
    assert dropped_dev["other_split"] > 0
    data = build_alias_dev(pairs, blocklist)  # the dev set reads the dev titles only
    assert all(is_dev_alias_title(t) for t in data["candidates"])
    with pytest.raises(ValueError, match="split"):
        clean_alias_pairs(pairs, blocklist, split="test")
