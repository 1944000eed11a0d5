"""Two processes, data-parallel over gloo, end to end on a tiny recipe: the same code a multi-GPU run takes.

``accelerate launch --cpu --num_processes 2`` starts ONE process in accelerate 1.x unless MPI is configured
(``--cpu`` always takes its simple launcher), so the test uses ``--multi_gpu --num_processes 2``: torchrun
starts two processes and, with no GPU present, Accelerate runs them as MULTI_CPU with the gloo backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [
    "The New York Times reported that the United States and the United Kingdom signed a trade agreement.",
    "Machine learning and deep learning are popular topics at the university in New York.",
    "The European Union discussed climate change with the United Nations in Paris last year.",
    "Political philosophy studies voluntary institutions and free associations in modern societies.",
    "The World Health Organization published a report on public health in Geneva.",
    "Deep learning models need large datasets and fast computers to work very well.",
    "The United States Congress passed a new law about public health last week.",
    "Researchers in Paris and London study climate change and its effects on farming.",
    "The Boston Globe and The New York Times covered the election in the United States.",
    "Students at the university learn machine learning, statistics and political philosophy.",
]


def test_two_process_training_exports_a_model(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 3) + "\n")
    recipe = {
        "name": "pearl-tiny",
        "method": "pearl",
        "repo_id": "test/pearl-tiny",
        "backbone": "minilm-l6",
        "data": {"corpus": str(corpus), "min_freq": 1, "glove": "glove-6b-50d", "use_wordnet": False},
        "training": {
            "batch_size": 8,  # 4 per process
            "max_steps": 3,
            "checkpoint_every": 2,
            "learning_rate": 1e-4,
            "method_args": {"char_pretrain": {"steps": 2, "batch_size": 16, "vocabulary_size": 500}},
        },
    }
    config = tmp_path / "pearl-tiny.yaml"
    config.write_text(yaml.safe_dump(recipe))
    output = tmp_path / "out"
    env = {**os.environ, "PHRASEZOO_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
        "--mixed_precision", "no", "--dynamo_backend", "no",
        str(REPO_ROOT / "train.py"), str(config), "--output-dir", str(output), "--no-progress",
    ]  # fmt: skip
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    facts = json.loads((output / "training_facts.json").read_text())
    assert facts["processes"] == 2 and facts["steps"] == 3, facts
    assert "MULTI_CPU" in proc.stdout + proc.stderr or facts["device"].startswith("cpu")
    assert (output / "model.safetensors").exists() and (output / "README.md").exists()
    assert json.loads((output / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling_pearl.PearlModel"
    assert (output / "checkpoints" / "latest").read_text().strip() == "step-000003"
