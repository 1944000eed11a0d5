"""Speed of the character channel's top-k search, the step a big join waits for: ``sparse_dot_topn`` (the matcher's
path since 2026-11-29) against scipy's full sparse product then a partial sort (the path before), in one run.

The table is the left table of the 1M x 1M scale benchmark (``benchmarks/match_scale.py``, or the first ``--rows`` of
it) and the queries a seeded sample of its right rows, both through the matcher's char TF-IDF channel. At a million
names a query shares an n-gram with about half the table, so the full product is about half a million entries per
query; ``sparse_dot_topn`` keeps only the best ``k + margin`` of each row as it multiplies, in C++ threads. Both
give the same scores, and the same ids except where two rows tie at the k-th place (the former partial sort kept
either; the shipped path keeps the lower row id): checked here, query by query. The paths alternate, ``--repeats`` times, median reported.

    .venv/bin/python benchmarks/speed_char_topk.py --rows 125000 1000000 --output results/speed/speed-char-topk.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def scipy_top_k(queries, reference_t, k: int, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """The former path: the full product of a chunk of queries with the table, then each row's best k by a partial
    sort. The same scores as :func:`phrasezoo.match.features.lexical.sparse_top_k`; where two rows tie at the k-th place the
    partial sort keeps either, the shipped path the lower row id."""
    n = queries.shape[0]
    scores = np.full((n, k), -np.inf, dtype=np.float32)
    ids = np.full((n, k), -1, dtype=np.int64)
    for start in range(0, n, chunk):
        block = (queries[start : start + chunk] @ reference_t).tocsr()
        for row in range(block.shape[0]):
            lo, hi = block.indptr[row], block.indptr[row + 1]
            values, columns = block.data[lo:hi], block.indices[lo:hi]
            take = min(k, hi - lo)
            if take == 0:
                continue
            top = np.argpartition(-values, take - 1)[:take] if take < hi - lo else np.arange(hi - lo)
            order = top[np.lexsort((columns[top], -values[top]))]
            scores[start + row, :take] = values[order]
            ids[start + row, :take] = columns[order]
    return scores, ids


def agreement(got: tuple[np.ndarray, np.ndarray], former: tuple[np.ndarray, np.ndarray]) -> dict:
    """Whether two top-k answers agree: the same scores, and the same ids except where rows tie at the k-th place."""
    scores, ids = got
    other = (ids != former[1]).any(axis=1)
    kth = scores[:, -1:]
    above = np.where(scores > kth, ids, -2)  # the ids strictly above the k-th score: no tie can swap them
    return {"same_scores": bool(np.array_equal(scores, former[0])), "queries_with_other_ids": int(other.sum()),
            "other_ids_not_at_a_tie": int((np.sort(above, 1) != np.sort(np.where(former[0] > kth, former[1], -2), 1))
                                          .any(axis=1).sum())}  # fmt: skip


def measure(left: list[str], queries: list[str], k: int, threads: list[int], repeats: int) -> dict:
    """Seconds per query of each path on one table, and whether they agree."""
    from phrasezoo.match.features.lexical import TfidfChannel, sparse_top_k

    channel = TfidfChannel("char").fit(left)
    reference = channel.transform(left)
    reference_t = reference.T.tocsr()
    q = channel.transform(queries)
    paths = {"scipy full product (before)": lambda: scipy_top_k(q, reference_t, k)}
    for t in threads:
        paths[f"sparse_dot_topn, {t} thread{'s' if t > 1 else ''}"] = (
            lambda t=t: sparse_top_k(q, reference, k, reference_t=reference_t, threads=t))  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in paths}
    answers = {}
    for _ in range(repeats):
        for name, run in paths.items():
            start = time.perf_counter()
            answers[name] = run()
            times[name].append(time.perf_counter() - start)
    base = "scipy full product (before)"
    rows = {name: {"ms_per_query": 1000 * statistics.median(t) / len(queries)} for name, t in times.items()}
    for name in rows:
        rows[name]["speedup"] = rows[base]["ms_per_query"] / rows[name]["ms_per_query"]
        rows[name].update(agreement(answers[name], answers[base]))
    return {"rows": len(left), "queries": len(queries), "k": k, "paths": rows,
            "mean_shared_rows_per_query": float(np.diff((q @ reference_t).tocsr().indptr).mean())}  # fmt: skip


def render(results: dict) -> str:
    lines = ["| table rows | path | ms per query | speed-up | same scores | queries with other ids (at a tie) |",
             "|---:|---|---:|---:|---|---:|"]  # fmt: skip
    for table in results["tables"]:
        for name, row in table["paths"].items():
            same = "yes" if row["same_scores"] else "**no**"
            ties = f"{row['queries_with_other_ids']} ({row['queries_with_other_ids'] - row['other_ids_not_at_a_tie']})"
            lines.append(f"| {table['rows']:,} | {name} | {row['ms_per_query']:.2f} | {row['speedup']:.2f}x | {same} | "
                         f"{ties} |")  # fmt: skip
    first = results["tables"][0]
    lines += ["", f"{first['queries']:,} seeded right rows of the scale benchmark per table, top {first['k']} (the "
              f"matcher's 10 + 1), median of {results['repeats']} alternating runs; {results['machine']}. From "
              f"`results/speed/speed-char-topk.json` (`{results['command']}`, {results['date']})."]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[125_000, 1_000_000], help="left rows per table")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=11)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--benchmarks", default=str(HERE.parent.parent / "shared" / "benchmarks"))
    parser.add_argument("--output", help="results JSON")
    parser.add_argument("--docs", help="markdown page whose speed-char-topk block gets the table")
    args = parser.parse_args(argv)
    from match_scale import load_tables, save_json, workdir

    from phrasezoo.resources import cache_dir

    folder = workdir(cache_dir() / "match-scale", 1_000_000, 0)
    if not (folder / "left.parquet").exists():
        parser.error(f"no scale tables in {folder}: run `python benchmarks/match_scale.py --steps tables` first")
    tables = []
    for rows in args.rows:
        left, right, _ = load_tables(folder, None if rows >= 1_000_000 else rows)
        picks = np.random.default_rng(0).choice(len(right), size=min(args.queries, len(right)), replace=False)
        tables.append(measure(left, [right[i] for i in picks], args.k, args.threads, args.repeats))
        print(json.dumps(tables[-1]), flush=True)
    results = {"benchmark": "speed_char_topk", "date": dt.date.today().isoformat(), "repeats": args.repeats,
               "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores",
               "command": "python benchmarks/speed_char_topk.py " + " ".join(sys.argv[1:] if argv is None else argv),
               "tables": tables}  # fmt: skip
    if args.output:
        save_json(Path(args.output), results)
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, render(results), block="speed-char-topk")
    print(render(results))


if __name__ == "__main__":
    main()
