"""Round 3 of issue 43 (docs/experiments/matching.md, rules 10-13): which data sets ``threshold="auto"``.

* rule 11: the name domains' thresholds from cross-fitted dev scores (*dev*, as shipped) or from the shipped
  combination's scores on half A of the name benchmark's ``calib`` split (*calib*); both checked on half B;
* rule 12: AutoFJ's part from its cross-fitted dev precision (*point*) or from the 20th percentile of a bootstrap of
  its tables (*bound*); judged by leave-5-tables-out on dev-10;
* rule 13: the winners together give the new calibration table; with ``--write`` it replaces the shipped one
  (the combination's weights stay).

Nothing here reads a test split. Results: ``results/matching/experiments/names-calibration.json``.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_calibration.py [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from matching_dev import (  # noqa: E402
    LEARNED_FILE,
    RESULTS,
    TARGETS,
    CachedEncoder,
    TableFeatures,
    precision_at,
    store_learned,
    table_features,
)
from names_dev import (  # noqa: E402
    auto_precision_by_domain,
    cross_fitted,
    fixed_scores,
    grid_of,
    half,
    learned_combination,
    learned_flag,
    load_domains,
    model_flag,
    name_table,
    precision_curve,
    suffix,
)

from phrasezoo.data.benchmarks.name_benchmark import CALIB, DOMAINS  # noqa: E402
from phrasezoo.match.model.combinations import Combination  # noqa: E402
from phrasezoo.match.model.learned import DEFAULT_ENCODER  # noqa: E402

CHECK_TARGETS = (0.8, 0.9, 0.95)
BOOTSTRAPS, BOUND_QUANTILE, WITHIN = 200, 0.2, 0.02


def lowest(grid: np.ndarray, curve: np.ndarray, target: float) -> float:
    ok = np.flatnonzero(curve >= target)
    return float(grid[ok[0]]) if ok.size else float(grid[-1])


def domain_thresholds(tables: list[TableFeatures], scores: dict, grid: np.ndarray) -> dict[str, dict[float, float]]:
    """Per domain, the lowest threshold whose precision reaches each target."""
    out = {}
    for domain in sorted({t.domain for t in tables}):
        curve = precision_curve([t for t in tables if t.domain == domain], scores, grid)
        out[domain] = {target: lowest(grid, curve, target) for target in TARGETS}
    return out


def bound_thresholds(tables: list[TableFeatures], scores: dict, grid: np.ndarray, seed: int = 0) -> dict:
    """Rule 12's *bound*: the lowest threshold whose bootstrap 20th percentile of precision reaches the target."""
    rng = np.random.default_rng(seed)
    curves = np.stack([precision_curve([t], scores, grid) for t in tables])
    weights = np.array([t.weight for t in tables])
    picks = rng.integers(0, len(tables), size=(BOOTSTRAPS, len(tables)))
    boot = np.stack([(curves[p] * weights[p, None]).sum(0) / weights[p].sum() for p in picks])
    curve = np.quantile(boot, BOUND_QUANTILE, axis=0)
    return {target: lowest(grid, curve, target) for target in TARGETS}


def rule_12(autofj: list[TableFeatures], scores: dict, grid: np.ndarray) -> dict:
    """Leave-5-tables-out on AutoFJ dev: the share of (split, target) whose held-out precision is >= target - 0.02."""
    hits = {"point": [], "bound": []}
    shortfall = {"point": [], "bound": []}
    for chosen in itertools.combinations(range(len(autofj)), len(autofj) // 2):
        fit = [autofj[i] for i in chosen]
        held = [t for i, t in enumerate(autofj) if i not in chosen]
        point = {tg: lowest(grid, precision_curve(fit, scores, grid), tg) for tg in CHECK_TARGETS}
        bound = bound_thresholds(fit, scores, grid)
        for way, thresholds in (("point", point), ("bound", bound)):
            for target in CHECK_TARGETS:
                got = precision_at(held, scores, thresholds[target])["precision"]
                hits[way].append(got >= target - WITHIN)
                shortfall[way].append(target - got)
    out = {way: {"share_within": round(float(np.mean(hits[way])), 4),
                 "mean_shortfall": round(float(np.mean(shortfall[way])), 4),
                 "splits": len(hits[way]) // len(CHECK_TARGETS)} for way in hits}  # fmt: skip
    out["winner"] = "bound" if out["bound"]["share_within"] > out["point"]["share_within"] + WITHIN else "point"
    return out


def rule_11(dev_thr: dict, calib_thr: dict, autofj_thr: dict, half_b: list[TableFeatures], scores: dict) -> dict:
    """Both ways' thresholds (max over domains, as rule 7) checked on half B per name domain."""
    out = {}
    for way, names in (("dev", dev_thr), ("calib", calib_thr)):
        rows, worst = {}, 0.0
        for target in CHECK_TARGETS:
            threshold = max([autofj_thr[target]] + [names[d][target] for d in DOMAINS])
            per = {t.domain: precision_at([t], scores, threshold)["precision"] for t in half_b}
            rows[str(target)] = {"threshold": round(threshold, 6), "half_b_precision": per}
            worst = max(worst, max(target - p for p in per.values()))
        out[way] = {"targets": rows, "worst_shortfall": round(worst, 4)}
    gain = out["dev"]["worst_shortfall"] - out["calib"]["worst_shortfall"]
    out["winner"] = "calib" if gain > 0.005 else "dev"
    return out


def calibration_table(thresholds: dict[str, dict[float, float]]) -> list[list[float]]:
    """``[target, threshold]`` rows: the max over domains, non-decreasing in the target."""
    table, floor = [], -np.inf
    for target in TARGETS:
        floor = max(floor, max(per[target] for per in thresholds.values()))
        table.append([float(target), round(float(floor), 6)])
    return table


def calib_tables(encoder, candidates: int) -> list[TableFeatures]:
    out = []
    for domain in DOMAINS:
        t = table_features(encoder, name_table(domain, CALIB), candidates)
        t.domain, t.weight = domain, 1.0
        out.append(t)
    return out


def run(args) -> None:
    encoder = CachedEncoder(args.model)
    combination = learned_combination(encoder.name, args.model)
    dev = load_domains("dev", encoder, args.candidates)
    cross, parts = cross_fitted(dev, list(combination.features), context=tuple(combination.context))
    calib = calib_tables(encoder, args.candidates)
    halves = [half(t, 0) for t in calib], [half(t, 1) for t in calib]
    shipped = fixed_scores(calib + halves[0] + halves[1], combination)
    autofj = [t for t in parts if t.domain == "autofj"]
    grid = grid_of(parts + calib, {**cross, **shipped})
    dev_thr = domain_thresholds(parts, cross, grid)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "candidates": args.candidates, "command": "OMP_NUM_THREADS=1 .venv/bin/python "
              "experiments/matching/names_calibration.py" + model_flag(args.model) + (" --write" if args.write else "")
              + learned_flag(args.learned_file),
              "calib_queries": {t.domain: int(len(t.ids)) for t in calib}}  # fmt: skip
    report["rule_12"] = rule_12(autofj, cross, grid)
    autofj_thr = dev_thr["autofj"] if report["rule_12"]["winner"] == "point" else bound_thresholds(autofj, cross, grid)
    calib_a = domain_thresholds(halves[0], shipped, grid)
    report["rule_11"] = rule_11(dev_thr, calib_a, dev_thr["autofj"], halves[1], shipped)  # rule 11: AutoFJ as rule 7
    names_thr = {d: dev_thr[d] for d in DOMAINS}
    if report["rule_11"]["winner"] == "calib":
        names_thr = domain_thresholds(calib, shipped, grid)
    table = calibration_table({"autofj": autofj_thr, **names_thr})
    report["calibration"] = table
    report["shipped_calibration"] = [row[:2] for row in combination.calibration]
    report["dev_cross_fitted_auto"] = auto_precision_by_domain(parts, cross, _with(combination, table))
    report["calib_auto"] = {t.domain: {str(tg): precision_at([t], shipped, _with(combination, table)
                                                              .threshold_for(tg)) for tg in CHECK_TARGETS}
                            for t in calib}  # fmt: skip
    out = RESULTS / f"names-calibration{suffix(encoder.name)}.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("rule_11", "rule_12", "calib_auto")}, indent=1))
    if args.write:
        combination.calibration = [[t, thr, precision_at(parts, cross, thr)["recall"]] for t, thr in table]
        combination.meta["calibration"] = {
            "rules": "docs/experiments/matching.md, rules 10-13",
            "rule_11": report["rule_11"]["winner"],
            "rule_12": report["rule_12"]["winner"],
            "command": report["command"],
        }
        combination.meta["dev_auto_threshold"] = {
            str(tg): precision_at(parts, cross, combination.threshold_for(tg)) for tg in CHECK_TARGETS
        }
        combination.meta["dev_auto_threshold_per_domain"] = report["dev_cross_fitted_auto"]
        store_learned(encoder.name, combination, Path(args.learned_file))
        print(f"wrote the calibration into {args.learned_file} ({out})", file=sys.stderr)


def _with(combination: Combination, table: list[list[float]]) -> Combination:
    return Combination.from_dict({**combination.to_dict(), "calibration": table})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_ENCODER)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="store the winning calibration in learned.json")
    parser.add_argument("--learned-file", default=str(LEARNED_FILE),
                        help="the learned-combinations file holding the encoder's combination (a zoo method's "
                        "matcher.json)")  # fmt: skip
    args = parser.parse_args()
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    run(args)


if __name__ == "__main__":
    main()
