"""UCTopic's training task (mentions, positives, the lexicon term) survives the GPU job's codec unchanged."""

from __future__ import annotations

from pathlib import Path

from phrasezoo.methods.uctopic.task import UCTopicTask
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.zoo.registry import get_method
from tests.gpu_job.codec_checks import assert_task_survives_the_codec
from tests.lexicon_fixtures import tiny_lexicon
from tests.methods.uctopic.test_model import _mentions_dataset


def test_task_with_the_lexicon_term_survives_the_codec(tmp_path: Path):
    model = get_method("uctopic").tiny_model()
    task = UCTopicTask(model, _mentions_dataset(), terms=TeacherTerms(lexicon_weight=1.0, lexicon=tiny_lexicon()[2]))
    assert_task_survives_the_codec(task, model, tmp_path)
