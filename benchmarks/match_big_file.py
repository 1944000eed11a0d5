"""Bad input at scale: a right table of about 2 GB, with missing names and duplicate keys, joined by the CLI in
chunks, and every input row accounted for.

The right table (CSV, written once into the phrasezoo cache, seeded): ``invoice_id`` (every 50th row repeats the
previous row's id: duplicate keys), ``vendor`` (a seeded corruption of one of ``--left-rows`` real names of the
scale benchmark's left table, ``benchmarks/match_scale_data.py``; 30% of the cells empty) and ``notes`` (about
1,800 characters of free text, so that the file reaches its size with about a million rows). The left table holds
the real names. Two runs of ``phrasezoo match join --chunk-rows``:

* without ``--skip-missing``: the CLI must stop with an error that names the fix, and leave no output file;
* with ``--skip-missing``: every right row is written or reported (skipped for a missing name, or unmatched), the
  duplicate keys stay separate rows, and the peak memory (RSS of the CLI process, sampled) stays bounded.

The join uses ``--model tfidf:char`` (here the file's size is what is measured, not the matcher: the default
matcher joins about 40 rows/s on one core, so a million rows would take hours; the chunked path is the same).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/match_big_file.py --output results/matching/big-file.json \\
        --docs docs/matching-scale.md
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MISSING_SHARE = 0.30
DUPLICATE_EVERY = 50


def reference_names(n: int) -> list[str]:
    """The first ``n`` real names of the scale benchmark's left table (``benchmarks/match_scale.py --steps tables``)."""
    import pyarrow.parquet as pq

    from phrasezoo.resources import cache_dir

    scale = cache_dir() / "match-scale" / "size-1000000-seed-0" / "left.parquet"
    if not scale.exists():
        raise SystemExit(f"{scale} is missing: run `python benchmarks/match_scale.py --steps tables` first.")
    return pq.read_table(scale).column("name").to_pylist()[:n]


def build_tables(folder: Path, size_bytes: int, left_rows: int, seed: int) -> dict:
    """Write ``left.csv`` and ``right.csv`` (about ``size_bytes``) into ``folder`` unless they exist; the facts."""
    from match_scale_data import corrupt

    facts_path = folder / "tables.json"
    if facts_path.exists():
        return json.loads(facts_path.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    names = reference_names(left_rows)
    with open(folder / "left.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name"])
        writer.writerows([n] for n in names)
    rng = random.Random(seed)
    words = " ".join(names).split()
    notes = [" ".join(rng.choice(words) for _ in range(260))[:1800] for _ in range(997)]
    rows = missing = duplicates = 0
    tmp = folder / "right.csv.tmp"
    with open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["invoice_id", "vendor", "notes"])
        while handle.tell() < size_bytes:
            for _ in range(10_000):
                key = rows - 1 if rows % DUPLICATE_EVERY == DUPLICATE_EVERY - 1 else rows
                duplicates += key != rows
                vendor = "" if rng.random() < MISSING_SHARE else corrupt(rng.choice(names), rng)[0]
                missing += vendor == ""
                writer.writerow([f"INV-{key:08d}", vendor, notes[rows % len(notes)]])
                rows += 1
    tmp.replace(folder / "right.csv")
    facts = {"right_rows": rows, "right_bytes": (folder / "right.csv").stat().st_size, "missing_vendor": missing,
             "duplicate_keys": duplicates, "left_rows": len(names), "seed": seed}  # fmt: skip
    facts_path.write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def run_cli(arguments: list[str]) -> dict:
    """Run ``phrasezoo match join`` with ``arguments``; exit code, stderr tail, seconds and peak RSS of its tree."""
    import psutil

    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "phrasezoo.cli", "match", "join", *arguments],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    peak, done = 0, threading.Event()

    def sample() -> None:
        nonlocal peak
        watched = psutil.Process(process.pid)
        while not done.wait(0.2):
            try:
                tree = [watched, *watched.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                continue

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, stderr = process.communicate()
    done.set()
    thread.join()
    return {"exit_code": process.returncode, "stderr": stderr.strip().splitlines(),
            "seconds": round(time.perf_counter() - start, 1), "peak_rss_gib": round(peak / 2**30, 3)}  # fmt: skip


def count_output(path: Path) -> tuple[int, int]:
    """``(rows, distinct right_index values)`` of the join's CSV output, read in chunks."""
    import pandas as pd

    rows, seen = 0, set()
    for chunk in pd.read_csv(path, usecols=["right_index"], chunksize=500_000):
        rows += len(chunk)
        seen.update(chunk["right_index"].tolist())
    return rows, len(seen)


def reported(stderr: list[str], what: str) -> int:
    """The row count of the CLI's stderr line that mentions ``what`` (">> skipped 12 right row(s) ...", ">> 3 row(s)
    had no match ..."); 0 when there is none."""
    for line in stderr:
        found = re.match(r">> (?:skipped )?(\d+) ", line)
        if what in line and found:
            return int(found.group(1))
    return 0


def markdown(results: dict) -> str:
    facts, strict, lenient = results["tables"], results["without_skip_missing"], results["with_skip_missing"]
    gib = facts["right_bytes"] / 2**30
    accounted = lenient["rows_written"] + lenient["rows_skipped"] + lenient["rows_unmatched"]
    return "\n".join([
        "| right table | rows | missing names | duplicate keys | run | exit | rows written | skipped | unmatched | "
        "peak RSS (GiB) | minutes |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {gib:.2f} GiB CSV | {facts['right_rows']:,} | {facts['missing_vendor']:,} | {facts['duplicate_keys']:,} | "
        f"without --skip-missing | {strict['exit_code']} | {'none (no file)' if not strict['output_exists'] else '?'} "
        f"| | | {strict['peak_rss_gib']:.2f} | {strict['seconds'] / 60:.1f} |",
        f"| | | | | --skip-missing | {lenient['exit_code']} | {lenient['rows_written']:,} | "
        f"{lenient['rows_skipped']:,} | {lenient['rows_unmatched']:,} | {lenient['peak_rss_gib']:.2f} | "
        f"{lenient['seconds'] / 60:.1f} |",
        "",
        f"- Every right row accounted for: {accounted:,} of {facts['right_rows']:,} "
        f"({'yes' if accounted == facts['right_rows'] else 'NO'}); duplicate keys stay separate rows "
        f"({lenient['distinct_right_index']:,} distinct right_index values for {lenient['rows_written']:,} rows).",
        f"- Without --skip-missing the CLI stops with: \"{strict['error']}\"",
        f"- `--model tfidf:char`, `--chunk-rows {results['chunk_rows']:,}`, a {facts['left_rows']:,}-name left table;"
        f" {results['date']}, {results['machine']}.",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-gib", type=float, default=2.0, help="size of the right CSV (default 2 GiB)")
    parser.add_argument("--left-rows", type=int, default=5000, help="real names in the left table (default 5000)")
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=None, help="tables and outputs (default: the phrasezoo cache)")
    parser.add_argument("--output", help="results JSON (e.g. results/matching/big-file.json)")
    parser.add_argument("--docs", help="markdown page whose match-big-file block gets the table")
    args = parser.parse_args(argv)
    if args.workdir is None:
        from phrasezoo.resources import cache_dir

        args.workdir = str(cache_dir() / "match-big-file")
    folder = Path(args.workdir) / f"size-{args.size_gib:g}gib-seed-{args.seed}"
    facts = build_tables(folder, int(args.size_gib * 2**30), args.left_rows, args.seed)
    print(f">> tables: {json.dumps(facts)}", flush=True)
    out = folder / "joined.csv"
    common = ["--left", str(folder / "left.csv"), "--right", str(folder / "right.csv"), "--left-column", "name",
              "--right-column", "vendor", "--model", "tfidf:char", "--chunk-rows", str(args.chunk_rows),
              "--no-progress", "--output", str(out)]  # fmt: skip
    out.unlink(missing_ok=True)
    strict = run_cli(common)
    strict.update(output_exists=out.exists(), error=next((line for line in strict["stderr"] if "rror" in line), ""))
    print(f">> without --skip-missing: {json.dumps(strict)}", flush=True)
    lenient = run_cli([*common, "--skip-missing"])
    written, distinct = count_output(out) if out.exists() else (0, 0)
    lenient.update(rows_written=written, distinct_right_index=distinct,
                   rows_skipped=reported(lenient["stderr"], "skipped"),
                   rows_unmatched=reported(lenient["stderr"], "had no match"))  # fmt: skip
    for run in (strict, lenient):
        run["stderr"] = run["stderr"][-6:]
    print(f">> with --skip-missing: {json.dumps(lenient)}", flush=True)
    results = {
        "benchmark": "match_big_file",
        "tables": facts,
        "chunk_rows": args.chunk_rows,
        "without_skip_missing": strict,
        "with_skip_missing": lenient,
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other work",
        "command": "python benchmarks/match_big_file.py " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(results, indent=1) + "\n")
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, markdown(results), block="match-big-file")
    print(markdown(results))


if __name__ == "__main__":
    main()
