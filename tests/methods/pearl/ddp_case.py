"""PEARL's task for the two-process loss test (``tests/training/test_distributed_losses.py``): NT-Xent with hard
negatives, the type head, the teacher and lexicon terms."""

from __future__ import annotations

from phrasezoo.methods.pearl.task import PearlTask
from tests.training.ddp_cases import PHRASES, teacher_terms, tiny_model


def case():
    model = tiny_model("pearl")
    dataset = {
        "phrase": PHRASES,
        "type_id": [i % 3 for i in range(8)],
        "hard_negatives": [[PHRASES[(i + 1) % 8], PHRASES[(i + 3) % 8]] for i in range(8)],
    }
    task = PearlTask(model, dataset, lambda p, rng: p.title(), lambda w, rng: w, terms=teacher_terms(True))
    return model, task, list(range(8))
