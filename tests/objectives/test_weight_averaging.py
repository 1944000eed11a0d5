"""Uniform averaging of state dicts: shared float tensors averaged, the rest from the first, mismatches refused."""

from __future__ import annotations

import pytest
import torch

from phrasezoo.objectives.weight_averaging import soup_state_dicts


def test_soup_state_dicts_averages_the_shared_keys_only():
    a = {"enc.w": torch.tensor([1.0, 2.0]), "head.w": torch.tensor([5.0]), "enc.ids": torch.tensor([1, 2])}
    b = {"enc.w": torch.tensor([3.0, 6.0]), "head.w": torch.tensor([9.0]), "enc.ids": torch.tensor([7, 8])}
    soup = soup_state_dicts([a, b], shared=["enc.w", "enc.ids"])
    assert torch.equal(soup["enc.w"], torch.tensor([2.0, 4.0]))
    assert torch.equal(soup["head.w"], a["head.w"])  # not shared: the first ingredient's
    assert torch.equal(soup["enc.ids"], a["enc.ids"])  # integer buffers are never averaged
    with pytest.raises(ValueError, match="other tensors"):
        soup_state_dicts([a, {"enc.w": b["enc.w"]}], shared=["enc.w"])
    with pytest.raises(ValueError, match="not in the checkpoints"):
        soup_state_dicts([a, b], shared=["missing"])
