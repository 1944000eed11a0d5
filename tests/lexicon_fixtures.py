"""A hand-made lexicon term for the methods' task tests (no teacher, no WordNet, no faiss)."""

from __future__ import annotations

import torch

from phrasezoo.objectives.lexicon_distillation import LexiconDistillation, TeacherNeighbourhoods

WORDS = ["violin", "cello", "contrabass", "double bass", "tuba", "trumpet", "banana", "apple"]


def tiny_lexicon(
    teacher_dim: int = 7, anchors: int = 2, group: int = 2, temperature: float = 0.1
) -> tuple[list[str], torch.Tensor, LexiconDistillation]:
    """``(words, teacher rows, term)``: random unit teacher rows, each word's neighbours the next three words."""
    vectors = torch.nn.functional.normalize(torch.randn(len(WORDS), teacher_dim), dim=-1)
    neighbours = [[(i + k) % len(WORDS) for k in (1, 2, 3)] for i in range(len(WORDS))]
    term = LexiconDistillation(TeacherNeighbourhoods(list(WORDS), vectors, neighbours), anchors, group, temperature)
    return list(WORDS), vectors, term
