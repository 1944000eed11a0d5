"""The dev suite's extra tasks: the clustering benchmarks' own dev splits and the WordNet compound set (Turney's
format), both disjoint from the reported test items."""

from __future__ import annotations

import json

import numpy as np
import pytest

from phrasezoo.data.benchmark_filter import load_blocklist
from phrasezoo.data.lexical.dev_compound import build_compound_dev, compound_dev_synsets
from phrasezoo.encoders import MENTIONS
from phrasezoo.evaluation.datasets.benchmark_dev import load_benchmark_dev
from phrasezoo.evaluation.dev.suite import DEV_TASKS, evaluate_dev
from phrasezoo.resources import load_wordnet


def _write_split(path, sentences):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf8") as handle:
        for tokens, spans in sentences:
            handle.write(json.dumps({"sentences": [tokens], "ner": [spans]}) + "\n")


@pytest.fixture()
def tiny_benchmarks(tmp_path):
    """conll2003/ and bc5cdr/ with a dev split whose mentions differ from the test split's."""
    people, places = ["Alice", "Bob", "Carol"], ["Paris", "Rome", "Oslo"]
    dev = [([name, "spoke", "in", place], [[0, 0, "PER"], [3, 3, "LOC"]]) for name in people for place in places]
    dev += [([firm, "hired", name], [[0, 0, "ORG"], [2, 2, "PER"]]) for firm in ("Acme", "Initech") for name in people]
    _write_split(tmp_path / "conll2003" / "dev.jsonl", dev)
    _write_split(tmp_path / "conll2003" / "test.jsonl", [(["Zed", "left"], [[0, 0, "PER"]])])
    chemicals, diseases = ["aspirin", "heparin"], ["asthma", "gout"]
    bc5 = [([c, "caused", d], [[0, 0, "Chemical"], [2, 2, "Disease"]]) for c in chemicals for d in diseases]
    _write_split(tmp_path / "bc5cdr" / "dev.jsonl", bc5)
    _write_split(tmp_path / "bc5cdr" / "test.jsonl", [(["zinc"], [[0, 0, "Chemical"]])])
    return tmp_path


def test_benchmark_dev_reads_the_dev_split_only(tiny_benchmarks):
    data = load_benchmark_dev(tiny_benchmarks)
    assert sorted(set(data["conll2003"].phrases)) == [
        "Acme",
        "Alice",
        "Bob",
        "Carol",
        "Initech",
        "Oslo",
        "Paris",
        "Rome",
    ]
    assert "Zed" not in data["conll2003"].phrases and "zinc" not in data["bc5cdr"].phrases
    sentence, (start, end) = data["conll2003_mentions"].mentions[1]
    assert sentence == "Alice spoke in Paris" and sentence[start:end] == "Paris"
    with pytest.raises(FileNotFoundError, match="dev splits"):
        load_benchmark_dev(tiny_benchmarks / "nowhere")


def test_benchmark_dev_tasks_score_a_type_aware_encoder_perfectly(tiny_benchmarks, fake_encoder):
    types = {"Alice": 0, "Bob": 0, "Carol": 0, "Paris": 1, "Rome": 1, "Oslo": 1, "Acme": 2, "Initech": 2}
    types.update({"aspirin": 0, "heparin": 0, "asthma": 1, "gout": 1})

    class TypeEncoder(fake_encoder):
        def __init__(self, vectors):
            super().__init__(vectors)
            self.capabilities = frozenset({*self.capabilities, MENTIONS})

        def _encode_mentions(self, items):
            return np.stack([self._encode([s[a:b]])[0] for s, (a, b) in items])

    encoder = TypeEncoder({w: np.eye(3)[t] + 0.01 * np.arange(3) for w, t in types.items()})
    doc = evaluate_dev(encoder, tasks="benchmark-dev", progress=False, benchmarks_dir=tiny_benchmarks)
    assert set(doc["tasks"]) == {"dev_conll_context", "dev_bc5cdr_context", "dev_conll", "dev_bc5cdr"}
    for name, entry in doc["tasks"].items():
        assert entry["score"] == pytest.approx(1.0), name
    assert doc["tasks"]["dev_conll"]["n"] == 30 and doc["tasks"]["dev_bc5cdr"]["n"] == 8


def test_context_tasks_are_skipped_for_an_encoder_without_mentions(tiny_benchmarks, fake_encoder):
    doc = evaluate_dev(fake_encoder(dim=4), tasks="dev_conll_context,dev_conll", progress=False,
                       benchmarks_dir=tiny_benchmarks)  # fmt: skip
    assert "mentions" in doc["tasks"]["dev_conll_context"]["skipped"]
    assert doc["tasks"]["dev_conll"]["score"] is not None


@pytest.fixture(scope="module")
def wordnet():
    reader = load_wordnet()
    if reader is None:
        pytest.skip("Debian's wordnet-base is not installed")
    return reader


def test_compound_dev_items_follow_turney_and_touch_no_benchmark_item(wordnet, benchmarks_dir):
    blocklist = load_blocklist(benchmarks_dir)
    data = build_compound_dev(wordnet, blocklist)
    assert 800 < len(data["queries"]) <= 1000
    assert data == build_compound_dev(wordnet, blocklist)  # deterministic
    for query, candidates in zip(data["queries"], data["candidates"]):
        assert len(query.split()) == 2 and len(candidates) == 5 and len(set(candidates)) == 5
        assert all(" " not in c for c in candidates) and not set(query.split()) & set(candidates)
        assert not blocklist.item_matches([query, *candidates], mode="strict")
    assert set(data["synsets"]) <= compound_dev_synsets(wordnet)
    # the item the builder documents: a compound and its one-word synonym from one synset
    first = data["synsets"][0]
    assert data["candidates"][0][0] in wordnet.synset(first).lemma_names()


def test_training_synonyms_leave_the_compound_dev_synsets_out(wordnet):
    from phrasezoo.data.lexical.synonyms import _wordnet_synonyms

    held_out = compound_dev_synsets(wordnet)
    [synset] = [s for s in wordnet.synsets("badger_dog", "n")]
    assert synset.name() in held_out and "dachshund" in synset.lemma_names()
    synonyms = _wordnet_synonyms(["badger dog", "dachshund", "dog"], wordnet, max_senses=1)
    assert "dachshund" not in synonyms.get("badger dog", [])
    assert "badger dog" not in synonyms.get("dachshund", [])
    assert synonyms.get("dog")  # other synsets still give synonyms


def test_dev_compound_task_scores_the_answer_first(fake_encoder):
    data = {
        "queries": ["red car", "big cat"],
        "candidates": [["auto", "b", "c", "d", "e"], ["lion", "f", "g", "h", "i"]],
    }
    vectors = {"red car": [1, 0], "auto": [1, 0], "big cat": [0, 1], "lion": [0, 1]}
    vectors.update({w: [-1, -1] for w in "bcdefghi"})
    score, n, _ = DEV_TASKS["dev_compound"].run(
        fake_encoder({k: np.asarray(v, float) for k, v in vectors.items()}), data
    )
    assert (score, n) == (1.0, 2)


def test_dev_alias_task_counts_any_linked_title_as_gold(fake_encoder):
    data = {
        "queries": ["I-20", "Montgomery", "phonemes"],
        "candidates": ["Montgomery County, Alabama", "Phoneme", "Interstate 20 in Alabama", "Montgomery, Alabama"],
        "gold": [[2], [0, 3], [1]],
    }
    vectors = {"I-20": [1, 0, 0], "Interstate 20 in Alabama": [1, 0, 0], "phonemes": [0, 1, 0], "Phoneme": [0, 1, 0]}
    vectors.update(
        {"Montgomery": [0, 0, 1], "Montgomery, Alabama": [0, 0.1, 1], "Montgomery County, Alabama": [0, 1, 1]}
    )
    task = DEV_TASKS["dev_alias"]
    assert (task.source, task.metric) == ("alias", "top1_accuracy")
    score, n, details = task.run(fake_encoder({k: np.asarray(v, float) for k, v in vectors.items()}), data)
    assert (score, n, details) == (1.0, 3, {"candidates": 4})


def test_wordnet_training_pairs_never_come_from_a_dev_synset(wordnet):
    from phrasezoo.data.lexical.dev_compound import wordnet_training_pairs

    pairs = wordnet_training_pairs(wordnet)
    held_out = compound_dev_synsets(wordnet)
    assert len(pairs) > 500
    for compound, word in pairs[:300]:
        assert 2 <= len(compound.split()) <= 3 and " " not in word and word not in compound.split()
        shared = [s for s in wordnet.synsets(compound.replace(" ", "_"), "n") if word in s.lemma_names()]
        assert shared and not {s.name() for s in shared} <= held_out
