"""Rounds 15 to 17 (docs/experiments/matching.md, rules 45-48): labels of a list's own pairs, and a list's own cut.

A session over a list (the product's: :func:`~phrasezoo.match.engine.labelling.list_pool`, ``next_pair`` and
``calibration_of``) asks about each distinct name's top other row, the pair nearest the current cut first; the
answers are simulated from the golds (right when both rows are in one gold cluster), 50 per list. The shift is
fitted on the scoring decision's probabilities and, with ``"auto"``, the cut is ``dedupe``'s labelled cut over the
list's candidate pairs (:func:`~phrasezoo.match.engine.dedupe.auto_threshold`). Three ways on the same lists: the
dedupe decision with labels (the candidate), without labels (round 12), and the join decision with the same kind of
session (what ``dedupe(calibration=...)`` did with labels before).

Needs the cached lists of ``dedupe_decision.py build`` (``--domains autofj --split dev``; ``--split test`` and the
name domains' calib lists for the one test read).

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py study   # cross-fitted AutoFJ dev lists
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py test    # once, after the study ships
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py own-cut       # rule 47, dev
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py own-cut-test  # rule 47, once
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py cut-check     # rule 48, name dev lists
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dedupe_decision import (  # noqa: E402
    METHODS,
    RESULTS,
    TARGETS,
    cross_fitted,
    load_lists,
    pair_probabilities,
    pair_tally,
    pooled,
)

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.match import Matcher  # noqa: E402
from phrasezoo.match.engine.dedupe import auto_threshold, honour_labels, kept_edges  # noqa: E402
from phrasezoo.match.engine.labelling import calibration_of, list_pool, next_pair  # noqa: E402
from phrasezoo.match.model.decision import Decision  # noqa: E402

BUDGET = 50
WAYS = ("dedupe decision + labels", "dedupe decision", "join decision + labels")
#: the shipped way as the product links since the labels win over the threshold (read on dev only, after round 15)
HONOURED = "join decision + labels, honoured"


def labelled_session(lst: dict[str, np.ndarray], pairs, decision: Decision, target: float, budget: int = BUDGET):
    """A simulated session over the list's pairs (answers from the golds), then ``dedupe``'s labelled cut: the pairs
    recalibrated, the cut, and the session's facts."""
    i, j, p = pairs
    gold = lst["distinct_gold"]
    names = [str(k) for k in range(len(gold))]
    pool = list_pool(names, i, j, p)
    labels: list[dict] = []
    calibration = calibration_of("study", decision.to_dict(), pool, labels, target, "list")
    while len(labels) < budget:
        row = next_pair(pool, calibration, {(r["query"], r["answer"]) for r in labels}, target)
        if row is None:
            break
        other = int(pool.answers[row])
        labels.append({"query": names[row], "answer": names[other], "right": bool(gold[row] == gold[other]),
                       "probability": float(pool.probabilities[row])})  # fmt: skip
        calibration = calibration_of("study", decision.to_dict(), pool, labels, target, "list")
    q = calibration.apply(p).astype(np.float64)
    cut, _ = auto_threshold(kept_edges(i, j, q, -np.inf), names, float("inf"), target, calibration, False)
    facts = {"labels": len(labels), "right": sum(r["right"] for r in labels), "shift": round(calibration.shift, 4),
             "cut": round(float(cut), 6) if np.isfinite(cut) else None}  # fmt: skip
    return (i, j, q), cut, facts, calibration, names


def honoured(session) -> tuple:
    """A session's pairs as ``dedupe`` links them since the labels win over the threshold
    (:func:`~phrasezoo.match.engine.dedupe.honour_labels`): ``(pairs, cut, facts)``."""
    (i, j, q), cut, facts, calibration, names = session
    edges, changed = honour_labels(kept_edges(i, j, q, -np.inf), names, calibration, cut)
    keys = list(edges)
    pairs = (np.array([a for a, _ in keys], dtype=np.int64), np.array([b for _, b in keys], dtype=np.int64),
             np.array([edges[k] for k in keys], dtype=np.float64))  # fmt: skip
    return pairs, cut, {**facts, **changed}


def score_ways(lst: dict[str, np.ndarray], list_decision: Decision, cuts: dict[float, float], join: Decision):
    """``{(way, target): (pairs, cut, facts)}`` of one list: the three ways of rule 45."""
    list_pairs = pair_probabilities(lst, list_decision)
    join_pairs = pair_probabilities(lst, join)
    out = {}
    for t in TARGETS:
        out["dedupe decision + labels", t] = labelled_session(lst, list_pairs, list_decision, t)[:3]
        out["dedupe decision", t] = (list_pairs, cuts[t], {"cut": round(cuts[t], 6)})
        session = labelled_session(lst, join_pairs, join, t)
        out["join decision + labels", t] = session[:3]
        out[HONOURED, t] = honoured(session)
    return out


def summarise(report: dict, lists: dict[str, dict], scored: dict[str, dict], label: str = "", ways=WAYS) -> None:
    """Pooled pair precision / recall per way, target and clustering into ``report["summary"]``, per list tallies
    and session facts into ``report["per_list"]``."""
    for way in ways:
        for t in TARGETS:
            for method in METHODS:
                tallies = []
                for name, ways in scored.items():
                    pairs, cut, facts = ways[way, t]
                    tally = pair_tally(lists[name], pairs, cut, method)
                    tallies.append(tally)
                    report["per_list"][f"{label}{way}|{t}|{method}|{name}"] = {"tally": list(tally), **facts}
                report["summary"][f"{label}{way}|{t}|{method}"] = pooled(tallies)


def rule45(report: dict, names: list[str], label: str = "", ways=WAYS) -> dict:
    """Rule 45's reading: per way, the mean over targets of (|micro - t| + |macro - t|) / 2 (components), and the
    (list, target) cells within 0.03 of the target."""
    out = {}
    for way in ways:
        gaps, within = [], 0
        for t in TARGETS:
            cell = report["summary"][f"{label}{way}|{t}|components"]
            gaps.append((abs(cell["micro_precision"] - t) + abs(cell["macro_precision"] - t)) / 2)
            for name in names:
                tp, pred, _ = report["per_list"][f"{label}{way}|{t}|components|{name}"]["tally"]
                within += abs((tp / pred if pred else 1.0) - t) <= 0.03
        out[way] = {"mean_gap": round(float(np.mean(gaps)), 4), "cells_within_0.03": within,
                    "cells": len(names) * len(TARGETS)}  # fmt: skip
    return out


def study(args) -> None:
    """Rule 45's dev read: every AutoFJ dev list scored by a dedupe decision trained and cut on the five dev lists of
    the other table parity, its labels from the list itself; beside it the two references."""
    join = Matcher(progress=False).scorer.decision
    order, lists, scored, _ = cross_fitted(lambda lst, model, cuts: score_ways(lst, model, cuts, join))
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py study",
              "rule": "docs/experiments/matching.md, round 15, rule 45", "budget": BUDGET, "summary": {},
              "per_list": {}}  # fmt: skip
    if args.honoured:  # the dev read again with the labels winning over the threshold, beside (decides nothing)
        report["command"] += " --honoured"
        summarise(report, lists, scored, ways=(*WAYS, HONOURED))
        report["rule45"] = rule45(report, order, ways=(*WAYS, HONOURED))
        print(json.dumps(report["rule45"], indent=1))
        (RESULTS / "dedupe-labels-autofj-dev-honoured.json").write_text(json.dumps(report, indent=1) + "\n")
        return
    summarise(report, lists, scored)
    report["rule45"] = rule45(report, order)
    candidate = report["rule45"]["dedupe decision + labels"]["mean_gap"]
    report["ships"] = all(candidate < report["rule45"][w]["mean_gap"] for w in WAYS[1:])
    print(json.dumps(report["rule45"], indent=1), "\nships:", report["ships"])
    (RESULTS / "dedupe-labels-autofj-dev.json").write_text(json.dumps(report, indent=1) + "\n")


def test(args) -> None:
    """Rule 45's one read of the AutoFJ test-40 lists with the shipped dedupe decision (``learned.json``); the name
    domains' calib lists beside (their labels cap precision, rule 41)."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    out = RESULTS / args.output
    if out.exists():
        raise SystemExit(f"{out} exists: a test split is read once per round (rule 45); keep that read")
    scorer = Matcher(progress=False).scorer
    list_decision, join = scorer.list_decision, scorer.decision
    cuts = {t: list_decision.cut_for(t) for t in TARGETS}
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py test",
              "rule": "docs/experiments/matching.md, round 15, rule 45 (read once)", "budget": BUDGET, "summary": {},
              "per_list": {}, "rule45": {}}  # fmt: skip
    for split, domains, names in (("test", ["autofj"], [f"autofj/{t}" for t in autofj_names("test")]),
                                  ("calib", list(DOMAINS), list(DOMAINS))):  # fmt: skip
        lists = load_lists(split, domains)
        label = "autofj test-40|" if split == "test" else "name calib lists|"
        scored = {name: score_ways(lists[name], list_decision, cuts, join) for name in names}
        summarise(report, lists, scored, label)
        report["rule45"][label.rstrip("|")] = rule45(report, names, label)
        print(label, json.dumps(report["rule45"][label.rstrip("|")]), flush=True)
    out.write_text(json.dumps(report, indent=1) + "\n")


#: rule 47's ways: the table cut, the list's own cut, the higher of the two
OWN_CUT_WAYS = ("table", "adaptive", "higher of the two")


def own_cuts(lst: dict[str, np.ndarray], decision: Decision, cuts: dict[float, float]) -> dict:
    """``{(way, target): (pairs, cut, facts)}`` of one list for rule 47: the adaptive cut is ``dedupe``'s labelled
    cut with no label over the list's candidate pairs (each undirected pair's best probability)."""
    from phrasezoo.match.model.calibration import labelled_cut

    pairs = pair_probabilities(lst, decision)
    edges = kept_edges(*pairs, -np.inf)
    scores = np.fromiter(edges.values(), dtype=np.float64, count=len(edges))
    none = np.zeros(len(scores), dtype=bool)
    out = {}
    for t in TARGETS:
        adaptive = labelled_cut(scores, none, none, t)
        for way, cut in zip(OWN_CUT_WAYS, (cuts[t], adaptive, max(cuts[t], adaptive))):
            out[way, t] = (pairs, cut, {"cut": round(float(cut), 6) if np.isfinite(cut) else None})
    return out


def own_cut(args) -> None:
    """Rule 47's dev read: the table cut, the adaptive cut and the higher of the two, cross-fitted."""
    order, lists, scored, _ = cross_fitted(own_cuts)
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py own-cut",
              "rule": "docs/experiments/matching.md, round 16, rule 47", "summary": {}, "per_list": {}}  # fmt: skip
    summarise(report, lists, scored, ways=OWN_CUT_WAYS)
    report["rule47"] = rule45(report, order, ways=OWN_CUT_WAYS)
    best = min(OWN_CUT_WAYS[1:], key=lambda w: report["rule47"][w]["mean_gap"])
    report["ships"] = best if report["rule47"][best]["mean_gap"] < report["rule47"]["table"]["mean_gap"] else None
    print(json.dumps(report["rule47"], indent=1), "\nships:", report["ships"])
    (RESULTS / "dedupe-own-cut-autofj-dev.json").write_text(json.dumps(report, indent=1) + "\n")


def own_cut_test(args) -> None:
    """Rule 47's one read of the AutoFJ test-40 lists: the shipped dedupe decision with its table cut, the list's own
    cut (shipped) and the higher of the two; the name domains' calib lists beside."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    out = RESULTS / "dedupe-own-cut-autofj-test.json"
    if out.exists():
        raise SystemExit(f"{out} exists: a test split is read once per round (rule 47); keep that read")
    decision = Matcher(progress=False).scorer.list_decision
    cuts = {t: decision.cut_for(t) for t in TARGETS}
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py own-cut-test",
              "rule": "docs/experiments/matching.md, round 16, rule 47 (read once)", "summary": {}, "per_list": {},
              "rule47": {}}  # fmt: skip
    for split, domains, names in (("test", ["autofj"], [f"autofj/{t}" for t in autofj_names("test")]),
                                  ("calib", list(DOMAINS), list(DOMAINS))):  # fmt: skip
        lists = load_lists(split, domains)
        label = "autofj test-40|" if split == "test" else "name calib lists|"
        scored = {name: own_cuts(lists[name], decision, cuts) for name in names}
        summarise(report, lists, scored, label, OWN_CUT_WAYS)
        report["rule47"][label.rstrip("|")] = rule45(report, names, label, OWN_CUT_WAYS)
        print(label, json.dumps(report["rule47"][label.rstrip("|")]), flush=True)
    out.write_text(json.dumps(report, indent=1) + "\n")


def cut_check(args) -> None:
    """Rule 48: the shipped dedupe decision's two ways to cut (*table*, *adaptive*) on the name domains' dev lists,
    which no dedupe choice has read."""
    decision = Matcher(progress=False).scorer.list_decision
    cuts = {t: decision.cut_for(t) for t in TARGETS}
    lists = load_lists("dev", DOMAINS)
    ways = OWN_CUT_WAYS[:2]
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_labels.py cut-check",
              "rule": "docs/experiments/matching.md, round 17, rule 48", "summary": {}, "per_list": {}}  # fmt: skip
    scored = {name: own_cuts(lists[name], decision, cuts) for name in DOMAINS}
    summarise(report, lists, scored, "name dev lists|", ways)
    report["rule48"] = rule45(report, list(DOMAINS), "name dev lists|", ways)
    gaps = {way: report["rule48"][way]["mean_gap"] for way in ways}
    report["auto"] = "table" if gaps["table"] < gaps["adaptive"] else "adaptive"
    print(json.dumps(report["rule48"], indent=1), "\nauto:", report["auto"])
    (RESULTS / "dedupe-cut-check-name-dev.json").write_text(json.dumps(report, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("study", help="rule 45: the AutoFJ dev lists, cross-fitted by table parity")
    s.add_argument("--honoured", action="store_true", help="beside: the labels winning over the threshold (dev)")
    sub.add_parser("own-cut", help="rule 47: a list's own cut, the AutoFJ dev lists cross-fitted")
    sub.add_parser("own-cut-test", help="rule 47: the one read of the AutoFJ test-40 lists")
    sub.add_parser("cut-check", help="rule 48: table or own cut on the name domains' dev lists")
    t = sub.add_parser("test", help="rule 45: the one read of the AutoFJ test-40 lists")
    t.add_argument("--output", default="dedupe-labels-autofj-test.json", help="file under the results folder (new)")
    args = parser.parse_args()
    {"study": study, "test": test, "own-cut": own_cut, "own-cut-test": own_cut_test, "cut-check": cut_check}[
        args.command
    ](args)


if __name__ == "__main__":
    main()
