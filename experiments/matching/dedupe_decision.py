"""Round 12 (docs/experiments/matching.md, rule 41): a dedupe decision of its own, trained on dedupe lists.

The default decision is trained on joins (a query against a reference); in a dedupe list a row is searched against
the other rows, most of which have no duplicate, and the join's probabilities over-trust near-twin distinct rows
(rules 37 and 40). This study trains the same logistic model over the same inputs (:data:`~phrasezoo.match.model.
decision.INPUTS`, claims read over the list) on dedupe lists: the name benchmark's **calib** lists of rule 37 (every
query, its gold KB name, every other KB name; a query and its gold are one cluster), each row's top other row
labelled right when both are in one gold cluster, every domain weighing the same. Cuts per target: the lowest
probability at which dedupe's default clustering (components) reaches the target pair precision, averaged over the
training domains. No AutoFJ table is read here.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py build
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py study   # leave-one-domain-out
    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py fit     # into learned.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from dedupe_autofj import pair_counts  # noqa: E402
from dedupe_cuts import dedupe_list  # noqa: E402

from phrasezoo.data.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.match import Matcher  # noqa: E402
from phrasezoo.match.engine.dedupe import cluster_pairs, distinct_names, kept_edges  # noqa: E402
from phrasezoo.match.model.decision import (  # noqa: E402
    CLAIM_INPUTS,
    INPUTS,
    NEEDS,
    Decision,
    answer_inputs,
    claim_inputs,
    NO_CLAIM,
    keep_ranking_order,
)
from phrasezoo.resources import cache_dir  # noqa: E402

RESULTS = Path("results/matching/experiments/open-world")
TARGETS = (0.8, 0.9, 0.95)
TOP_K = 10


def cache_file(domain: str, split: str) -> Path:
    return cache_dir() / "dedupe-decision" / f"{domain}-{split}.npz"


def list_inputs(matcher: Matcher, names: list[str], gold: list[int], top_k: int = TOP_K) -> dict[str, np.ndarray]:
    """A dedupe list searched as ``dedupe`` searches it (each distinct name against the others, itself left out):
    every candidate's decision inputs before claims, ranking scores, rows, and the gold cluster of each distinct name
    and of each input row."""
    distinct, group = distinct_names(names)
    matcher.fit(distinct)
    scorer = matcher.scorer
    ids = np.arange(len(distinct))
    parts: dict[str, list] = {}
    for start in range(0, len(distinct), 2048):
        part, own = distinct[start : start + 2048], ids[start : start + 2048]
        qv = scorer.encode(part)
        sv = scorer.static_vectors(part)
        cands = scorer.candidate_ids(part, qv, extra=max(1, top_k + 1 - scorer.candidates), static_vectors=sv)
        cands = np.where(cands == own[:, None], -1, cands)
        features = scorer.features_without_self(part, cands, qv, own, static_vectors=sv)
        valid = cands >= 0
        z = scorer.combination.rank_score(features)
        pair = {name: features[..., scorer.combination.features.index(name)] for name in NEEDS}
        columns = answer_inputs(z, valid, pair, scorer.table_level)
        for key, value in {"cands": cands, "z": np.where(valid, z, -np.inf), **columns}.items():
            parts.setdefault(key, []).append(value)
    out = {key: np.concatenate(value) for key, value in parts.items()}
    gold_of_distinct = np.empty(len(distinct), dtype=np.int64)
    gold_of_distinct[group] = np.asarray(gold)  # a distinct name's cluster: its last row's (exact repeats agree)
    out.update(group=group, gold=np.asarray(gold, dtype=np.int64), distinct_gold=gold_of_distinct)
    return out


def load_lists(split: str, domains=DOMAINS) -> dict[str, dict[str, np.ndarray]]:
    out = {}
    for domain in domains:
        path = cache_file(domain, split)
        if not path.exists():
            raise SystemExit(f"{path} missing: run `dedupe_decision.py build --split {split}` first")
        out[domain] = dict(np.load(path))
    return out


def build(args) -> None:
    matcher = Matcher(progress=False)
    for domain in args.domains:
        path = cache_file(domain, args.split)
        if path.exists() and not args.force:
            continue
        names, gold = dedupe_list(domain, split=args.split)
        arrays = list_inputs(matcher, names, gold)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)
        print(domain, args.split, len(names), "rows", flush=True)


# ------------------------------------------------------------------------------------------------ the model
def top_answers(lst: dict[str, np.ndarray], inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct name's top other row: its inputs (claims read over the list), whether it is right, its row."""
    z = lst["z"]
    top = np.argmax(z, axis=1)
    rows = np.arange(len(z))
    answered = np.isfinite(z[rows, top])
    top_row = np.where(answered, lst["cands"][rows, top], -1)
    claims = claim_inputs(top_row, np.where(answered, z[rows, top], -np.inf))
    x = np.stack([claims[k] if k in CLAIM_INPUTS else lst[k][rows, top] for k in inputs], 1)
    right = answered & (lst["distinct_gold"][np.maximum(top_row, 0)] == lst["distinct_gold"])
    return x[answered], right[answered], top_row


def fit_list_decision(lists: list[dict], inputs=INPUTS, c: float = 1.0) -> Decision:
    """The logistic model of "the top other row is the same entity" on ``lists``, each list weighing the same."""
    from sklearn.linear_model import LogisticRegression

    xs, ys, ws = [], [], []
    for lst in lists:
        x, y, _ = top_answers(lst, inputs)
        xs.append(x)
        ys.append(y)
        ws.append(np.full(len(y), 1.0 / len(y)))
    x, y, w = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
    mean, scale = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, y, sample_weight=w / w.mean())
    return Decision(inputs=list(inputs), mean=mean.tolist(), scale=scale.tolist(), coef=model.coef_[0].tolist(),
                    intercept=float(model.intercept_[0]))  # fmt: skip


def pair_probabilities(lst: dict[str, np.ndarray], decision: Decision, top_k: int = TOP_K):
    """``(i, j, p)`` of every kept candidate pair, as ``dedupe`` scores them with ``decision`` (claims read over
    the list, lower ranks capped by the top answer)."""
    z, cands = lst["z"], lst["cands"]
    valid = np.isfinite(z)
    # as the product: the claim inputs read NO_CLAIM here, and Decision.with_claims shifts the top answers
    p = decision.probability({**{k: lst[k] for k in decision.inputs if k not in CLAIM_INPUTS},
                              **{k: np.full(z.shape, NO_CLAIM[k]) for k in CLAIM_INPUTS}})  # fmt: skip
    p = keep_ranking_order(p, z, valid)
    order = np.argsort(-np.where(valid, z, -np.inf), axis=1, kind="stable")[:, :top_k]
    best = np.where(np.take_along_axis(valid, order, 1), np.take_along_axis(p, order, 1), -np.inf)
    found = np.where(np.isfinite(best), np.take_along_axis(cands, order, 1), -1)
    top_z = np.take_along_axis(z, order[:, :1], 1)[:, 0]
    best = decision.with_claims(best.astype(np.float32), found[:, 0], top_z)
    ok = np.isfinite(best) & (found >= 0)
    i = np.broadcast_to(np.arange(len(z))[:, None], found.shape)
    return i[ok], found[ok], best[ok].astype(np.float64)


def pair_metrics(lst: dict[str, np.ndarray], pairs, cut: float, method: str = "components") -> tuple[float, float]:
    i, j, p = pairs
    n = len(lst["distinct_gold"])
    clusters = cluster_pairs(n, kept_edges(i, j, p, cut), cut, method)[lst["group"]]
    tp, pred, total = pair_counts(clusters.tolist(), lst["gold"].tolist())
    return (tp / pred if pred else 1.0), (tp / total if total else 1.0)


def grid_of(pairs_list) -> np.ndarray:
    values = np.concatenate([p for _, _, p in pairs_list])
    return np.unique(np.round(np.quantile(values, np.linspace(0, 1, 401)), 4))


def list_cuts(lists: list[dict], pairs_list: list, targets=TARGETS) -> dict[float, float]:
    """Per target, the lowest cut at which the lists' mean pair precision (components) reaches it (1.0: never)."""
    grid = grid_of(pairs_list)
    precision = np.array([[pair_metrics(lst, pairs, cut)[0] for cut in grid] for lst, pairs in zip(lists, pairs_list)])
    mean = precision.mean(0)
    cuts = {}
    for t in targets:
        reached = np.flatnonzero(mean >= t)
        cuts[t] = float(grid[reached[0]]) if len(reached) else 1.0
    return cuts


def study(args) -> None:
    """Leave-one-domain-out over the name domains' calib lists: the list decision (trained and cut on the other
    three) against the shipped join decision with its join cuts (rule 40's reference)."""
    lists = load_lists("calib")
    shipped = Matcher(progress=False).scorer
    shipped_decision = shipped.decision
    shipped_cuts = {t: shipped_decision.cut_for(t) for t in TARGETS}
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py study",
              "rule": "docs/experiments/matching.md, round 12, rule 41", "cells": {}}  # fmt: skip
    for held in DOMAINS:
        train = [lists[d] for d in DOMAINS if d != held]
        model = fit_list_decision(train, c=args.c)
        cuts = list_cuts(train, [pair_probabilities(lst, model) for lst in train])
        ways = {"list decision": (pair_probabilities(lists[held], model), cuts),
                "join decision": (pair_probabilities(lists[held], shipped_decision), shipped_cuts)}
        for way, (pairs, way_cuts) in ways.items():
            for t in TARGETS:
                precision, recall = pair_metrics(lists[held], pairs, way_cuts[t])
                report["cells"][f"{held}|{way}|{t}"] = {"precision": round(precision, 4), "recall": round(recall, 4),
                                                        "cut": round(way_cuts[t], 4)}  # fmt: skip
            print(held, way, report["cells"][f"{held}|{way}|0.9"], flush=True)
    for way in ("list decision", "join decision"):
        cells = [report["cells"][f"{d}|{way}|0.9"] for d in DOMAINS]
        report[way] = {"reach_0.85": sum(c["precision"] >= 0.85 for c in cells),
                       "mean_abs_gap_0.9": round(float(np.mean([abs(c["precision"] - 0.9) for c in cells])), 4),
                       "mean_precision_0.9": round(float(np.mean([c["precision"] for c in cells])), 4),
                       "mean_recall_0.9": round(float(np.mean([c["recall"] for c in cells])), 4)}  # fmt: skip
        print(way, report[way])
    out = RESULTS / "dedupe-decision-study.json"
    out.write_text(json.dumps(report, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="search the name domains' dedupe lists once, cached")
    b.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS)
    b.add_argument("--split", default="calib", choices=("dev", "calib"))
    b.add_argument("--force", action="store_true")
    s = sub.add_parser("study", help="leave-one-domain-out on the calib lists")
    s.add_argument("--c", type=float, default=1.0)
    args = parser.parse_args()
    {"build": build, "study": study}[args.command](args)


if __name__ == "__main__":
    main()
