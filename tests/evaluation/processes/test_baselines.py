"""A recipe's baselines: measured in this process or in a background one (a free core during training), the same
numbers either way, merged into the shared results file."""

from __future__ import annotations

import json

from phrasezoo.evaluation.processes.baselines import Baselines


def test_a_background_run_gives_the_numbers_of_this_process_and_keeps_other_recipes_tasks(
    tmp_path, monkeypatch, benchmarks_dir
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "baselines").mkdir(parents=True)
    other = {"task": "turney", "metric": "accuracy", "value": 0.5, "n": 1, "seconds": 0.0, "notes": "other recipe"}
    shared = tmp_path / "results" / "baselines" / "baseline-minilm-l6.json"  # one file per baseline
    shared.write_text(
        json.dumps({"model": "baseline:minilm-l6", "model_revision": "x", "created": "x", "results": [other]})
    )

    here = Baselines(["baseline:minilm-l6"], ["bird"], str(benchmarks_dir), force_eval=True).results()
    background = Baselines(["baseline:minilm-l6"], ["bird"], str(benchmarks_dir), force_eval=True)
    background.start()
    assert background.process is not None and background.folder.is_dir()
    there = background.results()

    assert [r["value"] for r in there[0]["results"]] == [r["value"] for r in here[0]["results"]]
    assert [r["task"] for r in there[0]["results"]] == ["bird"] and background.background[1] > 0
    assert [r["task"] for r in json.loads(shared.read_text())["results"]] == ["turney", "bird"]
    assert not background.folder.exists()  # its scratch folder is gone
    # --reuse-baselines: everything is in the file now, nothing to measure, nothing started
    reused = Baselines(["baseline:minilm-l6"], ["bird", "turney"], str(benchmarks_dir), force_eval=False)
    reused.start()
    assert reused.process is None and [r["task"] for r in reused.results()[0]["results"]] == ["turney", "bird"]
