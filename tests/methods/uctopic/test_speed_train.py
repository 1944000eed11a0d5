"""benchmarks/speed_train.py: a pack travels without weights or data builders, and ``time`` runs the real loop on
it in one fresh process per device."""

from __future__ import annotations

import json
import random
import runpy
from pathlib import Path

import torch

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.methods.uctopic.task import UCTopicTask
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.zoo.registry import get_method
from tests.lexicon_fixtures import tiny_lexicon
from tests.methods.uctopic.test_model import _mentions_dataset

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "speed_train.py"


def test_shrunk_lexicon_keeps_rows_and_neighbour_counts():
    script = runpy.run_path(str(SCRIPT))
    _, _, term = tiny_lexicon()
    before = dict(zip(term.neighbourhoods.strings, term.neighbourhoods.vectors, strict=True))
    script["_shrink_lexicon"](term, 5)
    hood = term.neighbourhoods
    assert len(hood) == 5 and hood.vectors.shape == (5, 7)
    for string, row in zip(hood.strings, hood.vectors, strict=True):
        assert torch.equal(row, before[string])  # each kept string keeps its own teacher row
    for i, row in enumerate(hood.neighbours):
        assert len(row) == 3 and i not in row and all(0 <= j < 5 for j in row)
    ids, words = term.sample(random.Random(0))
    assert words == [hood.strings[i] for i in ids]


def test_time_runs_the_loop_on_a_pack_and_reports_seconds_per_step(tmp_path: Path):
    script = runpy.run_path(str(SCRIPT))
    model = get_method("uctopic").tiny_model()
    task = UCTopicTask(model, _mentions_dataset(), terms=TeacherTerms(lexicon_weight=1.0, lexicon=tiny_lexicon()[2]))
    training = TrainingConfig(batch_size=2, max_steps=300, learning_rate=1e-4, optimizer="adamw", seed=3)
    pack = script["write_pack"](tmp_path / "pack", {"recipe": "tiny"}, vars(training), model, task, 6)
    assert task.model is model  # the caller's task is left whole
    assert not list(pack.glob("*.safetensors")) and (pack / "tokenizer").is_dir()
    assert json.loads((pack / "pack.json").read_text())["lexicon strings kept"] == 6

    report_path = tmp_path / "report.json"
    argv = ["time", str(pack), "--devices", "cpu", "cpu", "--steps", "4", "5", "--warmup", "1", "--cpu-threads", "1"]
    script["main"]([*argv, "--output", str(report_path)])
    report = json.loads(report_path.read_text())
    first, second = report["runs"]
    assert (first["steps run"], first["steps timed (after warm-up)"]) == (4, 2)  # 4 steps: 3 gaps, 1 warm-up
    assert (second["steps run"], second["steps timed (after warm-up)"]) == (5, 3)
    assert first["device"] == "cpu" and first["torch threads"] == 1 and first["speed-up over cpu"] == 1.0
    assert first["seconds per step (median)"] > 0 and first["recipe steps"] == 300
    assert "lexicon" in first["last losses (random weights: not a score)"]

    table = script["render"]([report])
    assert table.count("| tiny |") == 2 and "| reference |" in table and "x vs cpu (1 threads) |" in table
