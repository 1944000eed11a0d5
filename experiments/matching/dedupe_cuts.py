"""Dedupe's own cuts of the default decision (docs/experiments/matching.md, round 9, rule 37).

A dedupe list per name domain, built from its **calib** split as benchmarks/dedupe_autofj.py builds the AutoFJ lists:
every query, its gold KB name and every other KB name, shuffled (seed 0); a query and its gold name are one gold
cluster, every other name a cluster of its own. Each list is searched once by the default matcher (``dedupe``'s own
neighbour search, top_k 10); for each target precision the cut is the lowest decision probability at which the pair
precision of dedupe's default clustering (components), averaged over the four domains, reaches the target. Written
into the default decision's ``dedupe_cuts`` in ``match/model/learned.json``; no AutoFJ table is read.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_cuts.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from dedupe_autofj import pair_counts  # noqa: E402

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.evaluation.datasets.names import load_name_task  # noqa: E402
from phrasezoo.match import Matcher  # noqa: E402
from phrasezoo.match.engine.dedupe import cluster_pairs, distinct_names, kept_edges, neighbour_pairs  # noqa: E402
from phrasezoo.match.model.combinations import Combination  # noqa: E402
from phrasezoo.match.model.learned import DEFAULT_ENCODER, default_combination, store_learned  # noqa: E402

TARGETS = np.round(np.arange(0.5, 0.991, 0.01), 2)
GRID = np.round(np.arange(0.0, 1.0, 0.0005), 4)
RESULTS = Path("results/matching/experiments/open-world/dedupe-cuts.json")


def dedupe_list(domain: str, seed: int = 0, split: str = "calib") -> tuple[list[str], list[int]]:
    """A split (default calib) as a dedupe list: names and gold cluster ids (see the module docstring)."""
    task = load_name_task(domain, split)
    cluster_of = {name: c for c, name in enumerate(dict.fromkeys(task.kb))}
    rows = [(q, cluster_of[g]) for q, g in zip(task.queries, task.gold) if g in cluster_of]
    rows += [(name, c) for name, c in cluster_of.items()]
    random.Random(seed).shuffle(rows)
    return [r[0] for r in rows], [r[1] for r in rows]


def precision_curve(names: list[str], gold: list[int], matcher, claims: bool = True,
                    grid: np.ndarray = GRID) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Pair precision and recall of dedupe's components clustering at every cut of ``grid`` (``claims``: the
    decision reads them over the list, rule 40)."""
    distinct, group = distinct_names(names)
    matcher.fit(distinct)
    i, j, s = neighbour_pairs(matcher, distinct, np.arange(len(distinct)), 10, claims=claims)
    precision, recall = [], []
    for cut in grid:
        clusters = cluster_pairs(len(distinct), kept_edges(i, j, s, cut), cut, "components")[group]
        tp, pred, total = pair_counts(clusters.tolist(), gold)
        precision.append(tp / pred if pred else 1.0)
        recall.append(tp / total if total else 1.0)
    return np.array(precision), np.array(recall)


CLAIMS_RESULTS = Path("results/matching/experiments/open-world/dedupe-claims-calib.json")


def claims_study() -> None:
    """Rule 40: the calib lists' pair precision and recall at the join's cut for 0.8 / 0.9 / 0.95, the decision
    reading claims over each list or not (components clustering, as dedupe's default)."""
    matcher = Matcher(progress=False)
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_cuts.py --claims-study",
              "rule": "docs/experiments/matching.md, rule 40", "cells": {}}  # fmt: skip
    for domain in DOMAINS:
        names, gold = dedupe_list(domain)
        targets = (0.8, 0.9, 0.95)
        cuts = np.array([matcher.threshold_for(t) for t in targets])
        for claims in (False, True):
            precision, recall = precision_curve(names, gold, matcher, claims=claims, grid=cuts)
            for at, target in enumerate(targets):
                report["cells"][f"{domain}|{'claims' if claims else 'no claims'}|{target}"] = {
                    "precision": round(float(precision[at]), 4), "recall": round(float(recall[at]), 4)}  # fmt: skip
            print(domain, claims, report["cells"][f"{domain}|{'claims' if claims else 'no claims'}|0.9"], flush=True)
    for way in ("no claims", "claims"):
        report[f"mean_precision_0.9|{way}"] = round(float(np.mean(
            [report["cells"][f"{d}|{way}|0.9"]["precision"] for d in DOMAINS])), 4)  # fmt: skip
    report["ships"] = report["mean_precision_0.9|claims"] > report["mean_precision_0.9|no claims"]
    CLAIMS_RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print({k: v for k, v in report.items() if k != "cells"})


def main() -> None:
    if "--claims-study" in sys.argv[1:]:
        return claims_study()
    matcher = Matcher(progress=False)
    curves = {}
    for domain in DOMAINS:
        names, gold = dedupe_list(domain)
        curves[domain] = precision_curve(names, gold, matcher)
        print(domain, len(names), "rows", flush=True)
    mean_precision = np.mean([c[0] for c in curves.values()], axis=0)
    mean_recall = np.mean([c[1] for c in curves.values()], axis=0)
    cuts, floor = [], 0.0
    for target in TARGETS:
        reached = np.nonzero(mean_precision >= target)[0]
        floor = max(floor, float(GRID[reached[0]]) if len(reached) else 1.0)
        cuts.append([float(target), round(floor, 4)])
    reached = [row for row in cuts if row[1] < 1.0]
    if all(t in dict(reached) for t in (0.8, 0.9, 0.95)):  # stored only when the targets users ask for are reached
        combination = default_combination(DEFAULT_ENCODER)
        decision = dict(combination.decision)
        decision["dedupe_cuts"] = reached
        decision["meta"] = {**decision.get("meta", {}), "dedupe_cuts": "docs/experiments/matching.md, round 9, rule "
                            "37: experiments/matching/dedupe_cuts.py (dedupe lists of the name domains' calib splits)"}  # fmt: skip
        store_learned(DEFAULT_ENCODER, Combination.from_dict({**combination.to_dict(), "decision": decision}))
    else:
        print("targets 0.8-0.95 are not reached on the calib lists: nothing stored, dedupe keeps the join's cuts")
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_cuts.py", "cuts": cuts,
              "at_cuts": {f"{t}": {d: {"precision": round(float(np.interp(c, GRID, curves[d][0])), 4),
                                       "recall": round(float(np.interp(c, GRID, curves[d][1])), 4)} for d in curves}
                          for t, c in cuts if t in (0.8, 0.9, 0.95)},
              "mean_recall_at_0.9": round(float(np.interp(dict(cuts)[0.9], GRID, mean_recall)), 4)}  # fmt: skip
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "cuts"}, indent=1))


if __name__ == "__main__":
    main()
