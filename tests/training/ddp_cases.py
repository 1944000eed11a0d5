"""Shared pieces of the two-process loss tests (``tests/training/test_distributed_losses.py``): each method's
``tests/methods/<name>/ddp_case.py`` builds its task from these."""

from __future__ import annotations

import zlib

import torch

from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.zoo.registry import get_method

PHRASES = ["new york times", "machine learning", "climate change", "public health", "united nations",
           "deep learning", "trade agreement", "political philosophy"]  # fmt: skip
SENTENCES = [f"Yesterday the report on {p} was read by many people in the city." for p in PHRASES]


class FakeTeacher:
    """Teacher rows from a hash of the text (7-d), every text found."""

    index: dict[str, int] = {}

    def lookup(self, texts):
        rows = [torch.randn(7, generator=torch.Generator().manual_seed(zlib.crc32(t.encode()))) for t in texts]
        return torch.stack(rows), torch.ones(len(texts), dtype=torch.bool)


def teacher_terms(distill: bool) -> TeacherTerms:
    """The lexicon term (the golden tests' hand-made one) and, with ``distill``, the teacher term (hashed rows)."""
    from tests.training.golden import tiny_lexicon_builder

    return TeacherTerms(
        distill_weight=2.0 if distill else 0.0,
        teacher=FakeTeacher() if distill else None,
        lexicon_weight=0.5,
        lexicon=tiny_lexicon_builder(None, None, None),
    )


def tiny_model(method: str):
    """The method's tiny model in training mode, dropout off (its masks depend on the batch shape)."""
    model = get_method(method).tiny_model()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        if isinstance(module, torch.nn.MultiheadAttention):
            module.dropout = 0.0
    model.train()
    return model
