"""PEARL's training task (views guarded by the benchmark filter, character noise, the lexicon term) survives the GPU
job's codec unchanged: the same batches and the same loss."""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset

from phrasezoo.data.benchmark_filter import BenchmarkBlocklist
from phrasezoo.data.lexical.synonyms import SynonymTable
from phrasezoo.methods.pearl.task import PearlTask
from phrasezoo.methods.pearl.views import CharNoise, PositiveViews
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.zoo.registry import get_method
from tests.gpu_job.codec_checks import assert_task_survives_the_codec
from tests.lexicon_fixtures import tiny_lexicon

PHRASES = ["big blue", "red car", "World Health Organization", "WHO", "New York Times", "the Times"]


def test_task_with_guarded_views_and_the_lexicon_term_survives_the_codec(tmp_path: Path):
    model = get_method("pearl").tiny_model()
    dataset = Dataset.from_dict({
        "phrase": PHRASES,
        "type_id": [3, -100, 5, -100, 7, -100],
        "paraphrases": [["IBM"], [], ["WHO"], ["World Health Organization"], ["the Times"], ["New York Times"]],
        "hard_negatives": [["big red"], ["red cab", "blue car"], ["World Trade Organization"], [], [], ["The Sun"]],
    })  # fmt: skip
    views = PositiveViews(
        SynonymTable({"big": ["large"], "car": ["automobile"]}),
        dict(zip(dataset["phrase"], dataset["paraphrases"])),
        {"synonym": 0.4, "paraphrase": 0.5, "none": 0.1},
        BenchmarkBlocklist.build({"ppdb": ([], [("big blue", "IBM")], [])}),
        "multiword",
    )
    terms = TeacherTerms(lexicon_weight=1.0, lexicon=tiny_lexicon()[2])
    task = PearlTask(model, dataset, augment=views, word_noise=CharNoise(), terms=terms, hard_negatives=1)
    assert_task_survives_the_codec(task, model, tmp_path, batches=4, batch_size=3)
