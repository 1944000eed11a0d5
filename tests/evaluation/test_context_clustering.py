"""Context-aware entity clustering (the suite's context tasks): readers, metrics, the mention cache, span pooling."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.encoders import MENTIONS, Encoder, span_mean
from phrasezoo.evaluation.tasks import GROUPS, TaskContext, get_task
from phrasezoo.evaluation.tasks.context_clustering import (
    MentionClusteringData,
    cluster_scores,
    hungarian_accuracy,
    read_ner_mentions,
)

CTX = TaskContext(progress=False)


def test_groups_and_requirements():
    assert GROUPS["context"] == ["conll2003_context", "bc5cdr_context"]
    assert "conll2003_context" not in GROUPS["all"]
    assert get_task("bc5cdr_context").requires == frozenset({MENTIONS})


def test_reader_computes_character_spans_from_tokens(benchmarks_dir, tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text(
        '{"sentences": [["Obama", "met", "Obama", "in", "New", "York", "."]], '
        '"ner": [[[0, 0, "PER"], [2, 2, "PER"], [4, 5, "LOC"], [6, 6, "MISC"]]]}\n'
    )
    data = read_ner_mentions(path, ["PER", "LOC"])
    assert data.mentions == [
        ("Obama met Obama in New York .", (0, 5)),
        ("Obama met Obama in New York .", (10, 15)),  # the second Obama keeps its own position
        ("Obama met Obama in New York .", (19, 27)),
    ]
    assert data.labels == ["PER", "PER", "LOC"] and data.texts == ["Obama", "Obama", "New York"]
    conll = read_ner_mentions(benchmarks_dir / "conll2003" / "test.jsonl", ["PER", "LOC", "ORG"])
    assert len(conll.mentions) == 4946 and set(conll.labels) == {"PER", "LOC", "ORG"}
    first = conll.mentions[0]
    assert first[0][first[1][0] : first[1][1]] == "JAPAN"


def test_hungarian_accuracy_on_a_known_permutation():
    labels = ["a"] * 4 + ["b"] * 3 + ["c"] * 3
    permuted = [{"a": 2, "b": 0, "c": 1}[x] for x in labels]
    assert hungarian_accuracy(labels, permuted) == 1.0
    one_wrong = permuted[:]
    one_wrong[0] = 0
    assert hungarian_accuracy(labels, one_wrong) == pytest.approx(0.9)
    assert hungarian_accuracy(labels, [0] * 10) == pytest.approx(0.4)  # one cluster matches one label only


def test_cluster_scores_on_separable_vectors():
    rng = np.random.default_rng(0)
    vectors = np.vstack([rng.normal(c, 0.05, size=(10, 2)) for c in ([1, 0], [0, 1], [-1, -1])])
    labels = ["x"] * 10 + ["y"] * 10 + ["z"] * 10
    scores = cluster_scores(vectors, labels, k=3)
    assert scores == {"acc": 1.0, "nmi": pytest.approx(1.0)}


class _MentionEncoder(Encoder):
    """Vectors by mention text: ``vectors[text]``, so the context is ignored."""

    capabilities = frozenset({MENTIONS})

    def __init__(self, vectors):
        super().__init__("fake-mentions", progress=False)
        self.vectors = vectors
        self.calls = 0

    def _encode_mentions(self, items):
        self.calls += 1
        return np.asarray([self.vectors[s[a:b]] for s, (a, b) in items], dtype=np.float32)


def _data():
    sentences = ["Paris is nice .", "Rome is old .", "Obama spoke .", "Merkel spoke ."] * 3
    labels = ["LOC", "LOC", "PER", "PER"] * 3
    mentions = [(s, (0, s.index(" "))) for s in sentences]
    return MentionClusteringData(mentions, labels, ["LOC", "PER"])


def test_task_scores_and_caches_mentions():
    encoder = _MentionEncoder({"Paris": [1, 0], "Rome": [0.9, 0.1], "Obama": [0, 1], "Merkel": [0.1, 0.9]})
    results = get_task("conll2003_context").score(encoder, _data(), CTX)
    assert {r.metric: r.value for r in results} == {"nmi": pytest.approx(1.0), "acc": 1.0}
    get_task("bc5cdr_context").score(encoder, _data(), CTX)
    assert encoder.calls == 1  # the second task found every mention in the cache


def test_span_mean_pools_overlapping_tokens():
    embeddings = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 5.0], [9.0, 9.0]])
    offsets = np.array([[0, 5], [6, 9], [9, 12], [0, 0]])  # the last token has no characters
    np.testing.assert_allclose(span_mean(embeddings, offsets, 6, 12), [1.5, 2.5])
    np.testing.assert_allclose(span_mean(embeddings, offsets, 2, 3), [1.0, 0.0])  # inside a token
    assert span_mean(embeddings, offsets, 13, 20) is None
