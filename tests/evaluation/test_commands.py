"""CLI: --help texts, errors, and a tiny end-to-end run with the real MiniLM baseline on BiRD."""

from __future__ import annotations

import argparse

import pytest

from phrasezoo.core.recipes import results_file_name
from phrasezoo.evaluation import read_results
from phrasezoo.evaluation.commands import main, register


def test_register_adds_both_subcommands_with_help(capsys):
    parser = argparse.ArgumentParser(prog="phrasezoo")
    register(parser.add_subparsers(dest="command"))
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["evaluate", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--model", "--tasks", "--benchmarks-dir", "--output", "--batch-size", "--stsb-per-span", "--source",
                 "--ccl"):  # fmt: skip
        assert flag in out
    assert "baseline:char-jaccard" in out and "gold-name KB" in out
    with pytest.raises(SystemExit):
        parser.parse_args(["report", "--help"])
    assert "--output" in capsys.readouterr().out
    args = parser.parse_args(["evaluate", "--model", "baseline:minilm-l6"])
    assert args.tasks == "all" and args.source == "local" and callable(args.func)


def test_missing_benchmarks_dir_is_a_clear_error(tmp_path, capsys):
    code = main(["evaluate", "--model", "baseline:char-jaccard", "--tasks", "bird", "--benchmarks-dir",
                 str(tmp_path / "missing"), "--output", str(tmp_path / "r.json"), "--no-progress"])  # fmt: skip
    assert code == 2 and "--benchmarks-dir" in capsys.readouterr().err


def test_unknown_task_is_a_clear_error(capsys):
    assert main(["evaluate", "--model", "baseline:char-jaccard", "--tasks", "birds"]) == 2
    assert "Unknown task" in capsys.readouterr().err


def test_ccl_options_on_the_command_line_are_parsed_and_checked(capsys):
    from phrasezoo.evaluation.commands import parse_key_values

    assert parse_key_values(["steps=25", "learning_rate=5e-6", "instances=all"]) == {
        "steps": 25,
        "learning_rate": 5e-6,
        "instances": "all",
    }
    assert parse_key_values([]) == {}
    assert main(["evaluate", "--model", "baseline:char-jaccard", "--tasks", "bird", "--ccl", "stepz=3"]) == 2
    assert "stepz" in capsys.readouterr().err
    assert main(["evaluate", "--model", "baseline:char-jaccard", "--tasks", "bird", "--ccl", "steps"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_output_names():
    assert results_file_name("baseline:minilm-l6") == "baseline-minilm-l6"
    assert results_file_name("outputs/my-model-mini/") == "my-model-mini"
    assert (
        results_file_name("baseline:sentence-transformers/all-MiniLM-L6-v2")
        == "baseline-sentence-transformers--all-MiniLM-L6-v2"
    )


@pytest.mark.slow
def test_end_to_end_minilm_on_bird(benchmarks_dir, tmp_path, capsys):
    out = tmp_path / "results" / "minilm.json"
    code = main(["evaluate", "--model", "baseline:minilm-l6", "--tasks", "bird", "--benchmarks-dir",
                 str(benchmarks_dir), "--output", str(out), "--no-progress"])  # fmt: skip
    assert code == 0
    doc = read_results(out)
    [entry] = doc["results"]
    assert doc["model"] == "baseline:minilm-l6" and doc["model_revision"]
    assert entry["task"] == "bird" and entry["n"] == 3345
    assert entry["value"] == pytest.approx(0.673, abs=0.01)
    assert "bird" in capsys.readouterr().out
    assert main(["report", str(out), "--output", str(tmp_path / "table.md")]) == 0
    table = (tmp_path / "table.md").read_text()
    assert "| baseline:minilm-l6 |" in table and "Phrase-BERT (paper)" in table
