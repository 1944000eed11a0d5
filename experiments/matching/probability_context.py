"""Round 6 of issue 43 (docs/experiments/matching.md, rule 28): a probability map that sees the query's context.

The map ``sigmoid(a z + b m + c + w . g)``, ``g`` = five features of the query's top-ranked candidate, against the
shipped ``sigmoid(a z + b m + c)``, by rule 27's protocol (name domains: ``calib`` half B; AutoFJ: dev-10,
cross-fitted scores; targets 0.8, 0.9 and 0.95):

* *table*: the incumbent (rule 27's *table*, rerun here);
* *context-table*: a calibration table set the same way on the context map's scores;
* *context-adaptive*: rule 27's adaptive threshold on the context map's scores.

Nothing here reads a test split. With ``--write`` a winning map is stored in learned.json (the weights stay);
recalibrate afterwards with ``names_calibration.py --write``. Results:
``results/matching/experiments/probability-context.json``.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/probability_context.py [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from adaptive_threshold import adaptive_threshold, decide, kept_metrics, render, table_thresholds  # noqa: E402
from matching_dev import LEARNED_FILE, RESULTS, CachedEncoder, TableFeatures, store_learned  # noqa: E402
from names_calibration import (  # noqa: E402
    CHECK_TARGETS,
    calib_tables,
)
from names_dev import (  # noqa: E402
    CONTEXT,
    cross_fitted,
    fit_balanced,
    fixed_scores,
    half,
    learned_combination,
    load_domains,
    top_answers,
)

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.match.model.combinations import Combination  # noqa: E402

OUT = RESULTS / "probability-context.json"
WAYS = ("table", "context-table", "context-adaptive")


def judge(joins: list[TableFeatures], readings: dict[str, tuple[dict, dict | None]]) -> dict:
    """Per target, each way's precision and recall over ``joins`` (weighted mean over tables). A reading is
    (scores, thresholds per target) or (scores, None) for the adaptive threshold."""
    weights = np.array([t.weight for t in joins])
    out = {}
    for target in CHECK_TARGETS:
        cells = {}
        for way, (scores, fixed) in readings.items():
            per = []
            for t in joins:
                top, correct = top_answers(t, scores[t.name])
                threshold = fixed[target] if fixed else adaptive_threshold(top, target)
                per.append(kept_metrics(top, correct, int(t.has_gold.sum()), top >= threshold))
            cells[way] = {m: round(float(np.average([p[m] for p in per], weights=weights)), 4)
                          for m in ("precision", "recall")}  # fmt: skip
        out[str(target)] = cells
    return out


def run(args) -> tuple[dict, Combination]:
    encoder = CachedEncoder(args.model)
    shipped_map = learned_combination(encoder.name, args.model)
    names = list(shipped_map.features)
    dev = load_domains("dev", encoder, args.candidates)
    fitted = fit_balanced(dev, names, context=CONTEXT)
    context_map = Combination(names, list(shipped_map.weights), shipped_map.bias, "ranked", fitted.probability,
                              meta=dict(shipped_map.meta), context=list(CONTEXT))  # fmt: skip
    cross, parts = cross_fitted(dev, names)
    cross_ctx, _ = cross_fitted(dev, names, context=CONTEXT)
    calib = calib_tables(encoder, args.candidates)
    half_a, half_b = [half(t, 0) for t in calib], [half(t, 1) for t in calib]
    shipped = fixed_scores(half_a + half_b, shipped_map)
    with_context = fixed_scores(half_a + half_b, context_map)
    autofj = [t for t in parts if t.domain == "autofj"]
    table = table_thresholds(parts, cross, half_a, shipped, shipped_map)
    context_table = table_thresholds(parts, cross_ctx, half_a, with_context, context_map)
    rows = {"autofj": judge(autofj, {"table": (cross, table), "context-table": (cross_ctx, context_table),
                                     "context-adaptive": (cross_ctx, None)})}  # fmt: skip
    for domain in DOMAINS:
        joins = [t for t in half_b if t.domain == domain]
        rows[domain] = judge(joins, {"table": (shipped, table), "context-table": (with_context, context_table),
                                     "context-adaptive": (with_context, None)})  # fmt: skip
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "rule": "docs/experiments/matching.md rule 28", "file": str(OUT), "ways": list(WAYS),
              "context": list(CONTEXT), "probability": {"shipped": shipped_map.probability,
                                                        "context": context_map.probability},
              "table_thresholds": {"table": table, "context-table": context_table},
              "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/probability_context.py",
              "rows": rows, "decision": decide(rows, WAYS)}  # fmt: skip
    return report, context_map


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="baseline:minilm-l6")
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="store a winning context map in learned.json")
    parser.add_argument("--render", action="store_true", help="print the table of the results file and stop")
    args = parser.parse_args()
    if args.render:
        print(render(json.loads(OUT.read_text())))
        return
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    report, context_map = run(args)
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print(render(report))
    if args.write and report["decision"]["winner"] != "table":
        context_map.meta["probability_context"] = {"rule": report["rule"], "winner": report["decision"]["winner"],
                                                   "command": report["command"] + " --write"}  # fmt: skip
        store_learned(context_map.meta["encoder"], context_map, LEARNED_FILE)
        print("wrote the context map into learned.json: recalibrate with names_calibration.py --write", file=sys.stderr)


if __name__ == "__main__":
    main()
