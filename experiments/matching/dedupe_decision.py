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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from dedupe_autofj import pair_counts  # noqa: E402
from dedupe_cuts import dedupe_list  # noqa: E402

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.match import Matcher  # noqa: E402
from phrasezoo.match.engine.dedupe import cluster_pairs, distinct_names, kept_edges  # noqa: E402
from phrasezoo.match.model.decision import (  # noqa: E402
    CLAIM_INPUTS,
    INPUTS,
    NEEDS,
    NO_CLAIM,
    Decision,
    answer_inputs,
    claim_inputs,
    keep_ranking_order,
)
from phrasezoo.resources import cache_dir  # noqa: E402

RESULTS = Path("results/matching/experiments/open-world")
TARGETS = (0.8, 0.9, 0.95)
TOP_K = 10


#: rule 53: the word-level pair features the ranking computes and round 12's decision does not read
WORD_INPUTS = ("cover_candidate", "fuzzy_cover_query", "fuzzy_cover_candidate", "head_match", "short_form",
               "same_core", "same_normal", "num_agree", "num_conflict", "num_one_side")  # fmt: skip
#: the lists' cache: "" (round 12's inputs) or "words" (rule 53: with :data:`WORD_INPUTS` too; ``--words``)
CACHE_VARIANT = {"name": ""}


def cache_file(domain: str, split: str) -> Path:
    folder = "dedupe-decision" + (f"-{CACHE_VARIANT['name']}" if CACHE_VARIANT["name"] else "")
    return cache_dir() / folder / f"{domain}-{split}.npz"


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
        if CACHE_VARIANT["name"] == "words":  # rule 53: the ranking's word-level features of every candidate
            columns |= {name: features[..., scorer.combination.features.index(name)] for name in WORD_INPUTS}
        for key, value in {"cands": cands, "z": np.where(valid, z, -np.inf), **columns}.items():
            parts.setdefault(key, []).append(value)
    width = max(v.shape[1] for v in parts["cands"])  # candidate lists may differ in width between chunks
    fill = {"cands": -1, "z": -np.inf}
    out = {key: np.concatenate([np.pad(v, ((0, 0), (0, width - v.shape[1])), constant_values=fill.get(key, 0.0))
                                for v in value]) for key, value in parts.items()}  # fmt: skip
    gold_of_distinct = np.empty(len(distinct), dtype=np.int64)
    gold_of_distinct[group] = np.asarray(gold)  # a distinct name's cluster: its last row's (exact repeats agree)
    out.update(group=group, gold=np.asarray(gold, dtype=np.int64), distinct_gold=gold_of_distinct)
    return out


def load_lists(split: str, domains=DOMAINS) -> dict[str, dict[str, np.ndarray]]:
    """Cached lists by name: a name domain's list, or ``autofj/<table>`` for each AutoFJ table of ``split``."""
    out = {}
    for domain in domains:
        for name in list_names(domain, split):
            path = cache_file(name.replace("/", "-"), split)
            if not path.exists():
                raise SystemExit(f"{path} missing: run `dedupe_decision.py build --domains {domain} --split {split}`")
            out[name] = dict(np.load(path))
    return out


def list_names(domain: str, split: str) -> list[str]:
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    return [f"autofj/{t}" for t in autofj_names(split)] if domain == "autofj" else [domain]


def raw_lists(domain: str, split: str):
    """``(name, rows, gold clusters)`` of each list of ``domain``: rule 37's for a name domain (calib), every AutoFJ
    table of ``split`` as ``benchmarks/dedupe_autofj.py --all`` builds it."""
    if domain != "autofj":
        yield (domain, *dedupe_list(domain, split=split))
        return
    from dedupe_autofj import build_list

    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj

    for table in read_autofj(autofj_names(split)):
        yield (f"autofj/{table.name}", *build_list(table, 10**9, 10**9))


def build(args) -> None:
    matcher = Matcher(progress=False)
    for domain in args.domains:
        for k, (name, names, gold) in enumerate(raw_lists(domain, args.split)):
            path = cache_file(name.replace("/", "-"), args.split)
            if (path.exists() and not args.force) or k % args.shards != args.shard:
                continue
            arrays = list_inputs(matcher, names, gold)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp.npz")
            np.savez_compressed(tmp, **arrays)
            tmp.replace(path)
            print(name, args.split, len(names), "rows", flush=True)


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


#: rule 44: an input whose scale on the training lists is below this gets no say
FLAT_SCALE = 0.01


def fit_without_flat(lists: list[dict], c: float = 1.0) -> Decision:
    """Rule 44: the list decision over the inputs whose scale on ``lists`` is at least :data:`FLAT_SCALE`."""
    first = fit_list_decision(lists, c=c)
    inputs = [name for name, scale in zip(first.inputs, first.scale) if scale >= FLAT_SCALE]
    return first if len(inputs) == len(first.inputs) else fit_list_decision(lists, inputs, c=c)


class StudyDecision(Decision):
    """A decision over inputs the product does not compute yet (rule 53's candidate): no check of their names."""

    def __post_init__(self) -> None:
        pass


def fit_with_words(lists: list[dict], c: float = 1.0) -> Decision:
    """Rule 53: the list decision over round 12's inputs and :data:`WORD_INPUTS`, less the new inputs whose scale on
    ``lists`` is below :data:`FLAT_SCALE`."""
    first = fit_list_decision(lists, (*INPUTS, *WORD_INPUTS), c=c)
    kept = [n for n, scale in zip(first.inputs, first.scale) if n not in WORD_INPUTS or scale >= FLAT_SCALE]
    return first if len(kept) == len(first.inputs) else fit_list_decision(lists, kept, c=c)


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
    kind = Decision if set(inputs) <= set(INPUTS) else StudyDecision
    return kind(inputs=list(inputs), mean=mean.tolist(), scale=scale.tolist(), coef=model.coef_[0].tolist(),
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


def pair_tally(lst: dict[str, np.ndarray], pairs, cut: float, method: str = "components") -> tuple[int, int, int]:
    """(true pairs found, predicted pairs, gold pairs) of the list's rows clustered at ``cut``."""
    i, j, p = pairs
    n = len(lst["distinct_gold"])
    clusters = cluster_pairs(n, kept_edges(i, j, p, cut), cut, method)[lst["group"]]
    return pair_counts(clusters.tolist(), lst["gold"].tolist())


def pair_metrics(lst: dict[str, np.ndarray], pairs, cut: float, method: str = "components") -> tuple[float, float]:
    tp, pred, total = pair_tally(lst, pairs, cut, method)
    return (tp / pred if pred else 1.0), (tp / total if total else 1.0)


def pooled(tallies: list[tuple[int, int, int]]) -> dict[str, float]:
    """Micro (pooled counts) and macro (mean per list) pair precision and recall."""
    tp, pred, total = (sum(t[k] for t in tallies) for k in range(3))
    per = [((a / b if b else 1.0), (a / c if c else 1.0)) for a, b, c in tallies]
    return {"micro_precision": round(tp / pred if pred else 1.0, 4), "micro_recall": round(tp / total, 4),
            "macro_precision": round(float(np.mean([p for p, _ in per])), 4),
            "macro_recall": round(float(np.mean([r for _, r in per])), 4)}  # fmt: skip


METHODS = ("components", "average")


def round12_gaps(current: dict[str, float], label: str) -> tuple[dict[str, float], dict[str, float]]:
    """Rules 43 and 44: the sum of micro and macro |pair precision - 0.9| at target 0.9 (components) of this round's
    cross-fitted read (``label``) and of round 12's (read from its results file), and round 12's cell."""
    before = json.loads((RESULTS / "dedupe-decision-autofj-dev.json").read_text())["summary"]
    before = before["list decision|0.9|components"]
    gap = {w: round(sum(abs(c[m] - 0.9) for m in ("micro_precision", "macro_precision")), 4)
           for w, c in ((label, current), ("round 12", before))}  # fmt: skip
    return gap, before


def acronyms_check(train: list[dict], ways: dict) -> dict[str, dict]:
    """Rule 44 (b), and rules 53 and 56 after it: each way's decision ``(fit(lists), cuts(lists, decision))`` fitted
    and cut on ``train`` (the ten AutoFJ dev lists), on the acronyms calib list at target 0.9 (components)."""
    acronyms = load_lists("calib", ["acronyms"])["acronyms"]
    out = {}
    for way, (fit_way, cuts_way) in ways.items():
        model = fit_way(train)
        cut = cuts_way(train, model)[0.9]
        precision, recall = pair_metrics(acronyms, pair_probabilities(acronyms, model), cut)
        out[way] = {"inputs": model.inputs, "cut": round(cut, 4), "precision": round(precision, 4),
                    "recall": round(recall, 4)}  # fmt: skip
    return out


def in_sample_cuts(train: list[dict], model: Decision) -> dict[float, float]:
    """Round 12's cuts: read on the training lists' own probabilities under ``model``."""
    return list_cuts(train, [pair_probabilities(lst, model) for lst in train])


def cross_fitted(score, fit=fit_list_decision,
                 cuts_of=None) -> tuple[list[str], dict[str, dict], dict[str, Any], dict]:  # fmt: skip
    """The AutoFJ dev lists cross-fitted as rule 42 reads them: each list scored by ``score(list, decision, cuts)``
    with a dedupe decision fitted (``fit(training lists)``) and cut on the five dev lists of the other table parity
    (``cuts_of(training lists, decision)``; default: on their own probabilities).
    ``(order, lists, scored, cuts of each fold)``."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    order = [f"autofj/{t}" for t in autofj_names("dev")]
    lists = load_lists("dev", ["autofj"])
    scored, fold_cuts = {}, {}
    for parity in (0, 1):
        train = [lists[name] for k, name in enumerate(order) if k % 2 != parity]
        model = fit(train)
        cuts = (cuts_of or in_sample_cuts)(train, model)
        fold_cuts[parity] = {str(t): round(c, 4) for t, c in cuts.items()}
        print("fold", parity, fold_cuts[parity], flush=True)
        for k, name in enumerate(order):
            if k % 2 == parity:
                scored[name] = score(lists[name], model, cuts)
    return order, lists, scored, fold_cuts


def autofj_study(args) -> None:
    """Rule 42's dev read: every AutoFJ dev list scored by a list decision trained and cut on the five lists of the
    other table parity, beside the shipped join decision with the join's cuts (the same code)."""
    names = list(load_lists("calib").values()) if args.with_names else []  # rule 43: trained on, never cut on
    shipped = Matcher(progress=False).scorer.decision

    def fit_fold(train: list[dict]) -> Decision:
        return fit_without_flat(train, args.c) if args.drop_flat else fit_list_decision(train + names, c=args.c)

    order, lists, by_list, fold_cuts = cross_fitted(lambda lst, model, cuts: (pair_probabilities(lst, model), cuts),
                                                    fit_fold)  # fmt: skip
    scored: dict[str, dict[str, tuple]] = {"list decision": by_list, "join decision": {}}
    shipped_cuts = {t: shipped.cut_for(t) for t in TARGETS}
    for name in order:
        scored["join decision"][name] = (pair_probabilities(lists[name], shipped), shipped_cuts)
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py autofj-study",
              "rule": "docs/experiments/matching.md, round 12, rule 42", "fold_cuts": fold_cuts, "summary": {},
              "per_list": {}}  # fmt: skip
    for way, by_list in scored.items():
        for t in TARGETS:
            for method in METHODS:
                tallies = []
                for name, (pairs, cuts) in by_list.items():
                    tally = pair_tally(lists[name], pairs, cuts[t], method)
                    tallies.append(tally)
                    report["per_list"][f"{way}|{t}|{method}|{name}"] = list(tally)
                report["summary"][f"{way}|{t}|{method}"] = pooled(tallies)
        print(way, report["summary"][f"{way}|0.9|components"], flush=True)
    at = {w: report["summary"][f"{w}|0.9|components"] for w in scored}
    report["ships"] = all(abs(at["list decision"][m] - 0.9) < abs(at["join decision"][m] - 0.9)
                          for m in ("micro_precision", "macro_precision"))  # fmt: skip
    if args.with_names:  # rule 43: against round 12's read
        report.update(
            command=report["command"] + " --with-names", rule="docs/experiments/matching.md, round 13, rule 43"
        )
        gap, before = round12_gaps(at["list decision"], "round 13")
        report["gaps"] = gap
        report["ships"] = gap["round 13"] < gap["round 12"] - 0.01 or (
            abs(gap["round 13"] - gap["round 12"]) <= 0.01
            and at["list decision"]["micro_recall"] > before["micro_recall"]
        )
    if args.drop_flat:  # rule 44: (a) no loss on the cross-fitted dev lists, (b) a gain on the acronyms calib list
        report.update(
            command=report["command"] + " --drop-flat", rule="docs/experiments/matching.md, round 14, rule 44"
        )
        gap, _ = round12_gaps(at["list decision"], "round 14")
        on_acronyms = acronyms_check([lists[name] for name in order],
                                     {"round 14": (lambda train: fit_without_flat(train, args.c), in_sample_cuts),
                                      "round 12": (lambda train: fit_list_decision(train, c=args.c), in_sample_cuts)})  # fmt: skip
        report["gaps"] = gap
        report["acronyms_calib_list"] = on_acronyms
        report["ships"] = bool(gap["round 14"] <= gap["round 12"] + 0.01
                               and on_acronyms["round 14"]["precision"] > on_acronyms["round 12"]["precision"])  # fmt: skip
        print(json.dumps(on_acronyms))
    print("ships:", report["ships"], report.get("gaps"))
    out = "dedupe-decision-autofj-dev.json"
    if args.with_names or args.drop_flat:
        out = (
            "dedupe-decision-autofj-dev-round13.json" if args.with_names else "dedupe-decision-autofj-dev-round14.json"
        )
    (RESULTS / out).write_text(json.dumps(report, indent=1) + "\n")


def out_of_fold_cuts(train: list[dict], model: Decision, c: float = 1.0) -> dict[float, float]:
    """Rule 56's cuts: read on the training lists' out-of-fold probabilities, each list scored by round 12's model
    fitted on the other training lists (``model``, fitted on them all, is not used)."""
    pairs = [pair_probabilities(lst, fit_list_decision([o for m, o in enumerate(train) if m != k], c=c))
             for k, lst in enumerate(train)]  # fmt: skip
    return list_cuts(train, pairs)


def rival_study(candidate: str, ways: dict, rule: str, command: str, output: str) -> None:
    """A candidate dedupe decision against round 12's on the AutoFJ dev lists cross-fitted as rule 42 reads them,
    and rule 44's acronyms calib list check, each way ``(fit(training lists), cuts(training lists, model))``; it
    ships when (a) the sum of its micro and macro |pair precision - 0.9| at 0.9 (components) is below round 12's by
    more than 0.01 and (b) its acronyms list precision at 0.9 is at most 0.02 below round 12's."""
    report = {"command": f"OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py {command}",
              "rule": rule, "summary": {}, "per_list": {}}  # fmt: skip
    for way, (fit_way, cuts_way) in ways.items():
        order, lists, by_list, fold_cuts = cross_fitted(
            lambda lst, model, cuts: (pair_probabilities(lst, model), cuts, model.inputs), fit_way, cuts_way
        )
        report[f"fold_cuts|{way}"] = fold_cuts
        report[f"inputs|{way}"] = {name: by_list[name][2] for name in order[:2]}  # one per fold
        for t in TARGETS:
            for method in METHODS:
                tallies = []
                for name, (pairs, cuts, _) in by_list.items():
                    tally = pair_tally(lists[name], pairs, cuts[t], method)
                    tallies.append(tally)
                    report["per_list"][f"{way}|{t}|{method}|{name}"] = list(tally)
                report["summary"][f"{way}|{t}|{method}"] = pooled(tallies)
        print(way, report["summary"][f"{way}|0.9|components"], flush=True)
    gap, _ = round12_gaps(report["summary"][f"{candidate}|0.9|components"], candidate)
    check = acronyms_check([lists[name] for name in order], ways)
    report.update(gaps=gap, acronyms_calib_list=check)
    report["ships"] = bool(gap[candidate] < gap["round 12"] - 0.01
                           and check[candidate]["precision"] >= check["round 12"]["precision"] - 0.02)  # fmt: skip
    print(json.dumps(check), "\nships:", report["ships"], gap)
    (RESULTS / output).write_text(json.dumps(report, indent=1) + "\n")


def words_study(args) -> None:
    """Rule 53's dev read: the *+words* decision beside round 12's refitted on the same cache (its read
    reproduced)."""
    CACHE_VARIANT["name"] = "words"
    rival_study("+words", {"+words": (lambda train: fit_with_words(train, args.c), in_sample_cuts),
                           "round 12": (lambda train: fit_list_decision(train, c=args.c), in_sample_cuts)},
                "docs/experiments/matching.md, round 21, rule 53", "words-study",
                "dedupe-decision-autofj-dev-round21.json")  # fmt: skip


def out_of_fold_study(args) -> None:
    """Rule 56's dev read: round 12's model with out-of-fold cuts beside its in-sample ones."""

    def fit_one(train: list[dict]) -> Decision:
        return fit_list_decision(train, c=args.c)

    rival_study("out-of-fold cuts", {"out-of-fold cuts": (fit_one, lambda t, m: out_of_fold_cuts(t, m, args.c)),
                                     "round 12": (fit_one, in_sample_cuts)},
                "docs/experiments/matching.md, round 23, rule 56", "out-of-fold-study",
                "dedupe-decision-autofj-dev-round23.json")  # fmt: skip


#: the cuts searched (rule 37's grid). A first version searched 401 quantiles of all pair probabilities, which
#: left no cut between 0.79 and 0.998 (most pairs score low): it missed the lowest cut rule 42 asks for
GRID = np.round(np.arange(0.0, 1.0, 0.0005), 4)


def components_precision(lst: dict[str, np.ndarray], pairs, cut: float) -> float:
    """:func:`pair_metrics`' precision for components, vectorised (the cut search runs it thousands of times)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    i, j, p = pairs
    keep = (p >= cut) & (i != j)
    n = len(lst["distinct_gold"])
    graph = coo_matrix((np.ones(int(keep.sum())), (i[keep], j[keep])), shape=(n, n))
    labels = connected_components(graph, directed=False)[1][lst["group"]]

    def pair_total(*keys) -> int:
        _, counts = np.unique(np.stack(keys, 1), axis=0, return_counts=True)
        return int((counts * (counts - 1) // 2).sum())

    predicted = pair_total(labels)
    return pair_total(labels, lst["gold"]) / predicted if predicted else 1.0


def list_cuts(lists: list[dict], pairs_list: list, targets=TARGETS) -> dict[float, float]:
    """Per target, the lowest cut at which the lists' mean pair precision (components) reaches it (1.0: never)."""
    grid = GRID
    precision = np.array([[components_precision(lst, pairs, cut) for cut in grid]
                          for lst, pairs in zip(lists, pairs_list)])  # fmt: skip
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
        ways = {
            "list decision": (pair_probabilities(lists[held], model), cuts),
            "join decision": (pair_probabilities(lists[held], shipped_decision), shipped_cuts),
        }
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


def autofj_test(args) -> None:
    """Rule 42's one read of the AutoFJ test-40 lists: the shipped dedupe decision (``learned.json``) beside the
    join decision with the join's cuts; and the name domains' calib lists beside (their labels cap precision)."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    out = RESULTS / args.output
    if out.exists():
        raise SystemExit(f"{out} exists: a test split is read once per round (rule 42); keep that read")
    scorer = Matcher(progress=False).scorer
    ways = {"dedupe decision": scorer.list_decision, "join decision": scorer.decision}
    report = {"command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py autofj-test",
              "rule": "docs/experiments/matching.md, round 12, rule 42 (read once)", "summary": {}, "per_list": {},
              "cuts": {w: {str(t): round(d.cut_for(t), 4) for t in TARGETS} for w, d in ways.items()}}  # fmt: skip
    for split, domains, names in (("test", ["autofj"], [f"autofj/{t}" for t in autofj_names("test")]),
                                  ("calib", list(DOMAINS), list(DOMAINS))):  # fmt: skip
        lists = load_lists(split, domains)
        label = "autofj test-40" if split == "test" else "name calib lists"
        for way, decision in ways.items():
            pairs = {name: pair_probabilities(lists[name], decision) for name in names}
            for t in TARGETS:
                for method in METHODS:
                    tallies = [pair_tally(lists[n], pairs[n], decision.cut_for(t), method) for n in names]
                    report["summary"][f"{label}|{way}|{t}|{method}"] = pooled(tallies)
                    for n, tally in zip(names, tallies):
                        report["per_list"][f"{label}|{way}|{t}|{method}|{n}"] = list(tally)
            print(label, way, report["summary"][f"{label}|{way}|0.9|components"], flush=True)
    out.write_text(json.dumps(report, indent=1) + "\n")


def render(report: dict) -> str:
    """A table of pooled pair precision / recall (micro, then macro) per target and clustering, one column per
    decision and set of lists: the cross-fitted dev read or the test read (docs/dedupe.md)."""
    rows: dict[tuple[float, str], dict[str, str]] = {}
    columns: list[str] = []
    for key, cell in report["summary"].items():
        *head, target, method = key.split("|")
        head = [{"list decision": "dedupe decision"}.get(h, h) for h in head]
        column = head[0] if len(head) == 1 else f"{head[1]}, {head[0]}"
        if column not in columns:
            columns.append(column)
        rows.setdefault((float(target), method), {})[column] = (
            f"{cell['micro_precision']:.2f} / {cell['micro_recall']:.2f} "
            f"({cell['macro_precision']:.2f} / {cell['macro_recall']:.2f})"
        )
    lines = ["| target | clustering | " + " | ".join(columns) + " |", "|---:|---|" + "---:|" * len(columns)]
    for (target, method), cells in sorted(rows.items()):
        lines.append(f"| {target} | {method} | " + " | ".join(cells.get(c, "–") for c in columns) + " |")
    return "\n".join(lines) + (
        "\n\nCells: pair precision / recall pooled over the lists (micro), then (macro: the mean over the lists). "
        f"From `{report['command']}` ({report['rule']})."
    )


FIT_TARGETS = np.round(np.arange(0.5, 0.991, 0.01), 2)


def fit(args) -> None:
    """Rule 42's shipped dedupe decision: trained and cut on all ten AutoFJ dev lists, stored as the ``lists``
    decision of the default encoder's decision in ``learned.json``."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names
    from phrasezoo.match.model.combinations import Combination
    from phrasezoo.match.model.learned import DEFAULT_ENCODER, default_combination, store_learned

    lists = load_lists("dev", ["autofj"])
    train = [lists[f"autofj/{t}"] for t in autofj_names("dev")]
    model = fit_list_decision(train, c=args.c)
    pairs = [pair_probabilities(lst, model) for lst in train]
    cuts = list_cuts(train, pairs, FIT_TARGETS)
    rising, floor, recall = [], 0.0, []
    for target in FIT_TARGETS:
        if cuts[target] >= 1.0:
            break  # not reached on the training lists: auto refuses higher targets
        floor = max(floor, cuts[target])
        rising.append([float(target), round(floor, 6)])
        recall.append([float(target), round(float(np.mean([pair_metrics(lst, p, floor)[1]
                                                            for lst, p in zip(train, pairs)])), 4)])  # fmt: skip
    model.cuts = rising
    model.meta = {"rule": "docs/experiments/matching.md, round 12, rule 42",
                  "trained_on": "AutoFJ's ten dev tables as dedupe lists (every right row, its gold left name and "
                                "every other left name; benchmarks/dedupe_autofj.py --all), each list weighing the "
                                "same; cuts: components' pair precision averaged over the lists",
                  "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/dedupe_decision.py fit",
                  "recall": recall}  # fmt: skip
    combination = default_combination(DEFAULT_ENCODER)
    decision = {**combination.decision, "lists": model.to_dict()}
    store_learned(DEFAULT_ENCODER, Combination.from_dict({**combination.to_dict(), "decision": decision}))
    print(json.dumps(model.to_dict(), indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="search the name domains' dedupe lists once, cached")
    b.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=("autofj", *DOMAINS))
    b.add_argument(
        "--split",
        default="calib",
        choices=("dev", "calib", "test"),
        help="name domains: calib (dev is the ranking's); AutoFJ: dev, or test for rule 42's one read",
    )
    b.add_argument("--force", action="store_true")
    b.add_argument("--shard", type=int, default=0, help="build only the lists k with k %% shards == shard")
    b.add_argument("--shards", type=int, default=1)
    b.add_argument("--words", action="store_true", help="rule 53: a cache of its own with the word-level features")
    w = sub.add_parser("words-study", help="rule 53: the +words decision on the cross-fitted AutoFJ dev lists")
    w.add_argument("--c", type=float, default=1.0)
    o = sub.add_parser("out-of-fold-study", help="rule 56: out-of-fold cuts on the cross-fitted AutoFJ dev lists")
    o.add_argument("--c", type=float, default=1.0)
    s = sub.add_parser("study", help="leave-one-domain-out on the calib lists")
    s.add_argument("--c", type=float, default=1.0)
    a = sub.add_parser("autofj-study", help="rule 42: the AutoFJ dev lists, cross-fitted by table parity")
    a.add_argument("--c", type=float, default=1.0)
    a.add_argument("--with-names", action="store_true", help="rule 43: the name calib lists in training too")
    a.add_argument("--drop-flat", action="store_true", help="rule 44: without inputs that never vary in training")
    f = sub.add_parser("fit", help="rule 42: train on the ten AutoFJ dev lists and store as the dedupe decision")
    f.add_argument("--c", type=float, default=1.0)
    t = sub.add_parser("autofj-test", help="rule 42: the one read of the AutoFJ test-40 lists")
    t.add_argument("--output", default="dedupe-decision-autofj-test.json", help="file under the results folder (new)")
    args = parser.parse_args()
    commands = {"build": build, "study": study, "autofj-study": autofj_study, "fit": fit, "autofj-test": autofj_test,
                "words-study": words_study, "out-of-fold-study": out_of_fold_study}  # fmt: skip
    if getattr(args, "words", False):
        CACHE_VARIANT["name"] = "words"
    commands[args.command](args)


if __name__ == "__main__":
    main()
