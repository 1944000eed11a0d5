"""Checkpoints are safetensors, atomic, pruned, and restore the optimizer exactly."""

from __future__ import annotations

import torch

from phrasezoo.training.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint


def _model_and_optimizer():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def test_checkpoint_round_trip_restores_optimizer(tmp_path):
    model, optimizer = _model_and_optimizer()
    path = save_checkpoint(tmp_path, 7, model.state_dict(), optimizer, extra={"elapsed_seconds": 1.5})
    assert sorted(p.name for p in path.iterdir()) == [
        "model.safetensors",
        "optimizer.safetensors",
        "trainer_state.json",
    ]
    model_state, optimizer_state, state = load_checkpoint(path)
    assert state["step"] == 7 and state["elapsed_seconds"] == 1.5
    fresh = torch.optim.Adam(model.parameters(), lr=0.1)
    fresh.load_state_dict(optimizer_state)
    for group_a, group_b in zip(fresh.state_dict()["state"].values(), optimizer.state_dict()["state"].values()):
        for key in group_b:
            torch.testing.assert_close(torch.as_tensor(group_a[key]), torch.as_tensor(group_b[key]))
    torch.testing.assert_close(model_state["weight"], model.weight.detach())


def test_latest_pointer_pruning_and_leftovers(tmp_path):
    model, optimizer = _model_and_optimizer()
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, step, model.state_dict(), optimizer, keep=2)
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-000002", "step-000003"]
    assert latest_checkpoint(tmp_path).name == "step-000003"
    # a crash while writing leaves only a hidden temporary folder, which is never taken for a checkpoint
    (tmp_path / ".tmp-crashed").mkdir()
    (tmp_path / "latest").unlink()
    assert latest_checkpoint(tmp_path).name == "step-000003"
    # an incomplete folder (no trainer_state.json) is skipped
    (tmp_path / "step-000009").mkdir()
    assert latest_checkpoint(tmp_path).name == "step-000003"
    assert not list(tmp_path.rglob("*.bin")) and not list(tmp_path.rglob("*.pt"))
