"""CCL's label-free stopping rule: checks, patience, best weights restored, the silhouette monitor, re-clustering."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.methods.uctopic.ccl import CCLConfig, _autocast, ccl_finetune, has_fast_bf16, silhouette_monitor
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("uctopic").tiny_model

MENTIONS = [
    ("Paris is a city in France.", (0, 5)), ("We flew to Paris last May.", (11, 16)),
    ("Obama gave a speech.", (0, 5)), ("The press met Obama today.", (14, 19)),
    ("Rome has old churches.", (0, 4)), ("Merkel visited Rome.", (0, 6)),
]  # fmt: skip
KEYS = ["paris", "paris", "obama", "obama", "rome", "merkel"]
LABELS = {"paris": 0, "rome": 0, "obama": 1, "merkel": 1}


def _config(**changes) -> CCLConfig:
    base = dict(steps=6, batch_size=4, negatives=2, max_seq_length=32, mixed_precision="no", top_fraction=0.5)
    return CCLConfig(**{**base, **changes})


class _ScriptedMonitor:
    """Returns the scripted scores in turn and snapshots the weights it scored."""

    def __init__(self, scores):
        self.scores = list(scores)
        self.states = []

    def __call__(self, model):
        assert not model.training  # checks run in eval mode
        self.states.append({k: v.clone() for k, v in model.state_dict().items()})
        return {"score": self.scores[len(self.states) - 1], "extra": len(self.states)}


def test_stops_after_patience_and_restores_the_best_weights():
    model = tiny_model().eval()
    monitor = _ScriptedMonitor([0.1, 0.3, 0.2, 0.25, 0.9, 0.9, 0.9])
    result = ccl_finetune(model, MENTIONS, KEYS, LABELS, _config(check_every=1, patience=2), False, monitor)
    assert [c["step"] for c in result.checks] == [0, 1, 2, 3]  # two checks without a better score: stop
    assert result.steps == 3 and result.best_step == 1 and result.checks[1]["extra"] == 2
    for key, value in model.state_dict().items():
        assert torch.equal(value, monitor.states[1][key]), f"{key}: the step-1 weights must be restored"
    assert not model.training


def test_a_worse_first_check_keeps_the_starting_weights():
    model = tiny_model().eval()
    start = {k: v.clone() for k, v in model.state_dict().items()}
    monitor = _ScriptedMonitor([0.5, 0.4, 0.3])
    result = ccl_finetune(model, MENTIONS, KEYS, LABELS, _config(check_every=2, patience=2), False, monitor)
    assert result.best_step == 0 and result.steps == 4
    assert all(torch.equal(v, start[k]) for k, v in model.state_dict().items())


def test_last_partial_interval_is_checked_and_no_checks_keep_the_last_step():
    monitor = _ScriptedMonitor([0.1, 0.2, 0.3, 0.4])
    result = ccl_finetune(tiny_model(), MENTIONS, KEYS, LABELS, _config(steps=5, check_every=2), False, monitor)
    assert [c["step"] for c in result.checks] == [0, 2, 4, 5] and result.best_step == 5
    plain = ccl_finetune(tiny_model(), MENTIONS, KEYS, LABELS, _config(steps=2), False)
    assert plain.checks == [] and plain.best_step is None and plain.steps == 2
    with pytest.raises(ValueError, match="needs a monitor"):
        ccl_finetune(tiny_model(), MENTIONS, KEYS, LABELS, _config(check_every=1), False)


class _FixedEncoder:
    """``encode`` returns given vectors (the monitor only calls ``encode``)."""

    def __init__(self, vectors):
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def encode(self, mentions, **kwargs):
        assert len(mentions) == len(self.vectors)
        return self.vectors


class _FixedSample(_FixedEncoder):
    """Vectors looked up by the mention's position in a list of distinct mentions."""

    def encode(self, mentions, **kwargs):
        assert len(mentions) == 10
        return self.vectors[[span[0] for _, span in mentions]]


def test_silhouette_monitor_scores_separation_and_held_out_phrases():
    rng = np.random.default_rng(0)
    tight = np.vstack([rng.normal([5, 0, 0], 0.1, (20, 3)), rng.normal([0, 5, 0], 0.1, (20, 3))])
    keys = [f"a{i % 4}" for i in range(20)] + [f"b{i % 4}" for i in range(20)]
    mentions = [("x" * 50, (i, i + 1)) for i in range(40)]
    good = silhouette_monitor(mentions, keys, 2, all_vectors=True)(_FixedEncoder(tight))
    noise = silhouette_monitor(mentions, keys, 2)(_FixedEncoder(rng.normal(0, 1, (40, 3))))
    assert good["score"] > 0.9 and noise["score"] < 0.5 and good["vectors"].shape == (40, 3)
    assert "vectors" not in noise
    sampled = silhouette_monitor(mentions, keys, 2, max_items=10)(_FixedSample(tight))
    assert sampled["score"] > 0.9
    mixed = tight.copy()
    mixed[[i for i, k in enumerate(keys) if k in ("a0", "b0")]] = rng.normal(0, 1, (10, 3))  # held-out phrases: noise
    monitor = silhouette_monitor(mentions, keys, 2, held_out_keys={"a0", "b0"})
    report = monitor(_FixedEncoder(mixed))
    assert report["score"] == report["silhouette_held_out"] < report["silhouette_all"]


def test_recluster_refreshes_the_pseudo_labels_at_checks():
    model = tiny_model().eval()

    def monitor(m):
        vectors = np.asarray(m.encode(MENTIONS), dtype=np.float32)
        return {"score": 0.0, "vectors": vectors}

    config = _config(steps=2, check_every=1, patience=5, recluster=True, top_fraction=1.0)
    result = ccl_finetune(model, MENTIONS, KEYS, LABELS, config, False, monitor)
    assert result.steps == 2 and "labelled_phrases" in result.checks[1] and "labelled_phrases" not in result.checks[0]


def test_auto_precision_picks_float32_without_bf16_units():
    cpu = torch.device("cpu")
    assert isinstance(has_fast_bf16(cpu), bool)
    with _autocast("auto", cpu):
        out = torch.ones(2, 2) @ torch.ones(2, 2)
    assert out.dtype == (torch.bfloat16 if has_fast_bf16(cpu) else torch.float32)
    with pytest.raises(ValueError, match="mixed_precision"):
        _autocast("fp8", cpu)


def test_confident_instances_train_only_on_the_confident_mentions():
    config = _config(steps=1, instances="confident")
    with pytest.raises(ValueError, match="confident indices"):
        ccl_finetune(tiny_model().eval(), MENTIONS, KEYS, LABELS, config, False)
    # paris x2 and obama x2 are confident: both phrases can anchor, and rome/merkel (unconfident) are never drawn
    result = ccl_finetune(tiny_model().eval(), MENTIONS, KEYS, LABELS, config, False, confident=[0, 1, 2, 3])
    assert result.steps == 1 and result.anchor_instances == 4
    # only one confident mention per phrase: no positive pair, so nothing is trained
    skipped = ccl_finetune(tiny_model().eval(), MENTIONS, KEYS, LABELS, config, False, confident=[0, 2, 4, 5])
    assert skipped.steps == 0 and skipped.skipped_reason
    with pytest.raises(ValueError, match="instances"):
        CCLConfig(instances="some")
    with pytest.raises(ValueError, match="recluster"):
        CCLConfig(instances="confident", recluster=True)


def test_anchor_keep_probability_unmasks_anchors_and_default_masks_them(monkeypatch: pytest.MonkeyPatch):
    import phrasezoo.methods.uctopic.ccl as ccl

    seen = []
    original = ccl._features

    def recording(model, mentions, flags, max_seq_length):
        seen.append(list(flags))
        return original(model, mentions, flags, max_seq_length)

    monkeypatch.setattr(ccl, "_features", recording)
    ccl_finetune(tiny_model().eval(), MENTIONS, KEYS, LABELS, _config(steps=1, batch_size=2), False)
    assert seen[-1][:2] == [True, True]  # the paper: anchors always masked
    ccl_finetune(
        tiny_model().eval(), MENTIONS, KEYS, LABELS, _config(steps=1, batch_size=2, anchor_keep_probability=1.0), False
    )
    assert seen[-1][:2] == [False, False]  # kept unmasked
    assert _config().masking == "the paper's masking"
    assert _config(anchor_keep_probability=1.0, keep_mention_probability=1.0).masking == "mentions unmasked"
    assert _config(anchor_keep_probability=0.5).masking == "mentions kept: anchors p=0.5, others p=0.5"


@pytest.mark.parametrize("loss_vector, head_moves", [("training", True), ("inference", False)])
def test_loss_vector_inference_trains_the_vector_encode_returns(loss_vector: str, head_moves: bool):
    model = tiny_model().eval()
    model.config.mlp_only_train = True  # encode() returns the span vector; training-mode embeddings pass the head
    head = {k: v.clone() for k, v in model.mlp.state_dict().items()}
    config = _config(steps=1, batch_size=2, loss_vector=loss_vector)
    assert ccl_finetune(model, MENTIONS, KEYS, LABELS, config, False).steps == 1
    moved = any(not torch.equal(head[k], v) for k, v in model.mlp.state_dict().items())
    assert moved is head_moves
    with pytest.raises(ValueError, match="loss_vector"):
        CCLConfig(loss_vector="head")


def test_soup_seeds_must_be_distinct_ints():
    assert _config(soup_seeds=[0, 1]).soup_seeds == [0, 1]
    for bad in ([], [0, 0], [0.5], [True], 3):
        with pytest.raises(ValueError, match="soup_seeds"):
            _config(soup_seeds=bad)


def test_a_ccl_soup_averages_one_run_per_seed_and_leaves_the_model_untouched():
    from dataclasses import replace

    from phrasezoo.methods.uctopic.ccl import ccl_soup, pseudo_labels

    model = tiny_model().eval()
    start_state = {k: v.clone() for k, v in model.state_dict().items()}
    start = model.encode(MENTIONS)
    config = _config(steps=3, soup_seeds=[0, 1])
    tuned, results, labels = ccl_soup(model, MENTIONS, KEYS, start, 2, config, progress=False)
    assert len(results) == len(labels) == 2 and all(r.steps == 3 for r in results)
    assert all(torch.equal(v, start_state[k]) for k, v in model.state_dict().items())
    singles = []
    for seed in (0, 1):  # each ingredient by hand: its own pseudo labels and sampling from the seed
        single = tiny_model().eval()
        single.load_state_dict(start_state)
        seed_labels = pseudo_labels(start, KEYS, 2, top_fraction=config.top_fraction, seed=seed)
        ccl_finetune(single, MENTIONS, KEYS, seed_labels.by_key, replace(config, seed=seed, soup_seeds=None), False)
        singles.append(single.state_dict())
    for key, value in tuned.state_dict().items():
        if value.is_floating_point():
            expected = (singles[0][key].float() + singles[1][key].float()) / 2
            torch.testing.assert_close(value.float(), expected, rtol=0, atol=1e-6)
    moved = [k for k, v in tuned.state_dict().items() if v.is_floating_point() and not torch.equal(v, start_state[k])]
    assert moved, "the soup must differ from the start"


def test_one_seed_is_the_plain_run():
    from phrasezoo.methods.uctopic.ccl import ccl_soup

    model = tiny_model().eval()
    start = model.encode(MENTIONS)
    soup, _, _ = ccl_soup(model, MENTIONS, KEYS, start, 2, _config(steps=2, seed=3), progress=False)
    plain, _, _ = ccl_soup(model, MENTIONS, KEYS, start, 2, _config(steps=2, soup_seeds=[3]), progress=False)
    assert all(torch.equal(v, plain.state_dict()[k]) for k, v in soup.state_dict().items())
