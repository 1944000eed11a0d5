"""How well each dev-suite stand-in tracks the benchmark it stands in for, across runs that have both.

Every recipe choice is made on the dev suite, never on the benchmarks; this checks, after the fact, whether the
dev scores move with the test scores. Each run contributes the dev scores of its exported model (the chosen row of
``results/<method>/<run>-dev-selection.json``) and its benchmark results (``results/<method>/<run>.json``); a run without both is
skipped. Per stand-in pair it reports the number of runs, Pearson's r and Spearman's rho. It reads test results, so
it is a diagnostic of the dev suite only: a recipe chosen by a pair's correlation would be chosen on test data.

    .venv/bin/python experiments/common/dev_validity.py results/pearl/pearl-mini*-dev-selection.json results/pearl/earlier-releases/*/pearl-mini*-dev-selection.json \\
        --output results/pearl/experiments/pearl-mini-dev-validity.json --readme README.md --block pearl-mini-dev-validity
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from phrasezoo.core.files import atomic_write_text, write_readme_table
from phrasezoo.evaluation import read_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seeds_report import chosen_row  # noqa: E402  (the sibling script: a run's chosen grid row)

#: the dev stand-ins and the benchmark each stands in for (the nine-task suite); ``avg7`` is the suite's 7-task average without KB
STAND_INS = [
    ("dev_compound", "turney"),
    ("dev_wordsim", "bird"),
    ("dev_paraphrase", "ppdb_filtered"),
    ("dev_conll", "conll2003"),
    ("dev_bc5cdr", "bc5cdr"),
    ("dev_alias", "autofj"),
    ("dev_fuzzy", "autofj"),
    ("dev_avg", "avg7"),
]
AVG7 = ["turney", "bird", "ppdb", "ppdb_filtered", "conll2003", "bc5cdr", "autofj"]


def run_points(selection_files: list[str | Path]) -> list[dict]:
    """One point per run with both files: ``{"run", "dev": {task: score}, "test": {task: value}}``."""
    points = []
    for path in map(Path, selection_files):
        results = path.with_name(path.name.removesuffix("-dev-selection.json") + ".json")
        if not results.exists():
            continue
        test = {r["task"]: r["value"] for r in read_results(results)["results"] if r["value"] is not None}
        if all(t in test for t in AVG7):
            test["avg7"] = float(np.mean([test[t] for t in AVG7]))
        points.append({"run": results.stem, "dev": chosen_row(json.loads(path.read_text())), "test": test})
    return points


def validity(points: list[dict], pairs=STAND_INS) -> list[dict]:
    """Per ``(dev task, benchmark)`` pair: runs, Pearson r and Spearman rho over the runs that have both."""
    out = []
    for dev, test in pairs:
        have = [p for p in points if dev in p["dev"] and test in p["test"]]
        x = [p["dev"][dev] for p in have]
        y = [p["test"][test] for p in have]
        enough = len(have) >= 3 and len(set(x)) > 1 and len(set(y)) > 1
        out.append(
            {
                "dev": dev,
                "benchmark": test,
                "runs": len(have),
                "pearson": round(float(pearsonr(x, y)[0]), 3) if enough else None,
                "spearman": round(float(spearmanr(x, y)[0]), 3) if enough else None,
            }
        )
    return out


def render(rows: list[dict], runs: list[str]) -> str:
    lines = ["| dev stand-in | benchmark | runs | Pearson r | Spearman rho |", "|---|---|:---:|:---:|:---:|"]
    for r in rows:
        cells = [f"{r[k]:+.2f}" if r[k] is not None else "–" for k in ("pearson", "spearman")]
        lines.append(f"| {r['dev']} | {r['benchmark']} | {r['runs']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"- Runs (each: the dev scores of its exported model and its benchmark results): {', '.join(runs)}.",
        "- `avg7`: the mean of the seven benchmarks without the gold-name KB tasks. A diagnostic of the dev suite "
        "only; it reads test results, so no recipe is chosen by it.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("selections", nargs="+", help="dev-selection files (results/<method>/<run>-dev-selection.json)")
    parser.add_argument("--output", help="write the table's data as JSON here")
    parser.add_argument("--readme", help="README whose block --block gets the table")
    parser.add_argument("--block", default="dev-validity", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    points = run_points(args.selections)
    if len(points) < 3:
        parser.error(f"{len(points)} run(s) have both a dev selection and benchmark results; at least 3 are needed.")
    rows = validity(points)
    runs = [p["run"] for p in points]
    if args.output:
        atomic_write_text(Path(args.output), json.dumps({"runs": runs, "pairs": rows}, indent=1) + "\n")
    table = render(rows, runs)
    if args.readme:
        write_readme_table(args.readme, table, args.block)
    print(table)


if __name__ == "__main__":
    main()
