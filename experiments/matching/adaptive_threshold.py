"""Round 5 of issue 43 (docs/experiments/matching.md, rule 27): a threshold set from the join's own match probabilities.

Three ways to set one join's threshold at a target precision, judged on the name domains' ``calib`` half B and on
AutoFJ dev-10 (cross-fitted scores):

* *table*: rules 11-13's calibration table, set on ``calib`` half A (and AutoFJ's bootstrap *bound*);
* *adaptive*: the lowest top-1 score at which the mean score of the kept answers reaches the target;
* *adaptive-iso*: the same on scores mapped by an isotonic regression fitted on half A's top-1 answers.

Nothing here reads a test split. Results: ``results/matching/experiments/adaptive-threshold.json``.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/adaptive_threshold.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

import numpy as np
from sklearn.isotonic import IsotonicRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from matching_dev import RESULTS, CachedEncoder, TableFeatures  # noqa: E402
from names_calibration import (  # noqa: E402
    CHECK_TARGETS,
    WITHIN,
    _with,
    bound_thresholds,
    calib_tables,
    calibration_table,
    domain_thresholds,
)
from names_dev import cross_fitted, fixed_scores, grid_of, half, learned_combination, load_domains, top_answers  # noqa: E402

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.match.model.combinations import Combination  # noqa: E402

OUT = RESULTS / "adaptive-threshold.json"
WAYS = ("table", "adaptive", "adaptive-iso")


def adaptive_threshold(probabilities: np.ndarray, target_precision: float) -> float:
    """The lowest of a join's top-1 match probabilities at which the mean probability of the answers kept (those
    scoring at least it) reaches ``target_precision``: the join's own estimate of its precision, no labels needed.
    ``inf`` (keep nothing) when even the best answer is below the target; non-finite entries are never kept."""
    values = np.sort(np.asarray(probabilities, dtype=np.float64).ravel())[::-1]
    values = values[np.isfinite(values)]
    if not values.size:
        return float("inf")
    means = np.cumsum(values) / np.arange(1, len(values) + 1)  # non-increasing: a prefix reaches the target
    reached = np.flatnonzero(means >= target_precision - 1e-12)
    return float(values[reached[-1]]) if reached.size else float("inf")


def kept_metrics(top: np.ndarray, correct: np.ndarray, n_gold: int, kept: np.ndarray) -> dict:
    """Precision (1 when nothing is kept, as in rule 7) and recall of the top-1 answers ``kept``."""
    precision = float(correct[kept].mean()) if kept.any() else 1.0
    return {"precision": precision, "recall": float(correct[kept].sum() / max(1, n_gold)), "kept": int(kept.sum())}


def fit_isotonic(tables: list[TableFeatures], scores: dict) -> IsotonicRegression:
    """P(top-1 answer right | score) on ``tables`` pooled, each domain weighted equally."""
    xs, ys, ws = [], [], []
    for t in tables:
        top, correct = top_answers(t, scores[t.name])
        finite = np.isfinite(top)
        xs.append(top[finite])
        ys.append(correct[finite].astype(float))
        ws.append(np.full(finite.sum(), 1.0 / max(1, finite.sum())))
    return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
        np.concatenate(xs), np.concatenate(ys), sample_weight=np.concatenate(ws)
    )


def table_thresholds(parts: list[TableFeatures], cross: dict, half_a: list[TableFeatures], shipped: dict,
                     combination: Combination) -> dict[float, float]:  # fmt: skip
    """Rules 11-13's table set on half A (AutoFJ by its bootstrap bound), at the checked targets."""
    autofj = [t for t in parts if t.domain == "autofj"]
    grid = grid_of(parts + half_a, {**cross, **shipped})
    thresholds = {"autofj": bound_thresholds(autofj, cross, grid), **domain_thresholds(half_a, shipped, grid)}
    table = _with(combination, calibration_table(thresholds))
    return {target: table.threshold_for(target) for target in CHECK_TARGETS}


def judge(t: TableFeatures, scores: dict, target: float, table_threshold: float, iso: IsotonicRegression) -> dict:
    """One join at one target: the three ways' precision and recall."""
    top, correct = top_answers(t, scores[t.name])
    n_gold = int(t.has_gold.sum())
    finite = np.where(np.isfinite(top), top, -np.inf)
    mapped = np.where(np.isfinite(top), iso.predict(np.where(np.isfinite(top), top, 0.0)), -np.inf)
    thresholds = {"table": table_threshold, "adaptive": adaptive_threshold(finite, target),
                  "adaptive-iso": adaptive_threshold(mapped, target)}  # fmt: skip
    values = {"table": finite, "adaptive": finite, "adaptive-iso": mapped}
    return {way: {**kept_metrics(top, correct, n_gold, values[way] >= thresholds[way]),
                  "threshold": float(thresholds[way])} for way in WAYS}  # fmt: skip


def domain_rows(joins: list[TableFeatures], scores: dict, table: dict, iso) -> dict:
    """Per target, each way's precision and recall over ``joins`` (weighted mean over tables, as the tables)."""
    out = {}
    weights = np.array([t.weight for t in joins])
    for target in CHECK_TARGETS:
        per = [judge(t, scores, target, table[target], iso) for t in joins]
        out[str(target)] = {way: {m: round(float(np.average([p[way][m] for p in per], weights=weights)), 4)
                                  for m in ("precision", "recall")} for way in WAYS}  # fmt: skip
    return out


def decide(rows: dict, ways: tuple[str, ...] = WAYS) -> dict:
    """Rule 27 (and 28): pairs held (precision >= target - 0.02), mean recall, and the winner; ``ways[0]`` is the
    incumbent, the others challenge it."""
    summary = {}
    for way in ways:
        cells = [(float(target), r[way]) for per in rows.values() for target, r in per.items()]
        summary[way] = {
            "held": sum(c["precision"] >= t - WITHIN for t, c in cells),
            "within_both_sides": sum(abs(c["precision"] - t) <= WITHIN for t, c in cells),
            "mean_recall": round(float(np.mean([c["recall"] for _, c in cells])), 4),
            "pairs": len(cells),
        }
    incumbent = summary[ways[0]]
    passing = [w for w in ways[1:] if summary[w]["held"] >= incumbent["held"]
               and summary[w]["mean_recall"] > incumbent["mean_recall"] + WITHIN]  # fmt: skip
    winner = max(passing, key=lambda w: summary[w]["mean_recall"]) if passing else ways[0]
    return {"summary": summary, "winner": winner}


def run(args) -> dict:
    encoder = CachedEncoder(args.model)
    combination = learned_combination(encoder.name, args.model)
    dev = load_domains("dev", encoder, args.candidates)
    cross, parts = cross_fitted(dev, list(combination.features))
    calib = calib_tables(encoder, args.candidates)
    half_a, half_b = [half(t, 0) for t in calib], [half(t, 1) for t in calib]
    shipped = fixed_scores(half_a + half_b, combination)
    autofj = [t for t in parts if t.domain == "autofj"]
    table_at = table_thresholds(parts, cross, half_a, shipped, combination)
    iso = fit_isotonic(half_a, shipped)
    rows = {"autofj": domain_rows(autofj, cross, table_at, iso)}
    for domain in DOMAINS:
        rows[domain] = domain_rows([t for t in half_b if t.domain == domain], shipped, table_at, iso)
    return {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
            "rule": "docs/experiments/matching.md rule 27", "file": str(OUT), "table_thresholds": table_at,
            "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/adaptive_threshold.py",
            "rows": rows, "decision": decide(rows)}  # fmt: skip


def render(report: dict) -> str:
    """Per domain and target: precision / recall of each way; then the rule's count."""
    ways = tuple(report.get("ways", WAYS))
    lines = ["| domain | target | " + " | ".join(f"{w}: precision / recall" for w in ways) + " |",
             "|---|---:|" + "---:|" * len(ways)]  # fmt: skip
    for domain, per in report["rows"].items():
        for target, cells in per.items():
            lines.append(f"| {domain} | {target} | " + " | ".join(
                f"{cells[w]['precision']:.3f} / {cells[w]['recall']:.3f}" for w in ways) + " |")  # fmt: skip
    summary = report["decision"]["summary"]
    lines += ["", "| way | pairs held (precision >= target - 0.02) | within 0.02 on both sides | mean recall |",
              "|---|---:|---:|---:|"]  # fmt: skip
    lines += [f"| {w} | {s['held']} of {s['pairs']} | {s['within_both_sides']} | {s['mean_recall']:.3f} |"
              for w, s in summary.items()]  # fmt: skip
    return "\n".join(lines) + (
        f"\n\nName domains: `calib` half B; AutoFJ: dev-10, cross-fitted scores. Winner by "
        f"{report.get('rule', 'rule 27').split('matching.md ')[-1]}: "
        f"**{report['decision']['winner']}**. From `{report.get('file', OUT)}` (`{report['command']}`, "
        f"{report['created'][:10]})."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="baseline:minilm-l6")
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--render", action="store_true", help="print the table of the results file and stop")
    args = parser.parse_args()
    if args.render:
        print(render(json.loads(OUT.read_text())))
        return
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    report = run(args)
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print(render(report))


if __name__ == "__main__":
    main()
