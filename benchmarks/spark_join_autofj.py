"""The default matcher on Spark against one machine, on every AutoFJ DEV table (issue 47, item 2).

Per table, the default matcher is fitted once on the left table; then one machine (``phrasezoo.match.join``) and
Spark (``phrasezoo.match.spark.join_spark``, ``local[2]``, the right rows in 2 partitions, the matcher saved once and
loaded by each Python worker) each answer every right row with its top-1. Recorded: whether the two top-1 answers
are the same row, the largest score difference, the top-1 accuracy of each against the gold, and the search time of
each (Spark's includes its workers loading the saved matcher: a fixed cost, large for tables this small).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/spark_join_autofj.py --output results/matching/spark-join-autofj.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np


def compare_table(spark, table) -> dict:
    """One table's comparison (see the module docstring)."""
    import pandas as pd

    from phrasezoo.match import Matcher, join
    from phrasezoo.match.spark import join_spark

    matcher = Matcher(progress=False).fit(table.left)
    start = time.perf_counter()
    local = join(table.left, table.right, matcher=matcher, progress=False)
    local_s = time.perf_counter() - start
    right = spark.createDataFrame(pd.DataFrame({"row": range(len(table.right)), "name": table.right})).repartition(2)
    start = time.perf_counter()
    result, _ = join_spark(table.left, right, matcher=matcher)
    rows = result.toPandas().sort_values("row").reset_index(drop=True)
    spark_s = time.perf_counter() - start
    gold = [table.gold.get(r) for r in table.right]
    same = np.array(rows["left_index"].tolist()) == np.array(local["left_index"].tolist())
    return {"table": table.name, "left": len(table.left), "right": len(table.right),
            "same_top1": int(same.sum()), "all_same": bool(same.all()),
            "max_score_difference": float(np.abs(rows["score"].to_numpy() - local["score"].to_numpy()).max()),
            "accuracy_one_machine": float(np.mean([a == g for a, g in zip(local["left"], gold)])),
            "accuracy_spark": float(np.mean([a == g for a, g in zip(rows["left"], gold)])),
            "seconds_one_machine": round(local_s, 2), "seconds_spark": round(spark_s, 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="*", help="AutoFJ dev table names (default: all ten)")
    parser.add_argument("--output", type=Path, default=Path("results/matching/spark-join-autofj.json"))
    args = parser.parse_args()
    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj
    from phrasezoo.integrations.splink import local_spark

    names = args.tables or autofj_names("dev")
    spark = local_spark(cores=2, shuffle_partitions=2, driver_memory="2g", app_name="phrasezoo-spark-join")
    try:
        rows = []
        for table in read_autofj(names):
            rows.append(compare_table(spark, table))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        spark.stop()
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/spark_join_autofj.py --output "
                         + str(args.output) + (" --tables " + " ".join(args.tables) if args.tables else ""),
              "machine": f"{platform.machine()}, local[2] Spark on {os.cpu_count()} cores",
              "tables": rows, "all_same": all(r["all_same"] for r in rows),
              "right_rows": sum(r["right"] for r in rows)}  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.output}")


def render(report: dict) -> str:
    """The table of docs/matching-scale.md: per dev table, agreement and accuracy of both paths."""
    lines = ["| AutoFJ dev table | left | right | same top-1 | max score difference | top-1 one machine | "
             "top-1 Spark | seconds one machine / Spark |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in report["tables"]:
        lines.append(f"| {r['table']} | {r['left']} | {r['right']} | {r['same_top1']}/{r['right']} | "
                     f"{r['max_score_difference']:.1e} | {100 * r['accuracy_one_machine']:.1f} | "
                     f"{100 * r['accuracy_spark']:.1f} | {r['seconds_one_machine']:.1f} / {r['seconds_spark']:.1f} |")  # fmt: skip
    verdict = (
        "the same top-1 as one machine on every row" if report["all_same"] else "**answers differ** (see the file)"
    )
    return "\n".join(lines) + (
        f"\n\n`join_spark` gave {verdict} ({report['right_rows']} right rows); {report['machine']}; "
        f"`{report['command']}`, {report['created'][:10]}."
    )


if __name__ == "__main__":
    main()
