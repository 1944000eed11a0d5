"""PEARL: a tiny version of its mini recipe (benchmark filter, teacher with anchor words, lexicon term on) trains to the weights and training facts
recorded before the training-task assembler existed (:mod:`tests.training.golden`, issue 45)."""

from __future__ import annotations

from pathlib import Path

from tests.training import golden

#: tiny versions of the method's mini recipes (SPEC plus these changes), trained by two processes in CI
#: (``tests/training/test_accelerate_launch.py``); TERMS: the extra loss terms their runs must log
MINI_RECIPES = {"pearl-mini": {}}
TERMS = {"distill", "lexicon"}


def SPEC(root: Path) -> dict:  # noqa: N802 (a constant of the golden test)
    return {
        "backbone": "minilm-l6",
        "data": {"corpus": golden.corpus(root), "min_freq": 1, "use_wordnet": False, "benchmark_filter": "multiword"},
        "method_args": {"char_pretrain": {"steps": 1, "batch_size": 8, "vocabulary_size": 100}, **golden.TEACHER,
                        "distill_words": 1, **golden.LEXICON},
    }  # fmt: skip


def test_the_tiny_recipe_trains_to_the_recorded_weights_and_facts(tmp_path, monkeypatch, one_thread, benchmarks_dir):
    golden.check("pearl", SPEC, Path(__file__).with_name("assembly_golden.json"), tmp_path, monkeypatch, benchmarks_dir)
