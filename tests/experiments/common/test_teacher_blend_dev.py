"""experiments/common/teacher_blend_dev.py: a blend's dev-suite encoder has the teacher term's geometry."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
import torch

from phrasezoo.encoders.base import Encoder
from phrasezoo.objectives.teacher import TeacherEmbeddings

SCRIPT = Path(__file__).resolve().parents[3] / "experiments" / "common" / "teacher_blend_dev.py"
TEXTS = ["deep learning", "new york times", "machine learning"]


class RandomEncoder(Encoder):
    def __init__(self, name: str, dim: int, seed: int) -> None:
        super().__init__(name, "x", progress=False)
        rng = np.random.default_rng(seed)
        self.table = {t: rng.standard_normal(dim).astype(np.float32) for t in TEXTS}

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def test_blend_encoder_cosines_equal_the_blended_teachers(monkeypatch):
    from phrasezoo.objectives import teacher as teacher_module

    script = runpy.run_path(str(SCRIPT))
    parts = {"big": RandomEncoder("big", 7, 0), "small": RandomEncoder("small", 3, 1)}
    blend = script["BlendEncoder"](parts, {"big": 0.8, "small": 0.2})
    assert blend.name == "0.8 big + 0.2 small"
    vectors = blend.encode(TEXTS)

    def cached_rows(texts, name, *args):
        unique = sorted(set(texts))
        return TeacherEmbeddings(
            name, {t: i for i, t in enumerate(unique)}, torch.from_numpy(parts[name].encode(unique))
        )

    monkeypatch.setattr(teacher_module, "_encoder_embeddings", cached_rows)
    teacher = teacher_module.teacher_embeddings(TEXTS, {"big": 0.8, "small": 0.2}, progress=False)
    rows = teacher.vectors[[teacher.index[t] for t in TEXTS]].numpy()
    assert np.allclose(vectors @ vectors.T, rows @ rows.T, atol=1e-6)  # the dev suite scores the distilled geometry


def test_weights_outside_zero_one_are_refused():
    script = runpy.run_path(str(SCRIPT))
    with pytest.raises(SystemExit, match="between 0 and 1"):
        script["blend_rows"].__globals__["load_encoder"] = lambda spec, **kw: RandomEncoder(spec, 3, 0)
        script["blend_rows"](["a", "b"], [1.5], ["dev_fuzzy"])
