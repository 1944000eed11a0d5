"""PEARL's optional teacher term: NT-Xent + type CE + distill_weight x similarity distillation."""

from __future__ import annotations

import random

import pytest
import torch

from phrasezoo.registry import get_method
from phrasezoo.teacher import TeacherEmbeddings
from tests.training.conftest import make_task


def test_the_distillation_term_joins_the_loss_with_its_weight():
    model = get_method("pearl").tiny_model()
    plain = make_task(model)
    teacher_vectors = torch.nn.functional.normalize(torch.randn(len(plain.phrases), 12), dim=-1)
    teacher = TeacherEmbeddings("test", {p: i for i, p in enumerate(plain.phrases)}, teacher_vectors)
    task = make_task(model)
    task.distill_weight, task.teacher = 2.0, teacher
    batch = task.make_batch(list(range(4)), random.Random(0))
    torch.manual_seed(0)
    loss, logs = task.compute_loss(model, batch)
    torch.manual_seed(0)
    base, base_logs = plain.compute_loss(model, batch)
    assert "distill" in logs and "distill" not in base_logs
    assert loss.item() == pytest.approx(base.item() + 2.0 * logs["distill"], rel=1e-4)
    with pytest.raises(ValueError, match="teacher"):
        type(task)(model, {"phrase": [], "type_id": [], "hard_negatives": []}, None, None, distill_weight=1.0)
