"""UCTopic's evaluation tasks: context clustering after CCL finetuning (``*_context_ccl``), and the baseline's span
pooling that the context tasks compare UCTopic with."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.encoders import MENTIONS, MeanPoolingEncoder, ModelEncoder
from phrasezoo.evaluation.tasks import GROUPS, TaskContext, get_task
from phrasezoo.evaluation.tasks.context_clustering import MentionClusteringData
from phrasezoo.methods.uctopic.tasks.clustering import ccl_vectors
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.resources import resolve_backbone
from phrasezoo.zoo.registry import get_method
from tests.evaluation.test_context_clustering import CTX, _data, _MentionEncoder

tiny_model = get_method("uctopic").tiny_model


def test_the_ccl_tasks_register_with_the_suite():
    assert GROUPS["context_ccl"] == ["conll2003_context_ccl", "bc5cdr_context_ccl"]
    assert get_task("bc5cdr_context_ccl").requires == frozenset({MENTIONS})


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
    from phrasezoo.methods.uctopic.tasks.clustering import CCL_OPTIONS, ccl_options

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
