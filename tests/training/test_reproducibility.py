"""Two runs of one recipe with one seed give bitwise identical weights (issue 13).

Each run is its own process, as two `train.py` invocations are: a different hash seed (set and dict order of
strings), its own fresh data cache (the data is built twice) and a different OMP_NUM_THREADS in the environment
(the recipe's ``training.num_threads`` decides). Before the fix, fresh modules (PEARL's type head and character
encoder) were initialised from torch's per-process random seed and every tensor differed.
"""

from __future__ import annotations

import hashlib
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
    "Deep learning models need large datasets and fast computers to work very well.",
    "Researchers in Paris and London study climate change and its effects on farming.",
]


def _train(tmp_path: Path, name: str, hash_seed: str, threads_env: str) -> Path:
    output = tmp_path / f"out-{name}"
    env = {
        **os.environ,
        "PHRASEZOO_CACHE": str(tmp_path / f"cache-{name}"),
        "PYTHONHASHSEED": hash_seed,
        "OMP_NUM_THREADS": threads_env,
    }
    command = [sys.executable, str(REPO_ROOT / "train.py"), str(tmp_path / "tiny.yaml"), "--output-dir", str(output)]
    proc = subprocess.run(
        [*command, "--no-resume", "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return output


def test_two_runs_of_one_recipe_and_seed_give_identical_weights(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES * 3) + "\n")
    recipe = {
        "name": "pearl-tiny",
        "method": "pearl",
        "repo_id": "test/pearl-tiny",
        "backbone": "minilm-l6",
        "data": {"corpus": str(corpus), "min_freq": 1, "glove": "glove-6b-50d", "use_wordnet": False},
        "training": {
            "batch_size": 8,
            "max_steps": 3,
            "learning_rate": 1e-4,
            "seed": 5,
            "num_threads": 1,
            "time_budget_minutes": 30,  # a safety stop only: it must not decide this run
            "method_args": {"char_pretrain": {"steps": 2, "batch_size": 16, "vocabulary_size": 500}},
        },
    }
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(recipe))
    first = _train(tmp_path, "a", hash_seed="1", threads_env="1")
    second = _train(tmp_path, "b", hash_seed="2", threads_env="2")

    digests = [hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest() for out in (first, second)]
    assert digests[0] == digests[1], "two runs of one recipe and seed gave different weights"
    for out in (first, second):
        facts = json.loads((out / "training_facts.json").read_text())
        assert facts["steps"] == facts["planned steps"] == 3 and facts["stopped by time budget"] is False
        assert facts["torch threads"] == 1 and facts["seed"] == 5


def test_a_fired_time_budget_is_logged_and_a_rerun_resumes_to_the_planned_steps(tmp_path, tiny_setup, training_config):
    from phrasezoo.training.loop import RunOptions, train

    model, task = tiny_setup
    stopped = train(
        model, task, training_config(max_steps=4, time_budget_minutes=1e-9), RunOptions(tmp_path, progress=False)
    )
    assert stopped.stopped_early and stopped.steps == 1
    records = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert {"step": 1, "stopped_by_time_budget": True, "planned_steps": 4} in records
    resumed = train(stopped.model, task, training_config(max_steps=4), RunOptions(tmp_path, progress=False))
    assert resumed.resumed_from == 1 and resumed.steps == 4 and not resumed.stopped_early


def test_num_threads_sets_torch_threads(tmp_path, tiny_setup, training_config):
    import torch

    from phrasezoo.training.loop import RunOptions, train

    model, task = tiny_setup
    before = torch.get_num_threads()
    try:
        train(model, task, training_config(max_steps=1, num_threads=1), RunOptions(tmp_path, progress=False))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
