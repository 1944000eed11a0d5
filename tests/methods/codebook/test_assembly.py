"""The codebook model: a tiny version of its mini recipe (its benchmark guard is part of the example build) trains to the weights and training facts
recorded before the training-task assembler existed (:mod:`tests.training.golden`, issue 45)."""

from __future__ import annotations

from pathlib import Path

from tests.training import golden

CORPUS = Path(__file__).resolve().parents[2] / "training" / "device_tiny_corpus.txt"


#: tiny versions of the method's mini recipes (SPEC plus these changes), trained by two processes in CI
#: (``tests/training/test_accelerate_launch.py``); TERMS: the extra loss terms their runs must log
MINI_RECIPES = {
    "codebook-sentence-mini": {},
    "codebook-sentence-mini-k1": {"model": {"n_facets": 1}},
    "codebook-phrase-mini": {"model": {"cross_attention": False}, "data": {"kind": "phrase", "max_phrase_words": 5}},
}
TERMS = set()


def SPEC(root: Path) -> dict:  # noqa: N802 (a constant of the golden test)
    text = root / "codebook.txt"
    text.write_text(CORPUS.read_text())
    return {
        "model": {"n_facets": 3, "d_model": 16, "n_heads": 2, "ffn_dim": 32, "encoder_layers": 1,
                  "decoder_layers": 1, "max_seq_length": 20, "nnsc_max_iter": 10},
        "data": {"kind": "sentence", "corpus": str(text), "valid_percent": 0.0, "min_count": 1, "max_targets": 10,
                 "max_sentence_words": 19, "guard_benchmarks": ["turney"]},
        "method_args": {},
    }  # fmt: skip


def test_the_tiny_recipe_trains_to_the_recorded_weights_and_facts(tmp_path, monkeypatch, one_thread, benchmarks_dir):
    golden.check(
        "codebook", SPEC, Path(__file__).with_name("assembly_golden.json"), tmp_path, monkeypatch, benchmarks_dir
    )
