"""Model soups: shared-start tensors averaged, seed-initialised modules from the first run, a finished checkpoint."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from safetensors.torch import load_file

from phrasezoo.registry import get_method
from phrasezoo.training.checkpoint import latest_checkpoint, load_checkpoint
from phrasezoo.training.soup import write_soup_checkpoint
from phrasezoo.training.trainer import train

tiny_model = get_method("pearl").tiny_model


def _two_runs(tmp_path, pearl_task, training_config):
    start = tiny_model()
    runs = []
    for seed in (3, 4):
        model = copy.deepcopy(start)  # one pretrained start, as a real backbone gives every seed
        runs.append(train(model, pearl_task(model), training_config(seed=seed), tmp_path / f"s{seed}", progress=False))
    return runs


def test_soup_checkpoint_of_two_seeds(tmp_path, pearl_task, training_config):
    runs = _two_runs(tmp_path, pearl_task, training_config)
    returned, facts = write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "soup")

    found = latest_checkpoint(tmp_path / "soup" / "checkpoints")
    soup, optimizer_state, state = load_checkpoint(found)
    assert found.name == "step-000006" and state["step"] == 6 and optimizer_state == {}
    assert len(state["soup"]) == 2 and len(facts["soup ingredients"]) == 2
    assert all(torch.equal(returned[k], soup[k]) for k in soup)  # what it returns is what it wrote
    a, b = (load_file(tmp_path / s / "checkpoints" / "step-000006" / "model.safetensors") for s in ("s3", "s4"))
    shared = load_file(tmp_path / "soup" / "checkpoints" / "initial.safetensors")
    assert shared and all(k.startswith("backbone.") for k in shared)
    for key in shared:
        if a[key].is_floating_point():
            torch.testing.assert_close(soup[key], (a[key] + b[key]) / 2, rtol=0, atol=1e-7, msg=key)
    moved = [k for k in shared if not torch.equal(a[k], b[k])]
    assert moved  # the seeds really trained apart, so the test is not averaging equal tensors
    fresh = [k for k in soup if k not in shared]
    assert fresh and all(torch.equal(soup[k], a[k]) for k in fresh)  # char encoder, type head: the first run's
    # a soup is not a run to resume
    model = tiny_model()
    with pytest.raises(ValueError, match="model soup"):
        train(model, pearl_task(model), training_config(), tmp_path / "soup", progress=False)
    # the same ingredients give bitwise the same soup
    write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "again")
    again = load_file(latest_checkpoint(tmp_path / "again" / "checkpoints") / "model.safetensors")
    assert all(torch.equal(again[k], soup[k]) for k in soup)
    assert runs[0].steps == runs[1].steps == 6


def test_soup_refuses_runs_from_different_starts(tmp_path, pearl_task, training_config):
    for seed in (3, 4):
        model = tiny_model()
        if seed == 4:  # another pretrained start: no shared start to average from
            with torch.no_grad():
                next(model.backbone.parameters()).add_(0.1)
        train(model, pearl_task(model), training_config(seed=seed), tmp_path / f"s{seed}", progress=False)
    state = json.loads((tmp_path / "s3" / "checkpoints" / "step-000006" / "trainer_state.json").read_text())
    assert state["step"] == 6
    with pytest.raises(ValueError, match="same weights"):
        write_soup_checkpoint([tmp_path / "s3", tmp_path / "s4"], tmp_path / "soup")
    with pytest.raises(ValueError, match="at least two"):
        write_soup_checkpoint([tmp_path / "s3"], tmp_path / "soup")
