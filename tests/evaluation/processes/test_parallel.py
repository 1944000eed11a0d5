"""Evaluation on two cores: the tasks split by cost, the same numbers and task order as one process."""

from __future__ import annotations

import json

import pytest

from phrasezoo.evaluation import evaluate
from phrasezoo.evaluation.processes.parallel import earlier_seconds, eval_workers, evaluate_in_parallel, split_by_cost


def test_the_groups_balance_cost_and_keep_task_order():
    seconds = {"autofj": 367.0, "ppdb": 100.0, "ppdb_filtered": 76.0, "umls": 55.0, "yago": 42.0, "bird": 4.0}
    tasks = ["bird", "ppdb", "ppdb_filtered", "yago", "umls", "autofj"]
    first, second = split_by_cost(tasks, seconds)
    assert first == ["autofj"] and second == ["bird", "ppdb", "ppdb_filtered", "yago", "umls"]
    assert split_by_cost(["bird"], seconds) == (["bird"], [])


def test_earlier_seconds_come_from_the_last_results_file_else_typical(tmp_path):
    assert earlier_seconds(tmp_path / "missing.json")["autofj"] > 100
    entry = {"task": "autofj", "metric": "accuracy", "value": 0.7, "n": 1, "seconds": 12.5, "notes": ""}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"model": "m", "model_revision": None, "created": "x", "results": [entry]}))
    assert earlier_seconds(path)["autofj"] == 12.5
    path.write_text("{not json")
    assert earlier_seconds(path)["autofj"] > 100  # an unreadable file only loses the hint


def test_eval_workers_reads_its_variable(monkeypatch):
    monkeypatch.setenv("PHRASEZOO_EVAL_WORKERS", "1")
    assert eval_workers() == 1
    monkeypatch.setenv("PHRASEZOO_EVAL_WORKERS", "3")
    with pytest.raises(ValueError, match="1 or 2"):
        eval_workers()


def test_two_processes_give_the_numbers_of_one(tmp_path, monkeypatch, benchmarks_dir):
    monkeypatch.setenv("PHRASEZOO_EVAL_WORKERS", "2")
    output = tmp_path / "new-folder" / "results.json"  # its folder does not exist yet
    split = evaluate_in_parallel("baseline:minilm-l6", ["bird", "conll2003"], benchmarks_dir, output, name="minilm")
    alone = evaluate("baseline:minilm-l6", ["bird", "conll2003"], benchmarks_dir, progress=False)
    assert [(r["task"], r["metric"]) for r in split["results"]] == [(r["task"], r["metric"]) for r in alone["results"]]
    assert [r["value"] for r in split["results"]] == pytest.approx([r["value"] for r in alone["results"]], abs=1e-6)
    assert json.loads(output.read_text())["results"] == split["results"]
    assert not list(output.parent.glob(".evaluate-*"))  # the scratch folder is gone
