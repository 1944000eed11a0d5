"""benchmarks/match_big_file.py: the seeded big right table (missing names, duplicate keys), the parsing of the CLI's
report and the docs table (the CLI's chunked join itself is tested in tests/match/test_streaming.py)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import match_big_file  # noqa: E402


def test_the_table_has_its_missing_names_and_duplicate_keys(tmp_path, monkeypatch):
    names = [f"Company number {i}" for i in range(50)]
    monkeypatch.setattr(match_big_file, "reference_names", lambda n: names[:n])
    facts = match_big_file.build_tables(tmp_path, 200_000, 40, seed=0)
    with open(tmp_path / "right.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == facts["right_rows"] and facts["right_bytes"] >= 200_000
    assert sum(r["vendor"] == "" for r in rows) == facts["missing_vendor"]
    assert 0.25 < facts["missing_vendor"] / len(rows) < 0.35
    keys = [r["invoice_id"] for r in rows]
    assert len(keys) - len(set(keys)) == facts["duplicate_keys"] > 0
    assert len((tmp_path / "left.csv").read_text().splitlines()) == 41  # header + 40 names
    again = match_big_file.build_tables(tmp_path, 1, 40, seed=0)  # written once: the facts are read back
    assert again == facts


def test_the_report_lines_are_read_and_the_rows_add_up():
    stderr = [">> wrote 7025 rows to out.csv (10000 rows read)",
              ">> skipped 2975 right row(s) with missing values: [4, 5]",
              ">> 3 row(s) had no match above the threshold (not written; --keep-unmatched writes them)"]  # fmt: skip
    assert match_big_file.reported(stderr, "skipped") == 2975
    assert match_big_file.reported(stderr, "had no match") == 3
    assert match_big_file.reported(stderr[:1], "skipped") == 0
    results = {
        "tables": {"right_rows": 10_000, "right_bytes": 2**31, "missing_vendor": 2975, "duplicate_keys": 200,
                   "left_rows": 500},
        "without_skip_missing": {"exit_code": 2, "output_exists": False, "error": "error: ... --skip-missing",
                                 "peak_rss_gib": 0.5, "seconds": 12.0},
        "with_skip_missing": {"exit_code": 0, "rows_written": 7022, "rows_skipped": 2975, "rows_unmatched": 3,
                              "distinct_right_index": 7022, "peak_rss_gib": 0.6, "seconds": 60.0},
        "chunk_rows": 100_000, "date": "2026-11-28", "machine": "x86_64, 2 cores",
    }  # fmt: skip
    table = match_big_file.markdown(results)
    assert "2.00 GiB CSV" in table and "10,000 of 10,000 (yes)" in table and "none (no file)" in table
    results["with_skip_missing"]["rows_unmatched"] = 0
    assert "(NO)" in match_big_file.markdown(results)
