"""Pairwise precision and recall of ``phrasezoo.match.dedupe`` on lists built from the AutoFJ DEV tables only.

The lists (one per dev table, seed 0): up to ``--rights`` right rows drawn at random, the gold left name of each,
and up to ``--distractors`` other left names drawn at random from the left rows that are no drawn row's gold name
(``--all``: every right row and every other left name), shuffled together. Gold clusters: a right row with its gold left name (right rows sharing a gold left name are one
cluster); every distractor is a cluster of its own. A pair of rows is a true pair when both are in one gold
cluster; precision = true pairs among the pairs ``dedupe`` puts in one cluster, recall = found true pairs among all
true pairs (pooled over the tables: micro; the per-table mean: macro). Exact duplicates (same normal form) always
share a cluster, so a right row spelled like its gold name is a free true pair; the report counts them.

Each list is searched once (the default matcher, top_k 10, self excluded) and the clusters are computed for
``threshold="auto"`` at target precisions 0.8, 0.9 and 0.95 with both methods, so every setting sees the same
scores. ``--spark TABLE`` reruns ``dedupe_spark`` on one table on ``local[2]`` and records whether its clusters,
and so its numbers, equal the one-machine ones.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/dedupe_autofj.py --all --spark TennisTournament \\
        --output results/matching/dedupe-autofj.json
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/dedupe_autofj.py --spark RugbyLeague \\
        --output results/matching/dedupe-autofj-sample-150.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import random
import time
from collections import Counter
from pathlib import Path

import numpy as np

TARGETS = (0.8, 0.9, 0.95)
METHODS = ("components", "average")


def build_list(table, rights: int, distractors: int, seed: int = 0) -> tuple[list[str], list[int]]:
    """The list's names and each row's gold cluster id (see the module docstring)."""
    rng = random.Random(seed)
    right = [r for r in table.right if r in table.gold]
    drawn = rng.sample(right, min(rights, len(right)))
    gold_left = {table.gold[r] for r in drawn}
    others = [name for name in dict.fromkeys(table.left) if name not in gold_left]
    extra = rng.sample(others, min(distractors, len(others)))
    cluster_of_left = {name: c for c, name in enumerate(sorted(gold_left))}
    rows = [(r, cluster_of_left[table.gold[r]]) for r in drawn]
    rows += [(name, cluster_of_left[name]) for name in sorted(gold_left)]
    rows += [(name, len(cluster_of_left) + k) for k, name in enumerate(extra)]
    rng.shuffle(rows)
    return [r[0] for r in rows], [r[1] for r in rows]


def pair_counts(predicted, gold) -> tuple[int, int, int]:
    """(true pairs found, predicted pairs, gold pairs) of two clusterings of the same rows."""

    def pairs(counts) -> int:
        return int(sum(c * (c - 1) // 2 for c in counts.values()))

    return pairs(Counter(zip(predicted, gold))), pairs(Counter(predicted)), pairs(Counter(gold))


def scores(tp: int, pred: int, gold: int) -> dict[str, float]:
    precision = tp / pred if pred else 1.0
    recall = tp / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def cluster_all(matcher, names: list[str], top_k: int):
    """Search the list once; a function (target precision, method) -> the cluster of every row."""
    from phrasezoo.match.engine.dedupe import cluster_pairs, distinct_names, kept_edges, neighbour_pairs

    distinct, group = distinct_names(names)
    matcher.fit(distinct)
    i, j, s = neighbour_pairs(matcher, distinct, np.arange(len(distinct)), top_k)

    def clusters(target: float, method: str) -> np.ndarray:
        cut = matcher.threshold_for(target, dedupe=True)
        return cluster_pairs(len(distinct), kept_edges(i, j, s, cut), cut, method)[group]

    return clusters


def main() -> None:
    import torch

    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj
    from phrasezoo.match import Matcher
    from phrasezoo.match.engine.dedupe import exact_key

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rights", type=int, default=150, help="right rows drawn per dev table (default 150)")
    parser.add_argument("--distractors", type=int, default=150, help="other left names per table (default 150)")
    parser.add_argument("--all", action="store_true", help="every right row and every other left name (no sample)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--tables", nargs="*", help="dev tables to run (default: all 10)")
    parser.add_argument("--spark", help="also run dedupe_spark on this dev table and compare")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.all:
        args.rights = args.distractors = 10**9
    dev = autofj_names("dev")
    names = args.tables or dev
    if set(names) - set(dev):
        raise SystemExit(f"only AutoFJ dev tables may be used: {sorted(set(names) - set(dev))} are not dev")
    matcher = Matcher(progress=False)
    per_table, totals = {}, {(t, m): [0, 0, 0] for t in TARGETS for m in METHODS}
    largest: dict[tuple[float, str], tuple[int, float, str]] = {}
    start = time.perf_counter()
    lists = {}
    for table in read_autofj(names):
        rows, gold = build_list(table, args.rights, args.distractors)
        lists[table.name] = (rows, gold)
        t0 = time.perf_counter()
        clusters = cluster_all(matcher, rows, args.top_k)
        exact = sum(len(g) > 1 for g in _groups([exact_key(r) for r in rows]).values())
        entry = {"rows": len(rows), "gold_clusters": len(set(gold)), "gold_pairs": pair_counts(gold, gold)[2],
                 "exact_duplicate_groups": exact, "seconds": round(time.perf_counter() - t0, 1), "settings": {}}  # fmt: skip
        for target in TARGETS:
            for method in METHODS:
                predicted = clusters(target, method)
                tp, pred, gp = pair_counts(predicted.tolist(), gold)
                sizes = Counter(Counter(predicted.tolist()).values())
                big = max(sizes)
                entry["settings"][f"{target}/{method}"] = {
                    **scores(tp, pred, gp), "true_pairs": tp, "predicted_pairs": pred,
                    "clusters_by_size": {int(k): int(v) for k, v in sorted(sizes.items())},
                    "largest_cluster": int(big), "largest_share": round(big / len(rows), 4),
                }  # fmt: skip
                for k, v in enumerate((tp, pred, gp)):
                    totals[(target, method)][k] += v
                if big > largest.get((target, method), (0,))[0]:
                    largest[(target, method)] = (int(big), round(big / len(rows), 4), table.name)
        per_table[table.name] = entry
        print(table.name, json.dumps(entry["settings"]["0.9/components"]), flush=True)
    summary = []
    for target in TARGETS:
        for method in METHODS:
            key = f"{target}/{method}"
            macro = {m: round(float(np.mean([e["settings"][key][m] for e in per_table.values()])), 4)
                     for m in ("precision", "recall", "f1")}  # fmt: skip
            big = largest[(target, method)]
            summary.append({"target_precision": target, "method": method, "threshold": round(float(
                matcher.threshold_for(target, dedupe=True)), 4), "micro": scores(*totals[(target, method)]), "macro": macro,
                "largest_cluster": big[0], "largest_share": big[1], "largest_in": big[2]})  # fmt: skip
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, 1 thread, shared with other jobs",
        "construction": (
            "per AutoFJ dev table: every right row, their gold left names and every other left name"
            if args.all
            else f"per AutoFJ dev table (seed 0): up to {args.rights} right rows, their gold left names and up "
            f"to {args.distractors} other left names"
        )
        + "; gold cluster = a right row with its gold left name",
        "tables": names,
        "rows": sum(e["rows"] for e in per_table.values()),
        "gold_pairs": sum(e["gold_pairs"] for e in per_table.values()),
        "top_k": args.top_k,
        "rights": args.rights,
        "distractors": args.distractors,
        "seconds": round(time.perf_counter() - start, 1),
        "summary": summary,
        "per_table": per_table,
        "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/dedupe_autofj.py"
        + (" --all" if args.all else "")
        + (f" --rights {args.rights}" if args.rights != 150 and not args.all else "")
        + (f" --distractors {args.distractors}" if args.distractors != 150 and not args.all else "")
        + (f" --tables {' '.join(args.tables)}" if args.tables else "")
        + (f" --spark {args.spark}" if args.spark else "")
        + (f" --output {args.output}" if args.output else ""),
    }
    if args.spark:
        report["spark"] = spark_check(args.spark, lists[args.spark], per_table[args.spark], args.top_k)
    print(json.dumps(report["summary"], indent=1))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=1) + "\n")


def _groups(keys: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return out


def spark_check(name: str, data, local_entry: dict, top_k: int) -> dict:
    """``dedupe_spark`` on ``local[2]`` for one table, every setting: its numbers and whether they equal the local ones."""
    import pandas as pd

    from phrasezoo.integrations.splink import local_spark
    from phrasezoo.match.spark import dedupe_spark

    rows, gold = data
    spark = local_spark(cores=2, shuffle_partitions=2, driver_memory="2g", app_name="phrasezoo-dedupe-bench")
    try:
        table = spark.createDataFrame(pd.DataFrame({"row": range(len(rows)), "name": rows})).repartition(2)
        out = {"table": name, "rows": len(rows), "partitions": 2, "settings": {}}
        start = time.perf_counter()
        for target in TARGETS:
            for method in METHODS:
                result, _ = dedupe_spark(table, "name", id_column="row", target_precision=target, method=method,
                                         top_k=top_k)  # fmt: skip
                frame = result.toPandas().sort_values("row")
                tp, pred, gp = pair_counts(frame["cluster"].tolist(), gold)
                got = {**scores(tp, pred, gp), "true_pairs": tp, "predicted_pairs": pred}
                local = local_entry["settings"][f"{target}/{method}"]
                got["equal_to_one_machine"] = all(got[k] == local[k] for k in got)
                out["settings"][f"{target}/{method}"] = got
        out["seconds"] = round(time.perf_counter() - start, 1)
        out["all_equal"] = all(s["equal_to_one_machine"] for s in out["settings"].values())
        return out
    finally:
        spark.stop()


def render(report: dict) -> str:
    """The table of docs/dedupe.md: pooled pairwise precision/recall/F1 per setting and the largest cluster."""
    lines = ["| target precision | threshold | method | precision | recall | F1 | macro P / R | largest cluster (share, table) |",
             "|---:|---:|---|---:|---:|---:|---:|---|"]  # fmt: skip
    for s in report["summary"]:
        m, a = s["micro"], s["macro"]
        lines.append(f"| {s['target_precision']} | {s['threshold']:.3f} | {s['method']} | {m['precision']:.3f} | "
                     f"{m['recall']:.3f} | {m['f1']:.3f} | {a['precision']:.3f} / {a['recall']:.3f} | "
                     f"{s['largest_cluster']} ({100 * s['largest_share']:.1f}%, {s['largest_in']}) |")  # fmt: skip
    text = "\n".join(lines) + (
        f"\n\n{len(report['tables'])} AutoFJ dev tables, {report['rows']} rows, {report['gold_pairs']} gold pairs "
        f"({report['construction']}); top_k {report['top_k']}; {report['machine']}, {report['seconds']:.0f} s; "
        f"`{report['command']}`, {report['created'][:10]}."
    )
    spark = report.get("spark")
    if spark:
        text += (f"\n\nOn Spark (`dedupe_spark`, local[2], {spark['partitions']} partitions), table {spark['table']} "
                 f"({spark['rows']} rows), all six settings: "
                 + ("the same clusters and numbers as on one machine." if spark["all_equal"] else
                    "**numbers differ from one machine** (see the results file).")
                 )  # fmt: skip
    return text


if __name__ == "__main__":
    main()
