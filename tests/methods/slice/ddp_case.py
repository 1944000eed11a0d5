"""SLICE's task for the two-process loss test (``tests/training/test_distributed_losses.py``): the span loss."""

from __future__ import annotations

from phrasezoo.methods.slice.task import SliceTask
from tests.training.ddp_cases import PHRASES, SENTENCES, tiny_model


def case():
    model = tiny_model("slice")
    triplets = [(p, SENTENCES[i], SENTENCES[(i + 1) % 8]) for i, p in enumerate(PHRASES)]
    return model, SliceTask(model, triplets, valid_max_triplets=0), list(range(8))
