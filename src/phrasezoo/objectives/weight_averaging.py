"""Uniform weight averaging of state dicts from one start: the arithmetic of a model soup.

Shared by the training soup (:mod:`phrasezoo.training.soup`, several seeds of one recipe) and CCL's soup
(:func:`phrasezoo.methods.uctopic.ccl.ccl_soup`, several CCL runs from one model), so it sits below both on the import ladder.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def soup_state_dicts(states: Sequence[dict[str, torch.Tensor]], shared: Sequence[str]) -> dict[str, torch.Tensor]:
    """The uniform mean of ``states`` on the ``shared`` keys (float32 sums, cast back), the first state elsewhere."""
    if not states:
        raise ValueError("A soup needs at least one state dict.")
    keys = set(states[0])
    for i, state in enumerate(states[1:], start=1):
        if set(state) != keys:
            diff = sorted(keys ^ set(state))[:5]
            raise ValueError(f"Soup ingredient {i} has other tensors than ingredient 0 (e.g. {diff}): not one recipe.")
    shared_set = set(shared)
    missing = sorted(shared_set - keys)
    if missing:
        raise ValueError(f"Shared tensors {missing[:5]} are not in the checkpoints.")
    out = {}
    for key, first in states[0].items():
        if key in shared_set and first.is_floating_point():
            total = torch.zeros_like(first, dtype=torch.float32)
            for state in states:  # a fixed order: the same ingredients give bitwise the same soup
                total += state[key].float()
            out[key] = (total / len(states)).to(first.dtype)
        else:
            out[key] = first
    return out
