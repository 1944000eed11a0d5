"""Context-aware entity clustering (UCTopic protocol): readers, metrics, baseline span pooling, the CCL variant."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.encoders import MENTIONS, Encoder, MeanPoolingEncoder, ModelEncoder, span_mean
from phrasezoo.evaluation.tasks import GROUPS, TaskContext, get_task
from phrasezoo.evaluation.tasks.context_clustering import (
    MentionClusteringData,
    ccl_vectors,
    cluster_scores,
    hungarian_accuracy,
    read_ner_mentions,
)
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.registry import get_method
from phrasezoo.resources import resolve_backbone

tiny_model = get_method("uctopic").tiny_model

CTX = TaskContext(progress=False)


def test_groups_and_requirements():
    assert GROUPS["context"] == ["conll2003_context", "bc5cdr_context"]
    assert GROUPS["context_ccl"] == ["conll2003_context_ccl", "bc5cdr_context_ccl"]
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


def test_ccl_task_skips_encoders_without_a_trainable_mention_model():
    encoder = _MentionEncoder({"Paris": [1, 0], "Rome": [0.9, 0.1], "Obama": [0, 1], "Merkel": [0.1, 0.9]})
    results = get_task("conll2003_context_ccl").score(encoder, _data(), CTX)
    assert [r.metric for r in results] == ["nmi", "acc"]
    assert all(r.value is None and "not a UCTopic-style model" in r.notes for r in results)


CCL_TEST_OPTIONS = {"steps": 2, "batch_size": 4, "negatives": 2, "mixed_precision": "no", "max_seq_length": 32,
                    "top_fraction": 0.5}  # fmt: skip


def test_ccl_task_runs_on_a_uctopic_model_and_leaves_it_untouched():
    model = tiny_model().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    encoder = ModelEncoder(model, name="tiny", progress=False)
    ctx = TaskContext(progress=False, options={"ccl": CCL_TEST_OPTIONS})
    results = get_task("conll2003_context_ccl").score(encoder, _data(), ctx)
    values = {r.metric: r.value for r in results}
    assert 0 <= values["nmi"] <= 1 and 0.5 <= values["acc"] <= 1
    details = results[0].details
    assert details["ccl_steps"] == 2 and set(details["before_ccl"]) == {"nmi", "acc"}
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), f"{key} changed: the task must finetune a copy"


def test_ccl_never_sees_the_gold_types():
    """The CCL task finetunes identically whatever the gold labels are: they are used for scoring only."""
    data = _data()
    relabelled = MentionClusteringData(data.mentions, list(reversed(data.labels)), data.types)
    ctx = TaskContext(progress=False, options={"ccl": CCL_TEST_OPTIONS})
    runs = []
    for dataset in (data, relabelled):
        encoder = ModelEncoder(tiny_model().eval(), name="tiny", progress=False)
        runs.append(get_task("conll2003_context_ccl").score(encoder, dataset, ctx)[0].details)
    assert runs[0]["first_losses"] == runs[1]["first_losses"] and runs[0]["last_losses"] == runs[1]["last_losses"]
    assert runs[0]["pseudo_labelled_phrases"] == runs[1]["pseudo_labelled_phrases"]
    model = tiny_model().eval()
    start = model.encode(data.mentions)
    first, _ = ccl_vectors(model, data.mentions, start, 2, CCL_TEST_OPTIONS, progress=False)
    second, _ = ccl_vectors(model, data.mentions, start, 2, CCL_TEST_OPTIONS, progress=False)
    np.testing.assert_allclose(first, second, atol=1e-6)  # deterministic


def test_span_mean_pools_overlapping_tokens():
    embeddings = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 5.0], [9.0, 9.0]])
    offsets = np.array([[0, 5], [6, 9], [9, 12], [0, 0]])  # the last token has no characters
    np.testing.assert_allclose(span_mean(embeddings, offsets, 6, 12), [1.5, 2.5])
    np.testing.assert_allclose(span_mean(embeddings, offsets, 2, 3), [1.0, 0.0])  # inside a token
    assert span_mean(embeddings, offsets, 13, 20) is None


def test_raw_backbone_baseline_is_uctopic_span_pooling_without_training():
    """baseline:minilm-l6 mentions == a fresh UCTopic MiniLM's span vectors before its (untrained) MLP head."""
    path = resolve_backbone("minilm-l6")
    baseline = MeanPoolingEncoder(path, name="baseline:minilm-l6", progress=False)
    assert MENTIONS in baseline.capabilities
    mentions = [
        ("He lived on the east coast of the United States .", (34, 47)),
        ("Apple released a new phone in September .", (0, 5)),
        ("Apple released a new phone in September .", (17, 26)),
    ]
    model = UCTopicModel.from_backbone(path).eval()
    with torch.no_grad():
        states = model(**model.tokenize_mentions(mentions)).span_states.numpy()
    expected = states / np.linalg.norm(states, axis=1, keepdims=True)
    np.testing.assert_allclose(baseline.encode_mentions(mentions), expected, atol=1e-5)
    with pytest.raises(ValueError, match="no token"):
        baseline.encode_mentions([("A sentence .", (1, 2))])


def test_ccl_task_stops_on_the_label_free_monitor():
    encoder = ModelEncoder(tiny_model().eval(), name="tiny", progress=False)
    options = {**CCL_TEST_OPTIONS, "steps": 4, "check_every": 2, "patience": 1, "monitor": "held_out_silhouette"}
    ctx = TaskContext(progress=False, options={"ccl": options})
    details = get_task("conll2003_context_ccl").score(encoder, _data(), ctx)[0].details
    steps = [c["step"] for c in details["checks"]]
    assert steps[0] == 0 and details["best_step"] in steps and details["ccl_steps"] <= 4
    assert all(-1 <= c["score"] <= 1 and "silhouette_all" in c for c in details["checks"])


def test_a_recipes_ccl_options_override_the_defaults_and_misspelt_keys_fail():
    from phrasezoo.evaluation.tasks.context_clustering import CCL_OPTIONS, ccl_options

    assert ccl_options() == CCL_OPTIONS and ccl_options(None) is not CCL_OPTIONS
    chosen = ccl_options({"steps": 25, "top_fraction": 0.2})
    assert chosen["steps"] == 25 and chosen["top_fraction"] == 0.2
    assert {k: v for k, v in chosen.items() if k not in ("steps", "top_fraction")} == {
        k: v for k, v in CCL_OPTIONS.items() if k not in ("steps", "top_fraction")
    }
    with pytest.raises(ValueError, match="stepz.*known:.*steps"):
        ccl_options({"stepz": 25})
    with pytest.raises(ValueError, match="recluster"):
        ccl_options({"recluster": True})  # CCLConfig's own check: needs instances='all'


def test_the_ccl_task_uses_the_run_options_and_records_them():
    encoder = ModelEncoder(tiny_model().eval(), name="tiny", progress=False)
    ctx = TaskContext(progress=False, options={"ccl": {**CCL_TEST_OPTIONS, "steps": 3}})
    [nmi, _] = get_task("conll2003_context_ccl").score(encoder, _data(), ctx)
    assert nmi.details["ccl_steps"] == 3 and nmi.details["options"]["steps"] == 3
    assert "3 steps" in nmi.notes


def test_the_ccl_task_with_soup_seeds_reports_each_run():
    encoder = ModelEncoder(tiny_model().eval(), name="tiny", progress=False)
    ctx = TaskContext(progress=False, options={"ccl": {**CCL_TEST_OPTIONS, "soup_seeds": [0, 1, 2]}})
    [nmi, _] = get_task("conll2003_context_ccl").score(encoder, _data(), ctx)
    runs = nmi.details["soup_runs"]
    assert [r["seed"] for r in runs] == [0, 1, 2] and all(r["ccl_steps"] == 2 for r in runs)
    assert 0 <= nmi.value <= 1 and "averaged over CCL seeds [0, 1, 2]" in nmi.notes
