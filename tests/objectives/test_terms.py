"""The teacher guard of the teacher terms: which rows a teacher would teach wrongly."""

from __future__ import annotations

import torch

from phrasezoo.objectives.terms import misranked_rows


def _rows(*vectors):
    return torch.tensor(vectors, dtype=torch.float32)


def test_a_group_whose_teacher_ranks_a_negative_above_the_positive_is_switched_off():
    # 0 "WHO", 1 "World Health Organization" (alias), 2 "World Trade Organization" (sibling), 3 "Dickens",
    # 4 "Charles Dickens" (alias), 5 "Dick King-Smith" (sibling)
    rows = _rows([1, 0], [0.6, 0.8], [0.8, 0.6], [0, 1], [0.1, 1], [1, 0.2])
    found = torch.ones(6, dtype=torch.bool)
    off = misranked_rows(rows, found, [(0, 1, [2]), (3, 4, [5])])
    assert off.tolist() == [False, True, True, False, False, False]


def test_a_tie_counts_as_misranked_and_unknown_rows_keep_their_group():
    rows = _rows([1, 0], [0.6, 0.8], [0.6, 0.8], [1, 0])
    assert misranked_rows(rows, torch.ones(4, dtype=torch.bool), [(0, 1, [2])]).tolist() == [False, True, True, False]
    # the teacher does not know the negative (or the anchor): nothing to judge, the group stays
    found = torch.tensor([True, True, False, True])
    assert not misranked_rows(rows, found, [(0, 1, [2])]).any()
    found = torch.tensor([False, True, True, True])
    assert not misranked_rows(rows, found, [(0, 1, [2])]).any()
    # only the known negatives are judged and switched off
    rows = _rows([1, 0], [0.6, 0.8], [0.9, 0.1], [0.95, 0.05])
    found = torch.tensor([True, True, True, False])
    assert misranked_rows(rows, found, [(0, 1, [2, 3])]).tolist() == [False, True, True, False]
