"""Each task's scoring on tiny hand-made inputs with a known answer, and the readers on the real files."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.evaluation.harness import evaluate
from phrasezoo.evaluation.tasks import GROUPS, TaskContext, get_task, resolve_tasks
from phrasezoo.evaluation.tasks.autofj import JoinTable, read_autofj
from phrasezoo.evaluation.tasks.clustering import ClusteringData, read_ner_jsonl
from phrasezoo.evaluation.tasks.probe import (
    PROBE_SEEDS,
    PROBE_THREADS,
    PairLabelData,
    read_ppdb,
    split_indices,
    train_probe,
)
from phrasezoo.evaluation.tasks.retrieval import RetrievalData, read_pairs_tsv
from phrasezoo.evaluation.tasks.similarity import MultipleChoiceData, PairScoreData, read_bird, read_turney
from phrasezoo.evaluation.tasks.stsb_context import (
    ContextSimilarityData,
    pooled_spans,
    read_stsb_context,
    span_texts,
    token_words,
    word_spans,
)

from .conftest import FakeEncoder

CTX = TaskContext()


def values(results):
    return {r.metric: r.value for r in results}


def test_groups():
    pearl = ["turney", "bird", "ppdb", "ppdb_filtered", "yago", "umls", "conll2003", "bc5cdr", "autofj"]
    assert GROUPS["pearl"] == pearl
    assert GROUPS["all"] == [*pearl, "stsb_context"]
    assert resolve_tasks("bird, turney,bird") == ["bird", "turney"]
    with pytest.raises(KeyError, match="Unknown task"):
        resolve_tasks("nope")


def test_turney_picks_the_closest_candidate():
    enc = FakeEncoder({"q1": [1, 0], "right": [0.9, 0.1], "w1": [0, 1], "q2": [0, 1], "wrong": [0, 1]})
    data = MultipleChoiceData(["q1", "q2"], [["right", "w1", "w1", "w1", "w1"], ["right", "wrong", "w1", "w1", "w1"]])
    assert values(get_task("turney").score(enc, data, CTX)) == {"accuracy": 0.5}


def test_turney_exact_ties_are_split():
    enc = FakeEncoder({"q": [1, 0], "a": [1, 1], "b": [1, 1], "c": [0, 1]})
    data = MultipleChoiceData(["q", "q"], [["a", "b", "b", "b", "b"], ["a", "b", "c", "c", "c"]])
    assert values(get_task("turney").score(enc, data, CTX))["accuracy"] == pytest.approx((1 / 5 + 1 / 2) / 2)


def test_bird_pearson_of_a_known_relation():
    angles = np.linspace(0, np.pi / 2, 6)
    vectors = {"anchor": [1, 0]} | {f"p{i}": [np.cos(a), np.sin(a)] for i, a in enumerate(angles)}
    enc = FakeEncoder(vectors)
    data = PairScoreData(["anchor"] * 6, [f"p{i}" for i in range(6)], list(np.cos(angles) * 2 + 1))
    assert values(get_task("bird").score(enc, data, CTX))["pearson"] == pytest.approx(1.0)
    reversed_data = PairScoreData(data.left, data.right, [-s for s in data.scores])
    assert values(get_task("bird").score(enc, reversed_data, CTX))["pearson"] == pytest.approx(-1.0)


def test_retrieval_top1_over_gold_name_kb():
    enc = FakeEncoder(
        {"NYT": [1, 0.1, 0], "Times": [1, 0, 0], "Post": [0, 1, 0], "NY Post": [0.1, 1, 0], "x": [0, 0, 1]}
    )
    data = RetrievalData(["NYT", "NY Post", "x"], ["Times", "Post", "Times"])
    assert data.knowledge_base() == ["Post", "Times"]
    [result] = get_task("yago").score(enc, data, CTX)
    assert result.value == pytest.approx(2 / 3)
    assert "gold-name KB" in result.notes and result.n == 3


def test_clustering_nmi_is_one_on_separable_data():
    rng = np.random.default_rng(0)
    vectors, phrases, labels = {}, [], []
    for k, centre in enumerate(np.eye(3) * 10):
        for i in range(20):
            name = f"t{k}-{i}"
            vectors[name] = centre + rng.normal(scale=0.1, size=3)
            phrases.append(name)
            labels.append(["PER", "LOC", "ORG"][k])
    data = ClusteringData(phrases + phrases[:5], labels + labels[:5], ["PER", "LOC", "ORG"])  # duplicates kept
    [result] = get_task("conll2003").score(FakeEncoder(vectors), data, CTX)
    assert result.value == pytest.approx(1.0) and result.n == 65


def test_autofj_mean_over_datasets():
    enc = FakeEncoder(
        {"a": [1, 0, 0], "A": [1, 0.1, 0], "b": [0, 1, 0], "B": [0, 1, 0.1], "c": [0, 0, 1], "C": [1, 0, 0.2]}
    )
    tables = [
        JoinTable("one", left=["a", "b"], right=["A", "B", "zzz"], gold={"A": "a", "B": "b"}),  # 2/2
        JoinTable("two", left=["a", "c"], right=["A", "C"], gold={"A": "a", "C": "c"}),  # C -> a: 1/2
    ]
    [result] = get_task("autofj").score(enc, tables, CTX)
    assert result.value == pytest.approx(0.75)
    assert result.details == {"per_dataset": {"one": 1.0, "two": 0.5}} and result.n == 4


def test_autofj_duplicate_left_titles_count_as_correct():
    enc = FakeEncoder({"x": [1, 0], "x2": [1, 0], "X": [1, 0.01]})
    table = JoinTable("dup", left=["x2", "x", "x"], right=["X"], gold={"X": "x"})
    enc.vectors["x2"] = np.asarray([0, 1], dtype=np.float32)
    assert get_task("autofj").score(enc, [table], CTX)[0].value == 1.0


def test_ppdb_probe_learns_a_separable_toy_set():
    rng = np.random.default_rng(0)
    n = 2000
    labels = rng.integers(0, 2, size=n)
    features = rng.normal(size=(n, 8)).astype(np.float32)
    features[:, 0] += np.where(labels == 1, 3.0, -3.0)
    acc, dev, epochs = train_probe(features, labels, seed=0)
    assert acc >= 0.95 and dev >= 0.95 and epochs >= 3
    assert train_probe(features, labels, seed=0)[0] == acc  # deterministic for a seed
    train, dev_idx, test = split_indices(n, 0)
    assert (len(train), len(dev_idx), len(test)) == (1400, 300, 300)
    assert len(set(train) | set(dev_idx) | set(test)) == n


def test_ppdb_task_end_to_end_on_toy_pairs():
    rng = np.random.default_rng(1)
    vectors, left, right, labels = {}, [], [], []
    for i in range(1000):
        label = i % 2
        sign = 1.0 if label else -1.0  # paraphrase pairs share a direction the probe can find
        vectors[f"l{i}"] = np.concatenate([[2 * sign], rng.normal(size=5)])
        vectors[f"r{i}"] = np.concatenate([[2 * sign], rng.normal(size=5)])
        left.append(f"l{i}")
        right.append(f"r{i}")
        labels.append(label)
    [result] = get_task("ppdb").score(FakeEncoder(vectors), PairLabelData(left, right, labels), CTX)
    assert result.value >= 0.9 and result.n == 150
    # the protocol is repeated over PROBE_SEEDS seeds (split + initialisation) and the mean is reported
    per_seed = result.details["per_seed"]
    assert [r["seed"] for r in per_seed] == [CTX.seed + i for i in range(PROBE_SEEDS)]
    assert result.value == pytest.approx(np.mean([r["test"] for r in per_seed]), abs=1e-6)
    assert len({r["test"] for r in per_seed}) > 1  # different splits really were drawn


def test_ppdb_probe_is_bit_identical_across_runs_and_records_its_seeds_and_threads():
    import torch

    rng = np.random.default_rng(2)
    vectors, left, right, labels = {}, [], [], []
    for i in range(400):
        label = i % 2
        shift = 0.6 if label else -0.6  # a noisy signal: scores sit away from 1.0, where rounding would show
        vectors[f"l{i}"] = np.concatenate([[shift], rng.normal(size=7)])
        vectors[f"r{i}"] = np.concatenate([[shift], rng.normal(size=7)])
        left.append(f"l{i}")
        right.append(f"r{i}")
        labels.append(label)
    data = PairLabelData(left, right, labels)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # the caller's count: the probe trains on PROBE_THREADS and gives this back
    try:
        first, second = (get_task("ppdb_filtered").score(FakeEncoder(vectors), data, CTX)[0] for _ in range(2))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    assert first.value == second.value and first.details == second.details  # bit-identical, every seed
    assert first.details["probe_seeds"] == [CTX.seed + i for i in range(PROBE_SEEDS)]
    assert first.details["probe_threads"] == PROBE_THREADS == 1
    assert first.to_dict()["details"]["probe_seeds"] == first.details["probe_seeds"]  # what results files carry


def test_word_and_token_mapping():
    text = "A red car, parked."
    assert word_spans(text).tolist() == [[0, 1], [2, 5], [6, 10], [11, 18]]
    offsets = np.array([[0, 1], [2, 5], [6, 9], [9, 10], [11, 17], [17, 18]])  # "car" + ",", "parked" + "."
    assert token_words(offsets, word_spans(text)).tolist() == [0, 1, 2, 2, 3, 3]
    assert span_texts("a b c", max_words=2) == ["a", "b", "c", "a b", "b c"]


def test_single_pass_span_pooling_finds_the_planted_span():
    passage = "noise words here red car more noise"
    words = word_spans(passage)
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(len(words), 4)).astype(np.float32)
    emb[3], emb[4] = [1, 0, 0, 0], [0, 1, 0, 0]  # "red", "car"
    vectors, starts, ends = pooled_spans(emb, words, passage)
    best = np.argmax(vectors @ np.array([0.5, 0.5, 0, 0]) / np.linalg.norm(vectors, axis=1))
    assert (starts[best], ends[best]) == (3, 5)
    assert len(vectors) == sum(len(words) - k + 1 for k in range(1, len(words) + 1))  # 7 words < 20


def test_stsb_task_scores_passages_and_spans():
    lines = ["red auto", "blue heaven", "green plant"]
    passages = ["we saw a red car today", "the blue sky is wide", "a green tree , old"]
    gold = [5.0, 3.0, 1.0]
    vectors, tokens = {}, {}
    rng = np.random.default_rng(0)
    for line, passage, g in zip(lines, passages, gold):
        words = word_spans(passage)
        emb = rng.normal(size=(len(words), 3)) * 0.1
        target = np.array([1.0, g / 5, 0.0])
        pos = passage.split().index(line.split()[0])  # the query's first word starts the planted span
        emb[pos] = emb[pos + 1] = target  # the planted span, less similar to the query as gold falls
        tokens[passage] = (emb.astype(np.float32), words)
        vectors[line] = [1.0, 1.0, 0.0]
        vectors[passage] = [1.0, g, 0.0]
    enc = FakeEncoder(vectors, tokens=tokens)
    data = ContextSimilarityData(lines, passages, gold)
    results = values(get_task("stsb_context").score(enc, data, TaskContext(options={"stsb_per_span": True})))
    assert results["pearson_spans_single_pass"] > 0.9 and results["spearman_spans_single_pass"] == pytest.approx(1.0)
    assert set(results) == {
        f"{c}_{w}" for c in ("pearson", "spearman") for w in ("passage", "spans_single_pass", "spans_per_span")
    }
    no_tokens = FakeEncoder(vectors)
    results = get_task("stsb_context").score(no_tokens, data, CTX)
    skipped = [r for r in results if r.value is None]
    assert len(skipped) == 2 and "encode_tokens" in skipped[0].notes


def test_capability_missing_is_skipped_with_a_note(tmp_path):
    doc = evaluate("baseline:char-jaccard", tasks="ppdb,conll2003", benchmarks_dir=tmp_path, progress=False)
    assert [r["value"] for r in doc["results"]] == [None, None]
    assert all("skipped" in r["notes"] and "vectors" in r["notes"] for r in doc["results"])


def test_missing_benchmarks_dir_fails_early(tmp_path):
    with pytest.raises(FileNotFoundError, match="--benchmarks-dir"):
        evaluate(FakeEncoder(), tasks="bird", benchmarks_dir=tmp_path / "nope", progress=False)


# ------------------------------------------------------------------------------------------ readers, real files
def test_readers_on_the_real_files(benchmarks_dir):
    turney = read_turney(benchmarks_dir / "turney" / "turney.txt")
    assert len(turney.queries) == 2180 and {len(c) for c in turney.candidates} == {5}
    assert turney.queries[0] == "double star" and turney.candidates[0] == [
        "binary",
        "dual",
        "lumen",
        "neutralism",
        "keratoplasty",
    ]
    bird = read_bird(benchmarks_dir / "bird" / "bird.tsv")
    assert len(bird.scores) == 3345 and min(bird.scores) >= 0 and max(bird.scores) <= 1
    yago = read_pairs_tsv(benchmarks_dir / "yago" / "yago_test_samples.tsv")
    assert len(yago.mentions) == 10000
    conll = read_ner_jsonl(benchmarks_dir / "conll2003" / "test.jsonl", ["PER", "LOC", "ORG"])
    assert set(conll.labels) == {"PER", "LOC", "ORG"} and len(conll.phrases) == 4946
    stsb = read_stsb_context(benchmarks_dir / "stsb_context" / "sts-test-sentences-clean.tsv")
    assert len(stsb.gold) == 1024 and max(stsb.gold) <= 5
    assert sum("\r\n" in p for p in stsb.passages) == 1  # the quoted passage with line breaks stays one field
    assert any("\u2019" in p or "\u00e9" in p for p in stsb.passages)  # cp1252 characters decoded
    ppdb = read_ppdb(benchmarks_dir / "ppdb" / "ppdb_filtered.json")
    assert len(ppdb.labels) == 15532 and set(ppdb.labels) == {0, 1}


def test_autofj_tables_from_the_package():
    tables = read_autofj(["Amphibian"])
    [table] = tables
    assert table.left and table.queries() and all(q in table.gold for q in table.queries())
