"""CCL's test effect over several CCL seeds: how much one fixed CCL setting changes context-clustering NMI.

Rule 20's measurement (a measurement, not a selection: nothing is chosen from it). One CCL run's effect on
uctopic-mini is as large as its seed noise, so a single CCL seed per model cannot say whether CCL improves the
model in expectation. This script pools ``phrasezoo evaluate`` results files of the ``*_context_ccl`` tasks, one
file per (model, CCL seed), and reports per dataset:

- the change of NMI x 100 of every run against the same model's NMI before CCL (``details.before_ccl``),
- their mean, standard deviation, minimum, maximum and the number above zero,
- each model's own mean over its CCL seeds,
- a 95% t-interval of the mean over all runs (runs treated as independent draws),
- the verdict: CCL improves the models in expectation when the interval's lower bound is above zero and every
  model's own mean is above zero.

All runs of one dataset must share the CCL options except the seed (checked). ``--jsonl`` writes one line per run
(the data the README block is made from); ``--from-jsonl`` re-renders from it without the results files::

    .venv/bin/python experiments/uctopic/ccl_test_seeds.py /tmp/r20/*.json results/uctopic/uctopic-mini*.json \\
        --jsonl results/uctopic/experiments/contrastive-clustering/uctopic-ccl-test-seeds.jsonl --readme README.md --block uctopic-ccl-test-seeds \\
        --plot results/uctopic/experiments/contrastive-clustering/uctopic-ccl-test-seeds.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from statistics import mean, stdev

from phrasezoo.core.files import atomic_write_text, write_readme_table

CCL_SUFFIX = "_context_ccl"


def runs_from_results(paths: list[str]) -> list[dict]:
    """One row per (results file, ``*_context_ccl`` task): model, dataset, CCL seed, NMI before and after, options.

    Rows that repeat a (model, dataset, seed) with identical numbers (the same run in two files) are kept once;
    different numbers for the same key are an error, since the table could not say which run it shows.
    """
    rows: dict[tuple[str, str, int], dict] = {}
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for result in doc["results"]:
            if not result["task"].endswith(CCL_SUFFIX) or result["metric"] != "nmi" or result["value"] is None:
                continue
            details = result["details"]
            options = dict(details["options"])
            row = {
                "model": Path(doc["model"]).name,
                "dataset": result["task"][: -len(CCL_SUFFIX)],
                "seed": options.pop("seed"),
                "nmi_before": details["before_ccl"]["nmi"],
                "nmi_after": result["value"],
                "options": options,
            }
            key = (row["model"], row["dataset"], row["seed"])
            if key in rows and rows[key] != row:
                raise ValueError(f"{path}: a second, different run of {key}; keep one results file per run.")
            rows[key] = row
    return sorted(rows.values(), key=lambda r: (r["dataset"], r["model"], r["seed"]))


def nmi_change(run: dict) -> float:
    """The run's NMI change x 100 against the same model before CCL."""
    return 100 * (run["nmi_after"] - run["nmi_before"])


def t_quantile_975(df: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def summarise(runs: list[dict]) -> list[dict]:
    """Per dataset: the changes, their statistics and the verdict (see the module docstring)."""
    by_dataset: dict[str, list[dict]] = defaultdict(list)
    for run in runs:
        by_dataset[run["dataset"]].append(run)
    out = []
    for dataset, group in sorted(by_dataset.items()):
        settings = {json.dumps(r["options"], sort_keys=True) for r in group}
        if len(settings) > 1:
            raise ValueError(f"{dataset}: runs with different CCL options; this script pools CCL seeds of one setting.")
        changes = [nmi_change(r) for r in group]
        model_changes: dict[str, list[float]] = defaultdict(list)
        for run, change in zip(group, changes):
            model_changes[run["model"]].append(change)
        centre = mean(changes)
        spread = stdev(changes) if len(changes) > 1 else float("nan")
        half = t_quantile_975(len(changes) - 1) * spread / math.sqrt(len(changes)) if len(changes) > 1 else math.inf
        model_means = {m: mean(v) for m, v in sorted(model_changes.items())}
        out.append(
            {
                "dataset": dataset,
                "runs": len(changes),
                "changes": changes,
                "model_changes": dict(model_changes),
                "mean": centre,
                "sd": spread,
                "low": centre - half,
                "high": centre + half,
                "min": min(changes),
                "max": max(changes),
                "above_zero": sum(c > 0 for c in changes),
                "model_means": model_means,
                "improves": centre - half > 0 and all(v > 0 for v in model_means.values()),
            }
        )
    return out


def render(runs: list[dict], rows: list[dict]) -> str:
    """The README block: ``rows`` (from :func:`summarise`) as the summary table, then every run of ``runs``."""
    models = sorted({r["model"] for r in runs})
    lines = [
        "| dataset | runs | mean | sd | 95% interval | min | max | above zero | "
        + " | ".join(f"{m} mean" for m in models)
        + " | improves in expectation |",
        "|---|---:|---:|---:|---|---:|---:|---:|" + "---:|" * len(models) + ":---:|",
    ]
    for row in rows:
        cells = [f"{row['model_means'][m]:+.1f}" if m in row["model_means"] else "–" for m in models]
        lines.append(
            f"| {row['dataset']} | {row['runs']} | {row['mean']:+.2f} | {row['sd']:.2f} | "
            f"[{row['low']:+.2f}, {row['high']:+.2f}] | {row['min']:+.1f} | {row['max']:+.1f} | "
            f"{row['above_zero']}/{row['runs']} | " + " | ".join(cells) + f" | {'yes' if row['improves'] else 'no'} |"
        )
    seeds = sorted({r["seed"] for r in runs})
    lines += ["", "| dataset | model | NMI before CCL | " + " | ".join(f"seed {s}" for s in seeds) + " |"]
    lines.append("|---|---|---:|" + "---:|" * len(seeds))
    cell = {(r["dataset"], r["model"], r["seed"]): r for r in runs}
    for dataset in sorted({r["dataset"] for r in runs}):
        for model in models:
            have = [cell.get((dataset, model, s)) for s in seeds]
            before = next((r["nmi_before"] for r in have if r), None)
            if before is None:
                continue
            changes = [f"{nmi_change(r):+.1f}" if r else "–" for r in have]
            lines.append(f"| {dataset} | {model} | {100 * before:.1f} | " + " | ".join(changes) + " |")
    options = runs[0]["options"] if runs else {}
    lines += [
        "",
        "- Change of test NMI x 100 after CCL, against the same model before CCL; one run per (model, CCL seed). "
        "The CCL seed sets KMeans' pseudo labels and the sampling of anchors and negatives.",
        "- The interval is a t-interval of the mean over all runs of the dataset, treating runs as independent. "
        "'improves in expectation': its lower bound and every model's own mean are above zero.",
        f"- CCL options (all runs): `{json.dumps(options, sort_keys=True)}`.",
    ]
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    """One panel per dataset (``rows`` from :func:`summarise`): every run's NMI change (a dot per CCL seed) per
    model, the model's mean as a bar, and the pooled mean with its 95% interval as a band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted({m for row in rows for m in row["model_changes"]})
    figure, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 4), squeeze=False)
    for axis, row in zip(axes[0], rows):
        axis.axhspan(row["low"], row["high"], color="C0", alpha=0.15, label="pooled mean, 95% interval")
        axis.axhline(row["mean"], color="C0", linewidth=1.2)
        axis.axhline(0, color="black", linewidth=0.8)
        for x, model in enumerate(models):
            values = row["model_changes"].get(model)
            if not values:
                continue
            axis.scatter([x] * len(values), values, color="C1", zorder=3, s=18)
            axis.hlines(row["model_means"][model], x - 0.25, x + 0.25, color="C3", linewidth=2, zorder=2)
        axis.set_xticks(range(len(models)), models, rotation=15, fontsize=8)
        axis.set_xlim(-0.6, len(models) - 0.4)
        axis.set_title(f"{row['dataset']}: test NMI change after CCL ({row['runs']} runs)")
        axis.set_ylabel("NMI change (points)")
    axes[0][0].legend(loc="upper left", fontsize=7, frameon=False)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="*", help="phrasezoo evaluate results files with *_context_ccl tasks")
    parser.add_argument("--from-jsonl", help="read the runs from a file written by --jsonl instead")
    parser.add_argument("--jsonl", help="write one line per run here")
    parser.add_argument("--readme", help="README whose block --block is replaced by the tables")
    parser.add_argument("--block", help="README block name (<!-- NAME:start -->); needed with --readme")
    parser.add_argument("--plot", help="write a PNG: every run's change per model, the pooled mean and interval")
    args = parser.parse_args(argv)
    if bool(args.results) == bool(args.from_jsonl):
        parser.error("give results files or --from-jsonl FILE (one of the two)")
    if args.readme and not args.block:
        parser.error("--readme needs --block NAME: the README block to fill")
    if args.from_jsonl:
        runs = [json.loads(line) for line in Path(args.from_jsonl).read_text().splitlines() if line.strip()]
    else:
        runs = runs_from_results(args.results)
    if not runs:
        parser.error("no *_context_ccl NMI results in the input")
    if args.jsonl:
        atomic_write_text(args.jsonl, "".join(json.dumps(r, sort_keys=True) + "\n" for r in runs))
    rows = summarise(runs)
    table = render(runs, rows)
    print(table)
    if args.readme:
        write_readme_table(args.readme, table, args.block)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
