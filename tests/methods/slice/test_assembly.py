"""SLICE: a tiny version of its mini recipe (MS MARCO layout, local; validation triplets on) trains to the weights and training facts
recorded before the training-task assembler existed (:mod:`tests.training.golden`, issue 45)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.training import golden

TRIPLETS = [
    ("cheap flights to paris", "Find cheap flights to Paris and the rest of France today.", "The cat sat on the mat."),
    ("how tall is everest", "Mount Everest is 8,849 metres tall, the highest peak on Earth.", "Bananas are yellow."),
    ("capital of japan", "Tokyo is the capital of Japan and its largest city.", "Rain is expected tomorrow."),
    ("python list sort", "In Python, a list is sorted in place with list.sort().", "The river runs to the sea."),
    ("boiling point water", "Water boils at 100 degrees Celsius at sea level.", "He plays the violin well."),
    ("largest ocean", "The Pacific is the largest and deepest of the oceans.", "Stocks fell on Monday."),
]


#: tiny versions of the method's mini recipes (SPEC plus these changes), trained by two processes in CI
#: (``tests/training/test_accelerate_launch.py``); TERMS: the extra loss terms their runs must log
MINI_RECIPES = {"slice-mini": {}, "slice-mini-control": {"method_args": {"passage_loss": True}}}
TERMS = set()


def SPEC(root: Path) -> dict:  # noqa: N802 (a constant of the golden test)
    repo = root / "msmarco-golden"
    (repo / "triplet").mkdir(parents=True, exist_ok=True)
    columns = {k: [t[i] for t in TRIPLETS] for i, k in enumerate(("query", "positive", "negative"))}
    pq.write_table(pa.table(columns), repo / "triplet" / "train-00000-of-00001.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: triplet\n  data_files:\n  - split: train\n    path: triplet/train-*\n---\n"
    )
    return {
        "backbone": "minilm-l6",
        "data": {"source": "msmarco", "msmarco_dataset": str(repo), "msmarco_valid_rows": 1},
        "method_args": {"valid_max_triplets": 2},
    }


def test_the_tiny_recipe_trains_to_the_recorded_weights_and_facts(tmp_path, monkeypatch, one_thread, benchmarks_dir):
    golden.check("slice", SPEC, Path(__file__).with_name("assembly_golden.json"), tmp_path, monkeypatch, benchmarks_dir)
