"""The codebook model's task for the two-process loss test (``tests/training/test_distributed_losses.py``): the
NNSC loss, with the whole batch's negatives (each text's is the next text's targets) instead of a random rotation
of each process's own batch."""

from __future__ import annotations

import torch
from datasets import Dataset

from phrasezoo.methods.codebook.task import CodebookTask
from tests.training.ddp_cases import tiny_model


def case():
    model = tiny_model("codebook")
    texts = ["the man lifting weights", "hot dog", "civil order", "real property law", "sms messages used",
             "some countries", "hospital appointments", "the woman in the garage"]  # fmt: skip
    targets = [t.split()[-2:] + ["word"] for t in texts]
    return model, CodebookTask(model, Dataset.from_dict({"text": texts, "targets": targets})), list(range(8))


def adjust(batch: dict, full: dict, rows: tuple[int, int]) -> None:
    """Negatives drawn from the whole batch ``full``: rows ``start:stop`` of them for this batch."""
    start, stop = rows
    batch["negative_ids"] = torch.roll(full["target_ids"], -1, 0)[start:stop]
    batch["negative_mask"] = torch.roll(full["target_mask"], -1, 0)[start:stop]
