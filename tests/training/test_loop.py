"""The training loop: exact resume, LoRA, weight averaging, schedules, time budget."""

from __future__ import annotations

import json

import pytest
import torch

from phrasezoo.training.loop import RunOptions, TrainingInterrupted, learning_rate_factor, train
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("pearl").tiny_model


def _weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_interrupted_run_resumes_to_the_same_weights(tmp_path, pearl_task, training_config):
    cfg = training_config()
    reference_model = tiny_model()
    reference = train(reference_model, pearl_task(reference_model), cfg, RunOptions(tmp_path / "a", progress=False))

    model = tiny_model()
    with pytest.raises(TrainingInterrupted):  # crash after step 3; the last checkpoint is step 2
        train(model, pearl_task(model), cfg, RunOptions(tmp_path / "b", stop_after_steps=3, progress=False))
    model = tiny_model()  # a new process would start from scratch weights
    resumed = train(model, pearl_task(model), cfg, RunOptions(tmp_path / "b", progress=False))

    assert resumed.resumed_from == 2
    assert resumed.steps == reference.steps == 6
    # the log holds this run's steps once: the interrupted run's step 3 is dropped when step 3 is redone
    steps = [json.loads(line)["step"] for line in (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6]
    expected = _weights(reference.model)
    for key, value in _weights(resumed.model).items():
        torch.testing.assert_close(value, expected[key], rtol=0, atol=0, msg=key)


def test_training_changes_weights_and_logs(tmp_path, tiny_setup, training_config):
    model, task = tiny_setup
    before = _weights(model)
    result = train(model, task, training_config(max_steps=3), RunOptions(tmp_path, progress=False))
    after = _weights(result.model)
    assert any(not torch.equal(before[k], after[k]) for k in before if k.startswith("backbone."))
    assert any(not torch.equal(before[k], after[k]) for k in before if k.startswith("char_encoder."))
    records = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    assert all({"loss", "nt_xent", "type_ce", "lr"} <= set(r) for r in records)
    # a run started over (resume=False) replaces the log instead of appending to the earlier run's
    train(result.model, task, training_config(max_steps=2), RunOptions(tmp_path, resume=False, progress=False))
    steps = [json.loads(line)["step"] for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert steps == [1, 2]


def test_weight_averaging_blends_backbone_with_start(tmp_path, pearl_task, training_config):
    cfg = training_config(max_steps=2)
    plain_model = tiny_model()
    plain = train(plain_model, pearl_task(plain_model), cfg, RunOptions(tmp_path / "plain", progress=False))
    averaged_model = tiny_model()
    task = pearl_task(averaged_model)
    averaged = train(
        averaged_model,
        task,
        training_config(max_steps=2, weight_average=0.5),
        RunOptions(tmp_path / "avg", progress=False),
    )
    start = tiny_model()
    task.prepare(start, _FakeAccelerator())  # same deterministic char pretraining as inside train
    trained, blended, initial = _weights(plain.model), _weights(averaged.model), _weights(start)
    for key in trained:
        if key.startswith("backbone.") and trained[key].is_floating_point():
            torch.testing.assert_close(blended[key], 0.5 * trained[key] + 0.5 * initial[key], atol=1e-6, rtol=0)
        elif key.startswith("type_head."):
            torch.testing.assert_close(blended[key], trained[key])  # heads are not averaged


def test_lora_trains_adapters_and_merges(tmp_path, tiny_setup, training_config):
    model, task = tiny_setup
    before = _weights(model)
    cfg = training_config(max_steps=2, lora={"r": 2, "lora_alpha": 4}, learning_rate=5e-2)
    result = train(model, task, cfg, RunOptions(tmp_path, progress=False))
    after = _weights(result.model)
    assert set(after) == set(before), "merged model must have the plain parameter names"
    query_keys = [k for k in before if "attention.self.query.weight" in k]
    assert query_keys and any(not torch.equal(before[k], after[k]) for k in query_keys)
    key_keys = [k for k in before if "attention.self.key.weight" in k]
    assert all(torch.equal(before[k], after[k]) for k in key_keys), "non-target modules stay frozen"


def test_learning_rate_schedules(training_config):
    cfg = training_config(scheduler="exponential", decay_rate=0.5, decay_every=10)
    assert learning_rate_factor(cfg, 0, 100) == 1.0 and learning_rate_factor(cfg, 25, 100) == 0.25
    linear = training_config(scheduler="linear", warmup_ratio=0.1)
    assert learning_rate_factor(linear, 4, 100) == pytest.approx(0.5)
    assert learning_rate_factor(linear, 100, 100) == 0.0


def test_time_budget_stops_cleanly_with_a_checkpoint(tmp_path, tiny_setup, training_config):
    model, task = tiny_setup
    result = train(
        model, task, training_config(max_steps=50, time_budget_minutes=1e-9), RunOptions(tmp_path, progress=False)
    )
    assert result.stopped_early and result.steps == 1
    assert (tmp_path / "checkpoints" / "latest").read_text().strip() == "step-000001"


class _FakeAccelerator:
    is_main_process = True


def test_bf16_autocast_trains_and_resumes_exactly(tmp_path, pearl_task, training_config):
    cfg = training_config(mixed_precision="bf16", max_steps=4)
    reference_model = tiny_model()
    reference = train(reference_model, pearl_task(reference_model), cfg, RunOptions(tmp_path / "a", progress=False))
    model = tiny_model()
    with pytest.raises(TrainingInterrupted):
        train(model, pearl_task(model), cfg, RunOptions(tmp_path / "b", stop_after_steps=3, progress=False))
    model = tiny_model()
    resumed = train(model, pearl_task(model), cfg, RunOptions(tmp_path / "b", progress=False))
    assert all(v.dtype == torch.float32 for v in resumed.model.state_dict().values() if v.is_floating_point())
    expected = _weights(reference.model)
    for key, value in _weights(resumed.model).items():
        torch.testing.assert_close(value, expected[key], rtol=0, atol=0, msg=key)


def test_head_learning_rates_make_parameter_groups(tmp_path, tiny_setup, training_config):
    model, task = tiny_setup
    cfg = training_config(max_steps=1, learning_rate=1e-5, head_learning_rates={"type_head.": 1e-2})
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = train(model, task, cfg, RunOptions(tmp_path, progress=False))
    after = result.model.state_dict()
    head_change = (after["type_head.weight"] - before["type_head.weight"]).abs().max()
    backbone_change = max(
        (after[k] - before[k]).abs().max()
        for k in before
        if k.startswith("backbone.") and before[k].is_floating_point()
    )
    assert head_change > 100 * backbone_change  # Adam's first step moves each weight by about its learning rate


def test_resumes_a_checkpoint_written_before_per_group_learning_rates(tmp_path, pearl_task, training_config):
    cfg = training_config()
    model = tiny_model()
    with pytest.raises(TrainingInterrupted):
        train(model, pearl_task(model), cfg, RunOptions(tmp_path, stop_after_steps=3, progress=False))
    state_file = tmp_path / "checkpoints" / "step-000002" / "trainer_state.json"
    state = json.loads(state_file.read_text())
    for group in state["optimizer"]["param_groups"]:  # what older phrasezoo versions wrote
        group.pop("base_lr")
    state_file.write_text(json.dumps(state))
    model = tiny_model()
    resumed = train(model, pearl_task(model), cfg, RunOptions(tmp_path, progress=False))
    assert resumed.resumed_from == 2 and resumed.steps == 6


def test_bf16_falls_back_to_fp32_on_a_cpu_without_native_bf16(monkeypatch):
    import torch

    from phrasezoo.training import loop

    cpu = torch.device("cpu")
    monkeypatch.setattr(loop, "has_fast_bf16", lambda device: False)
    assert loop.effective_mixed_precision("bf16", cpu) == "no"
    assert loop.effective_mixed_precision(None, cpu) == "no"
    monkeypatch.setattr(loop, "has_fast_bf16", lambda device: True)
    assert loop.effective_mixed_precision("bf16", cpu) == "bf16"
    with pytest.raises(ValueError, match="mixed_precision"):
        loop.effective_mixed_precision("int8", cpu)


def test_a_run_prefetches_the_draws_of_the_seeds_it_is_given_then_says_ready(tmp_path, pearl_task, training_config):
    """A soup's first ingredient embeds the teacher rows of the other seeds' runs with its own (one prefetch), and
    says it is ready (the soup then starts the others) only after that, before its first step."""
    events: list = []

    def recorded(seed: int, draws_of=()):
        model = tiny_model()
        task = pearl_task(model)
        task.prefetch = lambda steps: events.append(("prefetch", [(i, rng.getstate()) for i, rng in steps]))
        cfg = training_config(max_steps=2, seed=seed)
        ready = lambda: events.append(("ready", None))  # noqa: E731
        train(
            model,
            task,
            cfg,
            RunOptions(tmp_path / f"{seed}-{len(draws_of)}", progress=False, ready=ready, draws_of=draws_of),
        )
        return events.pop(0), events.pop(0)

    (_, alone_42), _ = recorded(42)
    (_, alone_7), _ = recorded(7)
    (kind, together), (said, _) = recorded(42, draws_of=[42, 7])
    assert kind == "prefetch" and said == "ready" and not events
    assert together == alone_42 + alone_7 and alone_42 != alone_7
