"""Same results, bit for bit, across the training-task assembler (issue 45).

A tiny version of every method's mini recipe (tiny corpus, a few steps, one thread) is trained through the method's
``build_task`` with the shared parts on where the method has them (benchmark filter, teacher, lexicon term), and its
weights and training facts are compared with the ones recorded before the assembler existed
(``assembly_golden.json``, written by ``python -m tests.training.test_assembly_golden --record``). The lexicon term
is a hand-made one (no WordNet, no faiss, no teacher run); everything else is the real code path.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import torch

GOLDEN = Path(__file__).with_name("assembly_golden.json")
HERE = Path(__file__).resolve().parent
#: facts that change from run to run (time, date, machine), left out of the comparison
VOLATILE = ("training time (min)", "trained on", "device", "torch threads", "torch", "seconds", "time")
SENTENCES = [
    "The New York Times reported that the United States and the United Kingdom signed a trade agreement.",
    "Machine learning and deep learning are popular topics at the university in New York.",
    "The European Union discussed climate change with the United Nations in Paris last year.",
    "Political philosophy studies voluntary institutions and free associations in modern societies.",
    "Deep learning models need large datasets and fast computers to work very well.",
    "Researchers in Paris and London study climate change and its effects on farming.",
    "The New York Times and the Washington Post wrote about the trade agreement in Paris.",
    "Climate change and deep learning were discussed at the United Nations in New York.",
]
TRAINING = {"batch_size": 4, "max_steps": 2, "learning_rate": 1e-3, "seed": 3, "num_threads": 1, "log_every": 1}
LEXICON = {"lexicon_weight": 0.5, "lexicon": {"max_strings": 8}}
TEACHER = {"distill_weight": 5.0, "teacher": "minilm-l6"}
TRIPLETS = [
    ("cheap flights to paris", "Find cheap flights to Paris and the rest of France today.", "The cat sat on the mat."),
    ("how tall is everest", "Mount Everest is 8,849 metres tall, the highest peak on Earth.", "Bananas are yellow."),
    ("capital of japan", "Tokyo is the capital of Japan and its largest city.", "Rain is expected tomorrow."),
    ("python list sort", "In Python, a list is sorted in place with list.sort().", "The river runs to the sea."),
    ("boiling point water", "Water boils at 100 degrees Celsius at sea level.", "He plays the violin well."),
    ("largest ocean", "The Pacific is the largest and deepest of the oceans.", "Stocks fell on Monday."),
]


def recipes(root: Path) -> dict[str, dict]:
    """A tiny recipe per method (files it reads are written under ``root``)."""
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 3) + "\n")
    msmarco = root / "msmarco"
    (msmarco / "triplet").mkdir(parents=True, exist_ok=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {k: [t[i] for t in TRIPLETS] for i, k in enumerate(("query", "positive", "negative"))}
    pq.write_table(pa.table(columns), msmarco / "triplet" / "train-00000-of-00001.parquet")
    (msmarco / "README.md").write_text(
        "---\nconfigs:\n- config_name: triplet\n  data_files:\n  - split: train\n    path: triplet/train-*\n---\n"
    )
    codebook_corpus = root / "codebook.txt"
    codebook_corpus.write_text((HERE / "device_tiny_corpus.txt").read_text())
    char = {"steps": 1, "batch_size": 8, "vocabulary_size": 100}
    return {
        "pearl": {
            "backbone": "minilm-l6",
            "data": {"corpus": str(corpus), "min_freq": 1, "use_wordnet": False, "benchmark_filter": "multiword"},
            "method_args": {"char_pretrain": char, **TEACHER, "distill_words": 1, **LEXICON},
        },
        "phrase_bert": {
            "backbone": "minilm-l6",
            "data": {
                "corpus": str(corpus),
                "min_freq": 1,
                "use_wordnet": False,
                "benchmark_filter": "multiword",
                "max_context_phrases": 20,
            },
            "method_args": {**TEACHER, **LEXICON},
        },  # fmt: skip
        "uctopic": {
            "backbone": "minilm-l6",
            "data": {"corpus": str(corpus), "sources": ["entities", "noun_phrases"], "benchmark_filter": "multiword"},
            "method_args": {"teacher": "minilm-l6", **LEXICON},
        },
        "codebook": {
            "model": {
                "n_facets": 3,
                "d_model": 16,
                "n_heads": 2,
                "ffn_dim": 32,
                "encoder_layers": 1,
                "decoder_layers": 1,
                "max_seq_length": 20,
                "nnsc_max_iter": 10,
            },
            "data": {
                "kind": "sentence",
                "corpus": str(codebook_corpus),
                "valid_percent": 0.0,
                "min_count": 1,
                "max_targets": 10,
                "max_sentence_words": 19,
                "guard_benchmarks": ["turney"],
            },
            "method_args": {},
        },  # fmt: skip
        "slice": {
            "backbone": "minilm-l6",
            "data": {"source": "msmarco", "msmarco_dataset": str(msmarco), "msmarco_valid_rows": 1},
            "method_args": {"valid_max_triplets": 2},
        },
    }


def tiny_lexicon_builder(options, teacher, filter_mode, progress=True):
    """A hand-made lexicon term in place of WordNet + teacher neighbourhoods (no global random state used)."""
    from phrasezoo.objectives.lexicon_distillation import LexiconDistillation, TeacherNeighbourhoods

    words = ["violin", "cello", "contrabass", "double bass", "tuba", "trumpet", "banana", "apple"]
    generator = torch.Generator().manual_seed(0)
    vectors = torch.nn.functional.normalize(torch.randn(len(words), 7, generator=generator), dim=-1)
    neighbours = [[(i + k) % len(words) for k in (1, 2, 3)] for i in range(len(words))]
    return LexiconDistillation(TeacherNeighbourhoods(words, vectors, neighbours), 2, 2, 0.1)


def train_tiny(method: str, root: Path) -> dict:
    """Train the tiny recipe of ``method`` in this process; its weights' hash and its training facts."""
    from phrasezoo.objectives import lexicon_distillation
    from phrasezoo.recipes import recipe_from_dict
    from phrasezoo.training.run import run_training

    spec = recipes(root)[method]
    recipe = recipe_from_dict(
        {"name": f"{method}-golden", "method": method, "repo_id": f"test/{method}-golden",
         **({"backbone": spec["backbone"]} if "backbone" in spec else {}), "model": spec.get("model", {}),
         "data": spec["data"], "training": {**TRAINING, "method_args": spec["method_args"]}}
    )  # fmt: skip
    original = lexicon_distillation.build_lexicon_distillation
    lexicon_distillation.build_lexicon_distillation = tiny_lexicon_builder
    try:
        run = run_training(recipe, root / f"out-{method}", resume=False, progress=False)
    finally:
        lexicon_distillation.build_lexicon_distillation = original
    state = run.result.model.state_dict()
    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode())
        digest.update(state[key].detach().cpu().contiguous().numpy().tobytes())
    facts = [[k, v] for k, v in run.facts.items() if not any(word in k for word in VOLATILE)]
    facts = json.loads(json.dumps(facts, default=str).replace(str(root), "<root>"))
    return {"weights": digest.hexdigest(), "facts": facts}


METHODS = ("pearl", "phrase_bert", "uctopic", "codebook", "slice")


@pytest.mark.parametrize("method", METHODS)
def test_tiny_recipe_trains_to_the_recorded_weights_and_facts(
    method, tmp_path, monkeypatch, one_thread, benchmarks_dir
):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(benchmarks_dir))
    monkeypatch.chdir(tmp_path)
    expected = json.loads(GOLDEN.read_text())[method]
    got = train_tiny(method, tmp_path)
    assert got["facts"] == expected["facts"]
    assert got["weights"] == expected["weights"]


if __name__ == "__main__" and "--record" in sys.argv:
    import os
    import tempfile

    from tests.conftest import BENCHMARKS_DIR

    torch.set_num_threads(1)
    os.environ["PHRASEZOO_BENCHMARKS"] = str(BENCHMARKS_DIR.resolve())
    found = {}
    for name in sys.argv[2:] or METHODS:
        with tempfile.TemporaryDirectory() as folder:
            os.environ["PHRASEZOO_CACHE"] = str(Path(folder) / "cache")
            os.chdir(folder)
            found[name] = train_tiny(name, Path(folder))
            print(name, found[name]["weights"], flush=True)
    old = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    GOLDEN.write_text(json.dumps({**old, **found}, indent=1) + "\n")
