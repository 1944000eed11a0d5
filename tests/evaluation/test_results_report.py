"""Results file shape and atomic write, the markdown report and the model-index conversion."""

from __future__ import annotations

import json

import pytest

from phrasezoo.evaluation import format_report, read_results, to_model_index, write_results
from phrasezoo.evaluation import results as results_module
from phrasezoo.evaluation.results import TaskResult, make_document

PEARL_VALUES = {
    ("turney", "accuracy"): 0.530,
    ("bird", "pearson"): 0.673,
    ("ppdb", "accuracy"): 0.968,
    ("ppdb_filtered", "accuracy"): 0.693,
    ("yago", "accuracy"): 0.833,
    ("umls", "accuracy"): 0.811,
    ("conll2003", "nmi"): 0.375,
    ("bc5cdr", "nmi"): 0.548,
    ("autofj", "accuracy"): 0.706,
    ("stsb_context", "pearson_passage"): 0.574,
    ("stsb_context", "pearson_spans_single_pass"): 0.646,
}


def full_doc(model: str = "baseline:minilm-l6") -> dict:
    entries = [
        TaskResult(t, m, v, 10, 1.5, "gold-name KB" if t in ("yago", "umls") else "")
        for (t, m), v in PEARL_VALUES.items()
    ]
    entries.append(TaskResult("autofj", "accuracy", None, 0, 0.0, "skipped: test"))  # a skipped duplicate is ignored
    return make_document(model, "sha256:abc", entries[:-1])


def test_document_shape_is_exact():
    doc = make_document("m", None, [TaskResult("bird", "pearson", 0.5, 3, 1.234, "n", details={"x": 1})])
    assert list(doc) == ["model", "model_revision", "created", "results"]
    assert doc["results"][0] == {
        "task": "bird", "metric": "pearson", "value": 0.5, "n": 3, "seconds": 1.23, "notes": "n", "details": {"x": 1}
    }  # fmt: skip
    assert list(make_document("m", None, [TaskResult("bird", "pearson", None, 0)])["results"][0]) == [
        "task", "metric", "value", "n", "seconds", "notes"
    ]  # fmt: skip
    assert "T" in doc["created"]


def test_write_is_atomic_and_round_trips(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "r.json"
    doc = full_doc()
    write_results(doc, path)
    assert read_results(path) == json.loads(path.read_text()) == doc
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]  # no temporary file left

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(results_module.json, "dump", boom)
    with pytest.raises(RuntimeError):
        write_results(make_document("other", None, []), path)
    assert read_results(path)["model"] == "baseline:minilm-l6"  # the old file is intact
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_read_rejects_a_bad_shape(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "m", "results": [{"task": "bird"}]}))
    with pytest.raises(ValueError):
        read_results(bad)


def test_report_has_model_rows_reference_rows_and_kb_note(tmp_path):
    path = tmp_path / "a.json"
    write_results(full_doc(), path)
    partial = make_document("only-bird", None, [TaskResult("bird", "pearson", 0.5, 3)])
    table = format_report([path, partial])
    lines = table.splitlines()
    assert lines[0].startswith("| model | Turney | BiRD |") and "PEARL avg (9)" in lines[0]
    row = next(line for line in lines if line.startswith("| baseline:minilm-l6 |"))
    assert "| 53.0 | 67.3 | 96.8 | 69.3 | 83.3 | 81.1 | 37.5 | 54.8 | 70.6 |" in row
    pearl_avg = sum(v for (t, _), v in PEARL_VALUES.items() if t != "stsb_context") / 9
    assert f"| {100 * pearl_avg:.1f} |" in row
    only_bird = next(line for line in lines if line.startswith("| only-bird |"))
    assert only_bird.count("–") >= 8
    for name in ("Phrase-BERT (paper)", "PEARL-small, 40M (paper)", "PEARL-base (paper)", "SLICE (paper)"):
        assert any(line.startswith(f"| {name} |") for line in lines)
    paper_row = next(line for line in lines if line.startswith("| Phrase-BERT (paper) |"))
    assert "| 57.2 | 68.8 | 96.8 | 68.7 | – | – | 35.4 | 59.5 | 66.9 |" in paper_row
    assert "gold-name KB" in table and "not comparable" in table
    assert "(paper)" not in format_report([path], include_reference=False)


def test_report_of_one_task_only_shows_available_columns():
    doc = make_document("m", None, [TaskResult("stsb_context", "pearson_passage", 0.574, 1024)])
    header = format_report(doc).splitlines()[0]
    assert "STS-B-Ctx passage r" in header and "Turney" not in header


def test_model_index_entries():
    doc = full_doc()
    doc["results"].append(
        {"task": "ppdb", "metric": "accuracy", "value": None, "n": 0, "seconds": 0, "notes": "skipped"}
    )
    entries = to_model_index(doc, "some-model-mini")
    assert len(entries) == len(PEARL_VALUES)
    yago = next(e for e in entries if e.dataset_config == "yago")
    assert yago.dataset_type == "Lihuchen/pearl_benchmark" and yago.metric_type == "accuracy"
    assert yago.metric_value == pytest.approx(83.3) and "gold-name KB" in yago.metric_name
    bird = next(e for e in entries if e.dataset_config == "bird")
    assert bird.metric_type == "pearsonr" and bird.task_type == "sentence-similarity"
    from huggingface_hub import ModelCardData

    card = ModelCardData(model_name="some-model-mini", eval_results=entries).to_dict()
    assert card["model-index"][0]["name"] == "some-model-mini"


def test_report_shows_only_the_tasks_present_and_the_reference_rows_that_have_them():
    subset = make_document(
        "pb", None, [TaskResult("turney", "accuracy", 0.54, 10), TaskResult("bird", "pearson", 0.7, 9)]
    )
    table = format_report([subset])
    assert table.splitlines()[0] == "| model | Turney | BiRD |"  # no averages without the nine PEARL tasks
    assert "SLICE (paper)" not in table and "CCL (paper)" not in table and "gold-name KB" not in table

    context = make_document(
        "uct",
        None,
        [
            TaskResult("conll2003_context", "nmi", 0.38, 5),
            TaskResult("conll2003_context", "acc", 0.71, 5),
            TaskResult("conll2003_context_ccl", "nmi", 0.33, 5),
        ],
    )
    table = format_report([context])
    header = table.splitlines()[0]
    assert header == "| model | CoNLL ctx NMI | CoNLL ctx ACC | CoNLL ctx+CCL NMI | CoNLL ctx+CCL ACC |"
    paper = next(line for line in table.splitlines() if line.startswith("| UCTopic CCL (paper)† |"))
    assert paper.endswith("| – | – | 49.5 | 74.3 |") and "Turney" not in table


def test_report_authors_rows_say_not_measured_until_their_results_file_exists(tmp_path, monkeypatch):
    """`phrasezoo report --authors`: a row per authors' published checkpoint, empty and marked ¹ (with the note
    saying why) until `phrasezoo evaluate --model <repo id>` has written its results file, then its numbers."""
    from phrasezoo.evaluation.hub_model import authors_results_path
    from phrasezoo.zoo.registry import get_method, list_methods

    repo = next(r.repo_id for m in list_methods() for r in get_method(m).releases)
    monkeypatch.chdir(tmp_path)
    doc = make_document("a-mini", "r", [TaskResult("turney", "accuracy", 0.55, 10, 1.0)])
    table = format_report([doc], include_reference=False, authors=True)
    assert f"| {repo} (authors' checkpoint)¹ | – |" in table.splitlines()
    assert "¹ An authors' published checkpoint" in table
    measured = make_document(repo, "c", [TaskResult("turney", "accuracy", 0.5612, 10, 1.0)])
    write_results(measured, tmp_path / authors_results_path(repo))
    table = format_report([doc], include_reference=False, authors=True)
    assert f"| {repo} (authors' checkpoint) | 56.1 |" in table.splitlines()
    assert repo not in format_report([doc], include_reference=False)
