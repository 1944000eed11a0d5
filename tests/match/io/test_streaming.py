"""``phrasezoo match`` on tables read in chunks: the same answers as one pass, every row accounted for, an
interrupted run loses nothing (the match CLI's main is called in this process: the model loads once)."""

from __future__ import annotations

import random
import re

import numpy as np
import pandas as pd
import pytest

from phrasezoo.match.commands import main

NAMES = ["International Business Machines", "General Electric Company", "World Health Organization",
         "New York Times", "Massachusetts Institute of Technology", "Deutsche Bank", "Bank of America",
         "Royal Dutch Shell", "United Nations Children's Fund", "Federal Bureau of Investigation"]  # fmt: skip


def noisy(name: str, rng: random.Random) -> str:
    """A typo, a dropped word or a case change of ``name``."""
    words = name.split()
    kind = rng.randrange(3)
    if kind == 0 and len(name) > 4:
        i = rng.randrange(1, len(name) - 1)
        return name[:i] + name[i + 1 :]
    if kind == 1 and len(words) > 1:
        words.pop(rng.randrange(len(words)))
        return " ".join(words)
    return name.lower()


@pytest.fixture
def tables(tmp_path):
    """A left table, and a right table of 300 rows: 30% missing names, keys repeated, other columns kept."""
    rng = random.Random(0)
    left = tmp_path / "left.csv"
    pd.DataFrame({"id": range(len(NAMES)), "name": NAMES}).to_csv(left, index=False)
    names = [None if rng.random() < 0.3 else noisy(rng.choice(NAMES), rng) for _ in range(300)]
    right = tmp_path / "right.csv"
    pd.DataFrame({"key": [i // 3 for i in range(300)], "vendor": names}).to_csv(right, index=False)
    return left, right, names


def join(left, right, output, *extra: str) -> int:
    return main(["join", "--left", str(left), "--right", str(right), "--left-column", "name", "--right-column",
                 "vendor", "--skip-missing", "--no-progress", "--output", str(output), *extra])  # fmt: skip


@pytest.mark.parametrize("model", ["tfidf:char", "hybrid"])
def test_chunks_give_the_answers_of_one_pass_and_account_for_every_row(tables, tmp_path, model, capsys):
    left, right, names = tables
    whole, chunked = tmp_path / "whole.csv", tmp_path / "chunked.csv"
    assert join(left, right, whole, "--model", model, "--threshold", "0.5", "--chunk-rows", "1000000") == 0
    assert join(left, right, chunked, "--model", model, "--threshold", "0.5", "--chunk-rows", "37") == 0
    a, b = pd.read_csv(whole), pd.read_csv(chunked)
    if model == "hybrid":  # the decision reads claims over the rows searched together: each chunk's, here
        a = each_chunk_alone(names, 37, 0.5)
        assert len(a) > 100
    assert a[["right_index", "left_index"]].equals(b[["right_index", "left_index"]])
    assert np.allclose(a["score"], b["score"], atol=1e-5)
    report = capsys.readouterr().err.split(f">> wrote {len(b)} rows to {chunked}")[-1]  # the chunked run's report
    assert f"({len(names)} rows read)" in report
    skipped = [i for i, name in enumerate(names) if name is None]
    assert f">> skipped {len(skipped)} right row(s) with missing values: {skipped[:10]}" in report
    unmatched = len(names) - len(skipped) - b["right_index"].nunique()
    assert unmatched == 0 or f">> {unmatched} row(s) had no match" in report


def each_chunk_alone(names: list[str | None], rows: int, threshold: float) -> pd.DataFrame:
    """What the default matcher answers when each ``rows``-row chunk of the right table is searched on its own (its
    decision reads claims over the queries searched together, round 11): right_index, left_index, score."""
    from phrasezoo.match import Matcher

    matcher = Matcher(progress=False).fit(NAMES)
    out = []
    for start in range(0, len(names), rows):
        idx = [i for i in range(start, min(start + rows, len(names))) if names[i] is not None]
        scores, ids = matcher.search([names[i] for i in idx], 1)
        out += [(i, int(j), float(v)) for i, j, v in zip(idx, ids[:, 0], scores[:, 0]) if v >= threshold]
    return pd.DataFrame(out, columns=["right_index", "left_index", "score"])


def test_a_shared_answer_loses_confidence_only_where_its_rows_are_searched_together(tables, tmp_path):
    """Claims (round 11): two right rows on one left row, searched in one pass, make the weaker one less sure; in
    chunks that keep them apart, each reads no claim."""
    left, right, _ = tables
    frame = pd.read_csv(right).dropna()
    twin = frame.iloc[[0, 0]].assign(vendor=[frame.iloc[0]["vendor"], frame.iloc[0]["vendor"] + " x"])
    twins = tmp_path / "twins.csv"
    twin.to_csv(twins, index=False)
    together, apart = tmp_path / "together.csv", tmp_path / "apart.csv"
    assert join(left, twins, together, "--model", "hybrid", "--threshold", "0", "--chunk-rows", "2") == 0
    assert join(left, twins, apart, "--model", "hybrid", "--threshold", "0", "--chunk-rows", "1") == 0
    a, b = pd.read_csv(together), pd.read_csv(apart)
    assert a["left_index"].nunique() == 1 and a["left_index"].tolist() == b["left_index"].tolist()
    assert a["score"].iloc[1] < b["score"].iloc[1]  # the weaker claimant is less sure when the better one is there


def test_parquet_and_json_lines_stream_too(tables, tmp_path):
    left, right, names = tables
    frame = pd.read_csv(right)
    queries = tmp_path / "right.parquet"
    frame.to_parquet(queries, index=False)
    out_parquet, out_jsonl = tmp_path / "out.parquet", tmp_path / "out.jsonl"
    common = ("--model", "tfidf:char", "--keep-unmatched", "--chunk-rows", "50")
    assert join(left, queries, out_parquet, *common) == 0
    assert join(left, right, out_jsonl, *common) == 0
    a, b = pd.read_parquet(out_parquet), pd.read_json(out_jsonl, lines=True)
    present = [i for i, name in enumerate(names) if name is not None]
    assert a["right_index"].tolist() == present == b["right_index"].tolist()  # one row each with --keep-unmatched
    assert a["left"].tolist() == b["left"].tolist()


def test_a_failing_chunk_leaves_the_previous_output_and_no_partial_file(tables, tmp_path, capsys):
    left, right, _ = tables
    output = tmp_path / "joined.csv"
    output.write_text("previous result\n")
    code = main(["join", "--left", str(left), "--right", str(right), "--left-column", "name", "--right-column",
                 "vendor", "--model", "tfidf:char", "--chunk-rows", "40", "--output", str(output)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "missing or empty" in err  # no --skip-missing: the first gap fails
    assert "pass --skip-missing" in err and "on_missing" not in err  # the fix as the command line spells it
    assert re.search(r"error: Rows \d+-\d+ of the file: ", err)  # where in the file: the chunk that failed
    assert output.read_text() == "previous result\n"
    assert not list(tmp_path.glob(".joined.csv.*"))


def test_a_header_only_table_gives_an_empty_result(tables, tmp_path):
    left, _, _ = tables
    empty, output = tmp_path / "empty.csv", tmp_path / "out.csv"
    empty.write_text("key,vendor\n")
    assert join(left, empty, output, "--model", "tfidf:char") == 0
    assert len(pd.read_csv(output)) == 0


def test_chunk_rows_must_be_positive(tables, tmp_path, capsys):
    left, right, _ = tables
    assert join(left, right, tmp_path / "o.csv", "--chunk-rows", "0") == 2
    assert "--chunk-rows must be a positive whole number" in capsys.readouterr().err


def test_parquet_output_whose_first_chunk_has_no_match_keeps_every_row(tables, tmp_path):
    left, right, names = tables
    frame = pd.read_csv(right)
    frame.loc[:39, "vendor"] = "zzzz qqqq"  # the first chunk matches nothing above the threshold
    queries, output = tmp_path / "right.csv", tmp_path / "out.parquet"
    frame.to_csv(queries, index=False)
    assert join(left, queries, output, "--model", "tfidf:char", "--threshold", "0.5", "--keep-unmatched",
                "--chunk-rows", "40") == 0  # fmt: skip
    result = pd.read_parquet(output)
    present = [i for i, known in enumerate(frame["vendor"].notna()) if known]
    assert result["right_index"].tolist() == present
    assert result["left"].iloc[:40].isna().all() and result["left"].iloc[40:].notna().any()


def test_standard_output_gets_one_header_when_the_first_chunk_writes_nothing(tables, tmp_path, capsys):
    left, right, _ = tables
    frame = pd.read_csv(right)
    frame.loc[:39, "vendor"] = None  # the first chunk is all skipped
    queries = tmp_path / "right.csv"
    frame.to_csv(queries, index=False)
    assert join(left, queries, "-", "--model", "tfidf:char", "--chunk-rows", "40") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("right_index,") and sum(line.startswith("right_index,") for line in lines) == 1
    assert len(lines) - 1 == frame["vendor"].notna().sum()


def test_a_chunks_missing_values_stay_a_typed_error_with_the_rows_place():
    from phrasezoo.match.io.inputs import MissingValuesError, as_column
    from phrasezoo.match.io.streaming import stream_matches

    chunks = iter([pd.DataFrame({"vendor": ["a", "b"]}), pd.DataFrame({"vendor": ["c", None]})])
    with pytest.raises(MissingValuesError) as caught:
        stream_matches(chunks, lambda chunk: as_column(chunk, "vendor", what="right") and chunk, "-")
    assert str(caught.value).startswith("Rows 2-3 of the file: The right has 1 missing")
    assert caught.value.describe(fix="pass --skip-missing").endswith("or pass --skip-missing.")
