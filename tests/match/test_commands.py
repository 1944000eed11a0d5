"""The match CLI over CSV files, run as users run it (a fresh process)."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "phrasezoo.match", *args], capture_output=True, text=True, timeout=300)


def test_join_csv_files(tmp_path):
    left, right, output = tmp_path / "left.csv", tmp_path / "right.csv", tmp_path / "out" / "joined.csv"
    pd.DataFrame({"id": [1, 2, 3], "title": ["apple pie", "banana bread", "The New York Times"]}).to_csv(
        left, index=False
    )
    pd.DataFrame({"vendor": ["NY Times", "banana bred"], "amount": [3, 4]}).to_csv(right, index=False)
    done = run_cli("join", "--left", str(left), "--right", str(right), "--left-column", "title",
                   "--right-column", "vendor", "--top-k", "2", "--output", str(output), "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    joined = pd.read_csv(output)
    assert joined[joined["rank"] == 1]["left"].tolist() == ["The New York Times", "banana bread"]
    assert len(joined) == 4


def test_link_csv_files_with_rapidfuzz(tmp_path):
    mentions, kb, output = tmp_path / "m.csv", tmp_path / "kb.tsv", tmp_path / "links.jsonl"
    pd.DataFrame({"mention": ["Washington Post newspaper"]}).to_csv(mentions, index=False)
    pd.DataFrame({"qid": ["Q1", "Q2"], "name": ["The Washington Post", "apple pie"]}).to_csv(kb, sep="\t", index=False)
    done = run_cli("link", "--mentions", str(mentions), "--kb", str(kb), "--kb-id-column", "qid",
                   "--model", "rapidfuzz:token_set_ratio", "--output", str(output))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert pd.read_json(output, lines=True)["entity_id"].tolist() == ["Q1"]


def test_missing_column_is_a_clear_error(tmp_path):
    left = tmp_path / "left.csv"
    pd.DataFrame({"a": ["x"], "b": ["y"]}).to_csv(left, index=False)
    done = run_cli("join", "--left", str(left), "--right", str(left), "--left-column", "title", "--right-column", "a",
                   "--output", "-", "--model", "rapidfuzz:ratio")  # fmt: skip
    assert done.returncode == 2
    assert "no column 'title'" in done.stderr and "a, b" in done.stderr


def test_phrasezoo_match_subcommand(tmp_path):
    """`phrasezoo match ...`: the command comes to the main CLI through the phrasezoo.commands entry point."""
    from phrasezoo.cli import main as cli_main

    left, right, output = tmp_path / "left.csv", tmp_path / "right.csv", tmp_path / "joined.csv"
    pd.DataFrame({"title": ["apple pie", "banana bread"]}).to_csv(left, index=False)
    pd.DataFrame({"title": ["banana bred"]}).to_csv(right, index=False)
    args = [
        "match",
        "join",
        "--left",
        str(left),
        "--right",
        str(right),
        "--model",
        "rapidfuzz:ratio",
        "-o",
        str(output),
    ]
    assert cli_main(args) == 0
    assert pd.read_csv(output)["left"].tolist() == ["banana bread"]


def test_a_csv_in_another_encoding_is_a_clear_error_and_encoding_reads_it(tmp_path):
    left, right, output = tmp_path / "left.csv", tmp_path / "right.csv", tmp_path / "out.csv"
    left.write_bytes("title\nCafé de Flore\nZürich Hauptbahnhof\n".encode("latin-1"))
    right.write_text("title\nCafe de Flore\n", encoding="utf-8")
    done = run_cli("join", "--left", str(left), "--right", str(right), "--model", "rapidfuzz:ratio", "-o", str(output))
    assert done.returncode == 2
    assert "not valid utf-8" in done.stderr and "--encoding latin-1" in done.stderr
    done = run_cli("join", "--left", str(left), "--right", str(right), "--model", "rapidfuzz:ratio", "-o", str(output),
                   "--encoding", "latin-1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(output)["left"].tolist() == ["Café de Flore"]


def test_missing_cells_are_skipped_and_reported(tmp_path):
    left, right, output = tmp_path / "left.csv", tmp_path / "right.csv", tmp_path / "out.csv"
    pd.DataFrame({"title": ["apple pie", "banana bread"]}).to_csv(left, index=False)
    right.write_text('title\nbanana bred\n""\napple\n', encoding="utf-8")
    done = run_cli("join", "--left", str(left), "--right", str(right), "--model", "rapidfuzz:ratio", "-o", str(output))
    assert done.returncode == 2 and "missing or empty" in done.stderr and "rows 1" in done.stderr
    done = run_cli("join", "--left", str(left), "--right", str(right), "--model", "rapidfuzz:ratio", "-o", str(output),
                   "--skip-missing", "--threshold", "0.9")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "skipped 1 right row(s)" in done.stderr and "1 row(s) had no match" in done.stderr
    assert pd.read_csv(output)["right"].tolist() == ["banana bred"]


def test_fit_once_then_apply_to_new_names(tmp_path):
    reference, queries = tmp_path / "names.csv", tmp_path / "new.csv"
    folder, output = tmp_path / "names.matcher", tmp_path / "matched.csv"
    pd.DataFrame({"qid": ["Q1", "Q2", "Q3"], "name": ["The New York Times", "Washington Post", "apple pie"]}).to_csv(
        reference, index=False
    )
    pd.DataFrame({"name": ["NY Times", "", "apple pies"]}).to_csv(queries, index=False)
    done = run_cli("fit", "--reference", str(reference), "--column", "name", "--id-column", "qid",
                   "--model", "tfidf:char", "-o", str(folder))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (folder / "matcher.json").exists() and (folder / "matcher.safetensors").exists()
    done = run_cli("apply", "--matcher", str(folder), "--queries", str(queries), "--column", "name",
                   "--skip-missing", "-o", str(output))  # fmt: skip
    assert done.returncode == 0, done.stderr
    matched = pd.read_csv(output)
    assert matched["left_index"].tolist() == ["Q1", "Q3"] and "skipped 1 queries row(s)" in done.stderr
    done = run_cli("apply", "--matcher", str(tmp_path), "--queries", str(queries), "-o", str(output))
    assert done.returncode == 2 and "no saved matcher" in done.stderr
