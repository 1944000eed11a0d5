"""SLICE's training task (triplets and validation triplets) survives the GPU job's codec unchanged."""

from __future__ import annotations

from pathlib import Path

from phrasezoo.methods.slice.task import SliceTask
from phrasezoo.zoo.registry import get_method
from tests.gpu_job.codec_checks import assert_task_survives_the_codec
from tests.methods.slice.test_task import TRIPLETS


def test_task_survives_the_codec(tmp_path: Path):
    model = get_method("slice").tiny_model()
    task = SliceTask(model, TRIPLETS, TRIPLETS[:2], valid_max_triplets=2)
    assert_task_survives_the_codec(task, model, tmp_path)
