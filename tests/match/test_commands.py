"""The match CLI over CSV files, run as users run it (a fresh process)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from phrasezoo.match import calibrate, join, read_calibration
from phrasezoo.match.commands import main
from tests.match.conftest import GOLD, LEFT, RIGHT


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


# ------------------------------------------------------------------ labels: --calibration, the estimate, --plot
# (in this process, with the default matcher given a hand-made decision: tests/match/conftest.py)


@pytest.fixture
def labelled(tmp_path, decision_scorer) -> dict[str, Path]:
    """The gold tables as files, and a calibration of the default matcher's answers on them."""
    files = {name: tmp_path / f"{name}.csv" for name in ("left", "right", "names")}
    pd.DataFrame({"qid": [f"Q{i}" for i in range(len(LEFT))], "name": LEFT}).to_csv(files["left"], index=False)
    pd.DataFrame({"vendor": RIGHT}).to_csv(files["right"], index=False)
    pd.DataFrame({"name": LEFT + RIGHT}).to_csv(files["names"], index=False)
    result = join(LEFT, RIGHT, model=decision_scorer)
    labels = result.assign(label=[GOLD[r] == a for r, a in zip(result["right"], result["left"])])
    files["calibration"] = calibrate(LEFT, RIGHT, labels, model=decision_scorer).save(tmp_path / "calibration.json")
    return files


def in_process(capsys, *args: str) -> tuple[int, str]:
    status = main([*args, "--no-progress"])
    return status, capsys.readouterr().err


def test_join_streams_with_the_calibrations_threshold_and_plots_the_whole_files_estimate(
    labelled, tmp_path, decision_cli, capsys
):
    join_args = ("join", "--left", str(labelled["left"]), "--right", str(labelled["right"]), "--left-column", "name",
                 "--right-column", "vendor", "--threshold", "auto", "--calibration", str(labelled["calibration"]))  # fmt: skip
    status, err = in_process(capsys, *join_args, "--chunk-rows", "3", "--plot", str(tmp_path / "e.png"), "-o",
                             str(tmp_path / "chunked.csv"))  # fmt: skip
    assert status == 0, err
    cut = read_calibration(labelled["calibration"]).stored_cut(0.9)
    assert f">> threshold {cut:.4f} (auto: target precision 0.90 on the calibration file's labelled join)" in err
    assert re.search(r">> estimate: threshold \d\.\d{3} keeps \d+ of 10 queries", err)  # the file's, not a chunk's
    assert (tmp_path / "e.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "wrote the estimate's plot" in err
    status, err = in_process(capsys, *join_args, "-o", str(tmp_path / "whole.csv"))
    assert status == 0 and (tmp_path / "whole.csv").read_text() == (tmp_path / "chunked.csv").read_text()


def test_link_apply_and_dedupe_take_the_calibration_too(labelled, tmp_path, decision_cli, capsys):
    calibration = ("--threshold", "auto", "--calibration", str(labelled["calibration"]))
    status, err = in_process(capsys, "link", "--mentions", str(labelled["right"]), "--kb", str(labelled["left"]),
                             "--kb-id-column", "qid", *calibration, "-o", str(tmp_path / "links.csv"))  # fmt: skip
    assert status == 0 and "on the calibration file's labelled join" in err and ">> estimate:" in err, err
    status, err = in_process(capsys, "fit", "--reference", str(labelled["left"]), "--column", "name", "-o",
                             str(tmp_path / "m"))  # fmt: skip
    status, err = in_process(capsys, "apply", "--matcher", str(tmp_path / "m"), "--queries", str(labelled["right"]),
                             *calibration, "-o", str(tmp_path / "applied.csv"))  # fmt: skip
    assert status == 0 and "on the calibration file's labelled join" in err, err
    status, err = in_process(capsys, "dedupe", "--input", str(labelled["names"]), *calibration, "--plot",
                             str(tmp_path / "d.png"), "-o", str(tmp_path / "clusters.csv"))  # fmt: skip
    assert status == 0 and re.search(r">> estimate: threshold \d\.\d{3} keeps \d+ of \d+ pairs", err), err
    assert (tmp_path / "d.png").is_file()


def test_no_honour_labels_lets_the_threshold_alone_decide(labelled, tmp_path, decision_cli, capsys):
    """``--no-honour-labels``: a join keeps exactly the answers at or above the file's threshold (here the labels
    agree with the golds, so only the answers labelled right below it change), dedupe likewise; alone it is a note."""
    base = ("join", "--left", str(labelled["left"]), "--right", str(labelled["right"]), "--left-column", "name",
            "--right-column", "vendor", "--threshold", "auto", "--calibration", str(labelled["calibration"]))  # fmt: skip
    status, err = in_process(capsys, *base, "--no-honour-labels", "-o", str(tmp_path / "alone.csv"))
    assert status == 0, err
    alone = pd.read_csv(tmp_path / "alone.csv")
    cut = read_calibration(labelled["calibration"]).stored_cut(0.9)
    assert (alone["score"] >= cut - 1e-4).all()
    status, err = in_process(capsys, *base, "-o", str(tmp_path / "honoured.csv"))
    honoured = pd.read_csv(tmp_path / "honoured.csv")
    assert status == 0 and set(alone["right"]) <= set(honoured["right"])
    status, err = in_process(capsys, "dedupe", "--input", str(labelled["names"]), "--threshold", "auto",
                             "--calibration", str(labelled["calibration"]), "--no-honour-labels", "-o",
                             str(tmp_path / "clusters.csv"))  # fmt: skip
    assert status == 0, err
    status, err = in_process(capsys, "dedupe", "--input", str(labelled["names"]), "--no-honour-labels", "-o",
                             str(tmp_path / "plain.csv"))  # fmt: skip
    assert status == 0 and "--no-honour-labels does nothing without --calibration" in err


def test_calibration_and_label_errors_say_what_to_do(labelled, tmp_path, decision_cli, capsys):
    join_args = ("join", "--left", str(labelled["left"]), "--right", str(labelled["right"]), "--left-column", "name",
                 "--right-column", "vendor", "-o", str(tmp_path / "out.csv"))  # fmt: skip
    other = tmp_path / "other.json"
    other.write_text(labelled["calibration"].read_text().replace('"format_version": 1', '"format_version": 2'))
    for extra, message in (
        (("--calibration", str(other)), "format_version 2; this phrasezoo reads 1. Label again"),
        (("--model", "rapidfuzz:ratio", "--calibration", str(labelled["calibration"])), "needs the default matcher"),
        (("--threshold", "auto", "--target-precision", "0.3", "--calibration", str(labelled["calibration"])),
         "target precisions 0.5 to 0.99, not 0.3"),
    ):  # fmt: skip
        status, err = in_process(capsys, *join_args, *extra)
        assert status == 2 and message in err, err
    one = tmp_path / "one.csv"
    pd.DataFrame({"name": ["apple pie"]}).to_csv(one, index=False)
    label_args = ("label", "--right", str(labelled["right"]), "-o", str(tmp_path / "c.json"))
    for extra, message in ((("--left", str(one)), "1 distinct row(s); calibration needs at least two distinct"),
                           (("--left", str(labelled["names"]), "--model", "rapidfuzz:ratio"), "has no decision"),
                           ((), "needs --left and --right (the tables of a join), --kb and --mentions")):  # fmt: skip
        status, err = in_process(capsys, *label_args, *extra)
        assert status == 2 and message in err, err
    with pytest.raises(SystemExit):
        main(["label", "--help"])
    assert "run the same command again to resume" in capsys.readouterr().out
