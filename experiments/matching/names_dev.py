"""Issue 43's study: the hybrid matcher chosen on every domain's dev split together, not on AutoFJ alone.

Domains: ``autofj`` (AutoFJ dev-10, one domain of ten tables) and the name benchmark's ``acronyms``, ``aliases``,
``short-names`` and ``noisy`` (:mod:`phrasezoo.data.benchmarks.name_benchmark`). Each domain weighs the same in training (its
tables share a weight of 1) and in the mean dev score. The rule, written before any test number (docs/experiments/
matching.md, "Names, part 1"): the default changes only if a candidate wins on the mean dev top-1 over the five
domains and loses no more than 0.5 points on any one domain against the shipped default.

Sub-commands (results under ``results/matching/experiments/``):

* ``study``: single channels, the blend, rapidfuzz, the shipped default and listwise combinations over feature sets,
  each scored on dev with two-fold cross-fitting (a combination never scores a table half it was trained on);
* ``fit``: the chosen feature set trained on every dev table, calibrated for ``threshold="auto"`` on cross-fitted
  dev scores, written into ``src/phrasezoo/match/model/learned.json`` under the encoder's name;
* ``evaluate --split test``: the per-domain test table (the default, each channel alone, the blend, rapidfuzz).

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_dev.py study
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from matching_dev import (  # noqa: E402
    FEATURE_SETS,
    LEARNED_FILE,
    RESULTS,
    TARGETS,
    CachedEncoder,
    TableFeatures,
    fit_listwise,
    fit_probability,
    precision_at,
    store_learned,
    table_features,
    threshold_rows,
)

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS  # noqa: E402
from phrasezoo.evaluation.datasets.names import load_name_task  # noqa: E402
from phrasezoo.evaluation.tasks.autofj import JoinTable, autofj_names, read_autofj  # noqa: E402
from phrasezoo.match.features.pairs import FEATURES  # noqa: E402
from phrasezoo.match.model.combinations import BLEND, Combination  # noqa: E402
from phrasezoo.match.model.learned import DEFAULT_ENCODER, default_combination  # noqa: E402

ALL_DOMAINS = ("autofj", *DOMAINS)
BASELINE_ROW = "shipped recipe (+hub, AutoFJ dev only), cross-fitted"  # the rule's reference
STATIC = ["static", "static_margin"]
NAMES = ["cover_query", "cover_candidate", "short_form", "head_match", "acronym_soft"]
FUZZY = ["fuzzy_cover_query", "fuzzy_cover_candidate"]
TOKEN_SORT = ["token_sort", "token_sort_margin"]  # round 4 (rule 26)
CANDIDATE_SETS = {
    "+hub": FEATURE_SETS["+hub"],
    "+hub +static": FEATURE_SETS["+hub"] + STATIC,
    "+hub +name words": FEATURE_SETS["+hub"] + NAMES,
    "+hub +static +name words": FEATURE_SETS["+hub"] + STATIC + NAMES,
    "+hub +static +name words +word": FEATURE_SETS["+hub"] + STATIC + NAMES + ["word", "word_margin"],
    "+hub +static +name words +fuzzy": FEATURE_SETS["+hub"] + STATIC + NAMES + FUZZY,  # round 2
    "+hub +static +name words +fuzzy +token sort": FEATURE_SETS["+hub"] + STATIC + NAMES + FUZZY + TOKEN_SORT,  # 4
}


# ------------------------------------------------------------------------------------------------------ tables
def name_table(domain: str, split: str) -> JoinTable:
    task = load_name_task(domain, split)
    return JoinTable(task.name, task.kb, task.queries, dict(zip(task.queries, task.gold)))


def load_domains(split: str, encoder, candidates: int, domains: tuple[str, ...] = ALL_DOMAINS) -> list[TableFeatures]:
    """AutoFJ's tables of ``split`` (weight 1/10 each) and one table per name domain (weight 1), of ``domains``."""
    autofj = read_autofj(autofj_names(split)) if "autofj" in domains else []
    out = []
    for table in autofj + [name_table(d, split) for d in DOMAINS if d in domains]:
        start = time.perf_counter()
        t = table_features(encoder, table, candidates)
        t.domain = "autofj" if table in autofj else table.name.split("-", 1)[1].rsplit("-", 1)[0]
        t.weight = 1.0 / len(autofj) if t.domain == "autofj" else 1.0
        out.append(t)
        print(f"  {table.name}: {len(table.right)} queries, {len(table.left)} names, {t.ids.shape[1]} candidate "
              f"slots, {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)  # fmt: skip
    return out


def half(t: TableFeatures, part: int) -> TableFeatures:
    """Rows of a table whose index parity is ``part`` (a name domain's two folds), with half its weight."""
    rows = np.arange(len(t.ids)) % 2 == part
    return TableFeatures(f"{t.name}#{part}", t.ids[rows], t.features[rows], t.labels[rows], t.has_gold[rows],
                         t.names, t.weight / 2, t.domain)  # fmt: skip


def folds(tables: list[TableFeatures]) -> list[list[TableFeatures]]:
    """Two folds: AutoFJ's tables alternately, each name table's two halves one in each."""
    out: list[list[TableFeatures]] = [[], []]
    autofj = [t for t in tables if t.domain == "autofj"]
    for i, t in enumerate(autofj):
        out[i % 2].append(t)
    for t in tables:
        if t.domain != "autofj":
            out[0].append(half(t, 0))
            out[1].append(half(t, 1))
    return out


# ----------------------------------------------------------------------------------------------------- metrics
def ranking_metrics(t: TableFeatures, scores: np.ndarray) -> dict[str, float]:
    """Top-1, MRR@10 over the candidates, candidate recall, recall at P 0.9 of one table (rows with a gold)."""
    from phrasezoo.evaluation.tasks.autofj import recall_at_precision

    s = np.where(t.valid, scores, -np.inf)
    order = np.argsort(-s, axis=1, kind="stable")[:, :10]
    ranked = np.take_along_axis(t.labels & t.valid, order, 1)
    first = np.where(ranked.any(1), ranked.argmax(1) + 1, 0)
    rr = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
    best = order[:, 0]
    rows = np.arange(len(best))
    correct = t.labels[rows, best]
    gold = t.has_gold
    return {"accuracy": float(correct[gold].mean()), "mrr10": float(rr[gold].mean()),
            "candidate_recall": float(t.labels.any(1)[gold].mean()),
            "recall_at_p90": recall_at_precision(s[rows, best], correct, int(gold.sum()))}  # fmt: skip


def by_domain(tables: list[TableFeatures], scores: dict[str, np.ndarray]) -> dict:
    """Per domain (AutoFJ: mean over its tables) and the mean over domains."""
    per: dict[str, list[dict]] = {}
    for t in tables:
        per.setdefault(t.domain, []).append(ranking_metrics(t, scores[t.name]))
    out = {d: {k: round(float(np.mean([m[k] for m in rows])), 4) for k in rows[0]} for d, rows in per.items()}
    out["mean"] = {k: round(float(np.mean([out[d][k] for d in per])), 4) for k in out[next(iter(per))]}
    return out


def fixed_scores(tables: list[TableFeatures], combination: Combination) -> dict[str, np.ndarray]:
    idx = [FEATURES.index(f) for f in combination.features]
    return {t.name: combination.score(t.features[..., idx], t.valid) for t in tables}


# ---------------------------------------------------------------------------------------------------- learning
def fit_balanced(tables: list[TableFeatures], names: list[str], l2: float = 1e-3,
                 context: tuple[str, ...] = ()) -> Combination:  # fmt: skip
    """Listwise weights on every table (domain-balanced) and the probability map (with ``context``, rule 28)
    fitted on each fold's scores from weights trained on the other fold."""
    weights = fit_listwise(tables, names, l2=l2)
    idx = [FEATURES.index(f) for f in names]
    z = {}
    parts = folds(tables)
    for k in (0, 1):
        w = fit_listwise(parts[1 - k], names, l2=l2)
        for t in parts[k]:
            z[t.name] = t.features[..., idx] @ w
    probability = fit_probability(parts[0] + parts[1], z, context)
    return Combination(list(names), [float(v) for v in weights], 0.0, "ranked", probability, context=list(context))


def cross_fitted(tables: list[TableFeatures], names: list[str], train_on: tuple[str, ...] = ALL_DOMAINS,
                 context: tuple[str, ...] = ()):  # fmt: skip
    """Scores of each fold's tables from a combination (its probability map with ``context``, rule 28) trained on
    the other fold's tables of the domains ``train_on``; returns (scores, fold tables)."""
    parts = folds(tables)
    scores = {}
    for k in (0, 1):
        train = [t for t in parts[1 - k] if t.domain in train_on]
        weights = fit_listwise(train, names)
        idx = [FEATURES.index(f) for f in names]
        z = {t.name: t.features[..., idx] @ weights for t in train}
        combination = Combination(list(names), [float(v) for v in weights], 0.0, "ranked",
                                  fit_probability(train, z, context), context=list(context))  # fmt: skip
        for t in parts[k]:
            scores[t.name] = combination.score(t.features[..., idx], t.valid)
    return scores, parts[0] + parts[1]


# -------------------------------------------------------------------------------------------------- rapidfuzz
def rapidfuzz_scores(split: str, domains: tuple[str, ...] = ALL_DOMAINS) -> dict:
    """Top-1 accuracy of rapidfuzz WRatio over each table's whole KB (not only the candidates), per domain."""
    from rapidfuzz import process
    from rapidfuzz.fuzz import WRatio

    per: dict[str, list[float]] = {}
    tables = [("autofj", t) for t in read_autofj(autofj_names(split))] if "autofj" in domains else []
    tables += [(d, name_table(d, split)) for d in DOMAINS if d in domains]
    for domain, table in tables:
        queries = table.queries()
        matrix = process.cdist(queries, table.left, scorer=WRatio, workers=1, dtype=np.uint8)
        best = matrix.argmax(1)
        per.setdefault(domain, []).append(float(np.mean([table.left[b] == table.gold[q]
                                                         for q, b in zip(queries, best)])))  # fmt: skip
    out = {d: {"accuracy": round(float(np.mean(v)), 4)} for d, v in per.items()}
    out["mean"] = {"accuracy": round(float(np.mean([out[d]["accuracy"] for d in per])), 4)}
    return out


# ------------------------------------------------------------------------------------------------------- study
SINGLE = {"emb alone": Combination(["emb"], [1.0]), "char alone": Combination(["char"], [1.0]),
          "word alone": Combination(["word"], [1.0]), "static alone": Combination(["static"], [1.0])}  # fmt: skip


def print_row(name: str, result: dict) -> None:
    cells = "  ".join(f"{d[:6]} {100 * result[d]['accuracy']:5.1f}/{result[d].get('mrr10', float('nan')):.3f}"
                      for d in (*ALL_DOMAINS, "mean") if d in result)  # fmt: skip
    print(f"{name:36s} {cells}", flush=True)


def study(args) -> None:
    encoder = CachedEncoder(args.model)
    tables = load_domains("dev", encoder, args.candidates)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "candidates": args.candidates, "split": "dev",
              "protocol": "five domains weighted equally; learned rows: two-fold cross-fitting (AutoFJ tables "
                          "alternately, each name table's halves), domain-balanced listwise training", "rows": {}}  # fmt: skip

    def add(name: str, result: dict) -> None:
        report["rows"][name] = result
        print_row(name, result)

    for name, combination in {**SINGLE, "blend (emb + 0.5 char)": BLEND}.items():
        add(name, by_domain(tables, fixed_scores(tables, combination)))
    add("rapidfuzz WRatio (whole KB)", rapidfuzz_scores("dev"))
    add("shipped default (in-sample on AutoFJ dev)", by_domain(tables, fixed_scores(tables, default_combination())))
    scores, parts = cross_fitted(tables, FEATURE_SETS["+hub"], train_on=("autofj",))
    add(BASELINE_ROW, by_domain(parts, scores))
    for name, names in CANDIDATE_SETS.items():
        scores, parts = cross_fitted(tables, names)
        add(f"listwise {name}", by_domain(parts, scores))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "names-dev-study.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


# ------------------------------------------------------------------------------------------------- calibration
def top_answers(t: TableFeatures, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query's best score and whether that answer is right."""
    s = np.where(t.valid, scores, -np.inf)
    best = s.argmax(1)
    rows = np.arange(len(best))
    return s[rows, best], t.labels[rows, best]


def grid_of(tables: list[TableFeatures], scores: dict) -> np.ndarray:
    """The thresholds worth trying: the tables' finite top-1 scores (2,001 quantiles of them when more)."""
    values = np.unique(np.concatenate([top_answers(t, scores[t.name])[0] for t in tables]))
    values = values[np.isfinite(values)]
    return np.quantile(values, np.linspace(0, 1, 2001)) if len(values) > 2001 else values


def precision_curve(tables: list[TableFeatures], scores: dict, grid: np.ndarray) -> np.ndarray:
    """Weighted mean over ``tables`` of the precision of the top-1 answers scoring >= each grid value (a table that
    keeps nothing counts 1, as in rule 7)."""
    total = np.zeros(len(grid))
    for t in tables:
        top, correct = top_answers(t, scores[t.name])
        kept = top[None, :] >= grid[:, None]
        count = kept.sum(1)
        total += t.weight * np.where(count > 0, (kept & correct[None, :]).sum(1) / np.maximum(count, 1), 1.0)
    return total / sum(t.weight for t in tables)


def domain_calibration(
    tables: list[TableFeatures], scores: dict[str, np.ndarray], targets=TARGETS
) -> list[list[float]]:
    """``[target precision, threshold, recall]`` rows (rule 7): the lowest threshold whose precision reaches the
    target on every domain (a domain's precision: the weighted mean over its tables; a table that keeps no row counts
    as precision 1), made non-decreasing in the target, and the mean recall over domains it keeps."""
    grid = grid_of(tables, scores)
    worst = np.full(len(grid), np.inf)
    for domain in sorted({t.domain for t in tables}):
        worst = np.minimum(worst, precision_curve([t for t in tables if t.domain == domain], scores, grid))
    return threshold_rows(grid, worst, tables, scores, targets)


def auto_precision_by_domain(tables: list[TableFeatures], scores: dict[str, np.ndarray],
                             combination: Combination) -> dict:  # fmt: skip
    """Per domain, the precision and recall ``threshold="auto"`` gives at the targets 0.8, 0.9 and 0.95."""
    return {domain: {str(target): precision_at([t for t in tables if t.domain == domain], scores,
                                               combination.threshold_for(target))
                     for target in (0.8, 0.9, 0.95)}
            for domain in ALL_DOMAINS if any(t.domain == domain for t in tables)}  # fmt: skip


# ------------------------------------------------------------------------------------------------ fit / evaluate
CHOSEN = (
    "+hub +static +name words +fuzzy +token sort"  # the shipped feature set (rounds 1, 2 and 4, names-dev-study.json)
)


def fit(args) -> None:
    """Train the chosen feature set on every dev table (domain-balanced), calibrate ``threshold="auto"`` on the
    cross-fitted dev scores (domains weighted equally) and write it into the learned file (learned.json) for the encoder."""
    encoder = CachedEncoder(args.model)
    names = CANDIDATE_SETS[args.features]
    tables = load_domains("dev", encoder, args.candidates)
    context = shipped_context(encoder.name) or CONTEXT  # a refit keeps its map's context; a first fit takes rule 28's
    combination = fit_balanced(tables, names, context=context)
    cross, parts = cross_fitted(tables, names, context=context)
    combination.calibration = domain_calibration(parts, cross)
    metrics = by_domain(parts, cross)
    combination.meta = {
        "encoder": encoder.name,
        "encoder_revision": encoder.revision,
        "trained_on": "autofj_dev (10 tables, one domain) + the name benchmark's dev splits (acronyms, aliases, "
                      "short-names, noisy), each domain weighted equally",
        "candidates": args.candidates, "feature_set": args.features,
        "command": f"experiments/matching/names_dev.py fit{model_flag(args.model)} --features '{args.features}' "
                   f"--candidates {args.candidates}" + learned_flag(args.learned_file),
        "dev_cross_fitted": metrics["mean"], "dev_cross_fitted_per_domain": {d: metrics[d] for d in ALL_DOMAINS},
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "dev_auto_threshold": {str(row[0]): precision_at(parts, cross, row[1])
                               for row in combination.calibration if row[0] in (0.8, 0.9, 0.95)},
        "dev_auto_threshold_per_domain": auto_precision_by_domain(parts, cross, combination),
    }  # fmt: skip
    store_learned(encoder.name, combination, Path(args.learned_file))
    (RESULTS / f"names-fit{suffix(encoder.name)}.json").write_text(
        json.dumps({"combination": combination.to_dict()}, indent=1) + "\n"
    )
    print(json.dumps(combination.meta, indent=1))


CONTEXT = (
    "emb",
    "char",
    "token_sort",
    "acronym",
    "cover_query",
)  # rule 28's context features, fixed before its numbers


def shipped_context(encoder_name: str) -> tuple[str, ...]:
    """The context features of the probability map shipped for ``encoder_name`` (none if it has no combination)."""
    shipped = default_combination(encoder_name)
    return tuple(shipped.context) if shipped.meta.get("encoder") == encoder_name else ()


TEST_FILE = Path("results/matching/names-test.json")


def suffix(encoder_name: str) -> str:
    """The results-file suffix of an encoder's fit and test files (none for the default encoder)."""
    return "" if encoder_name == DEFAULT_ENCODER else "-" + re.sub(r"[:/@]", "-", encoder_name)


def learned_combination(encoder_name: str, model: str) -> Combination:
    """The combination learned for ``encoder_name`` (in learned.json or a zoo method's matcher.json); stops with the
    command to learn one when there is none (the default's would be scored on vectors it was not fitted to)."""
    combination = default_combination(encoder_name)
    if combination.meta.get("encoder") != encoder_name:
        raise SystemExit(f"No combination learned for {encoder_name}: run `names_dev.py fit --model {model}`.")
    return combination


def learned_flag(path: str) -> str:
    return "" if Path(path) == LEARNED_FILE else f" --learned-file {path}"


def model_flag(model: str) -> str:
    return "" if model == DEFAULT_ENCODER else f" --model {model}"


def evaluate(args) -> None:
    """The per-domain table on ``--split`` (test: read once, after every choice): the default, each channel alone,
    the blend, rapidfuzz, the former default; and the precision ``threshold="auto"`` reaches per domain."""
    encoder = CachedEncoder(args.model)
    learned = learned_combination(encoder.name, args.model)
    domains = tuple(args.domains) if args.domains else ALL_DOMAINS
    tables = load_domains(args.split, encoder, args.candidates, domains)
    label = "default (hybrid)" if not suffix(encoder.name) else f"hybrid:{encoder.name}"
    rows = {label: learned, **SINGLE, "blend (emb + 0.5 char)": BLEND}
    former = json.loads(Path(args.former).read_text()) if args.former else {}
    if "combination" in former:  # a fit file: its combination scored on this run's vectors
        rows["former default (AutoFJ dev only)"] = Combination.from_dict(former["combination"])
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "split": args.split,
              "model": args.model, "candidates": args.candidates, "learned_key": encoder.name,
              "combination_created": learned.meta.get("created"), "rows": {},
              "command": f"OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/names_dev.py evaluate "
                         f"--split {args.split}{model_flag(args.model)}"
                         + (f" --former {args.former}" if args.former else "")
                         + (f" --domains {' '.join(domains)}" if domains != ALL_DOMAINS else "")}  # fmt: skip
    for name, combination in rows.items():
        scores = fixed_scores(tables, combination)
        result = by_domain(tables, scores)
        if combination.calibration:
            for domain, auto in auto_precision_by_domain(tables, scores, combination).items():
                if domain in result:
                    result[domain]["auto"] = auto
        report["rows"][name] = result
        print_row(name, result)
    if "rows" in former:  # an earlier read of this split: its default's row as it was read, with its own encoder
        name, row = next(iter(former["rows"].items()))
        former_label = f"former {name.replace(' (hybrid)', '')}: {former['learned_key']}, read {former['created'][:10]}"
        report["rows"][former_label] = row
    report["rows"]["rapidfuzz WRatio (whole KB)"] = rapidfuzz_scores(args.split, domains)
    print_row("rapidfuzz WRatio (whole KB)", report["rows"]["rapidfuzz WRatio (whole KB)"])
    out = (TEST_FILE.with_name(f"names-test{suffix(encoder.name)}.json") if args.split == "test"
           else RESULTS / f"names-{args.split}{suffix(encoder.name)}.json")  # fmt: skip
    report["file"] = str(out)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)


LABELS = {"autofj": "AutoFJ", "acronyms": "acronyms", "aliases": "aliases", "short-names": "short names",
          "noisy": "noisy"}  # fmt: skip


def render_test(report: dict) -> str:
    """Per domain: top-1 (MRR@10) of every matcher, the best single channel marked, and auto-threshold precision."""
    head = "| matcher | " + " | ".join(LABELS[d] for d in ALL_DOMAINS) + " | mean |"
    lines = [head, "|---|" + "---:|" * (len(ALL_DOMAINS) + 1)]
    matcher = next(iter(report["rows"]))  # the hybrid matcher with the evaluated encoder
    for name, result in report["rows"].items():
        cells = []
        for d in (*ALL_DOMAINS, "mean"):
            value = f"{100 * result[d]['accuracy']:.1f}"
            if "mrr10" in result[d]:
                value += f" ({result[d]['mrr10']:.3f})"
            cells.append(f"**{value}**" if name == matcher else value)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    default = report["rows"][matcher]
    lines += ["", "| `threshold=\"auto\"` target | " + " | ".join(LABELS[d] for d in ALL_DOMAINS) + " |",
              "|---:|" + "---:|" * len(ALL_DOMAINS)]  # fmt: skip
    for target in ("0.8", "0.9", "0.95"):
        cells = [f"{default[d]['auto'][target]['precision']:.3f} / {default[d]['auto'][target]['recall']:.3f}"
                 for d in ALL_DOMAINS]  # fmt: skip
        lines.append(f"| {target} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + (
        f"\n\nTop-1 accuracy (MRR@10 in brackets; AutoFJ: mean over its {report['split']} datasets, rapidfuzz over "
        f'the whole KB), then the precision / recall the default\'s `threshold="auto"` reaches per domain. From '
        f"`{report.get('file', TEST_FILE)}` (`{report['command']}`, "
        f"{report['created'][:10]})."
    )


def render_study(report: dict) -> str:
    head = "| matcher (dev, cross-fitted where learned) | " + " | ".join(LABELS[d] for d in ALL_DOMAINS) + " | mean |"
    lines = [head, "|---|" + "---:|" * (len(ALL_DOMAINS) + 1)]
    for name, result in report["rows"].items():
        cells = [f"{100 * result[d]['accuracy']:.1f}" + (f" ({result[d]['mrr10']:.3f})" if "mrr10" in result[d]
                 else "") for d in (*ALL_DOMAINS, "mean")]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + (
        "\n\nTop-1 accuracy (MRR@10), from `results/matching/experiments/names-dev-study.json` (`experiments/matching/"
        f"names_dev.py study`, {report['created'][:10]}; {report['protocol']})."
    )


# ------------------------------------------------------------------------------------------- benchmark facts
BENCHMARK_FILE = Path("results/matching/names-benchmark.json")


def benchmark_facts(args) -> None:
    """The built benchmark's counts per domain and split, and a fingerprint of each task (queries, golds, KB)."""
    import hashlib

    from phrasezoo.data.benchmarks.name_benchmark import VERSION, load_benchmark

    facts = {"version": VERSION, "command": "experiments/matching/names_dev.py benchmark", "tasks": {}}
    for name, task in load_benchmark().items():
        digest = hashlib.sha256(json.dumps([task.queries, task.gold, task.kb]).encode()).hexdigest()[:16]
        facts["tasks"][name] = {**task.stats, "fingerprint": digest}
    BENCHMARK_FILE.write_text(json.dumps(facts, indent=1) + "\n")
    print(render_benchmark(facts))


def render_benchmark(facts: dict) -> str:
    lines = ["| domain | split | queries | KB names | variant kinds | sources |", "|---|---|---:|---:|---|---|"]
    for name, row in facts["tasks"].items():
        domain, split = name[len("names-") :].rsplit("-", 1)
        kinds = ", ".join(f"{k} {v}" for k, v in row["kinds"].items())
        sources = ", ".join(f"{k} {v}" for k, v in row["sources"].items())
        lines.append(f"| {domain} | {split} | {row['queries']} | {row['kb']} | {kinds} | {sources} |")
    return (
        "\n".join(lines) + f"\n\nFrom `{BENCHMARK_FILE}` (benchmark version {facts['version']}, `{facts['command']}`)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("study", help="the dev study over the five domains")
    p.add_argument("--model", default=DEFAULT_ENCODER)
    p.add_argument("--candidates", type=int, default=10)
    p.set_defaults(func=study)
    p = sub.add_parser("fit", help="train the chosen feature set on every dev domain, write it into learned.json")
    p.add_argument("--model", default=DEFAULT_ENCODER)
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--features", default=CHOSEN, choices=list(CANDIDATE_SETS))
    p.add_argument("--learned-file", default=str(LEARNED_FILE),
                   help="the learned-combinations file that gets it: learned.json, or a zoo method's matcher.json")  # fmt: skip
    p.set_defaults(func=fit)
    p = sub.add_parser("evaluate", help="the per-domain table on a split (test: read once, after the choice)")
    p.add_argument("--model", default=DEFAULT_ENCODER)
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--split", default="dev", choices=("dev", "test"))
    p.add_argument(
        "--former",
        help="the former default beside it: a fit-*.json (its combination, scored on this run's "
        "vectors) or an earlier names-test*.json of the same split (its default's row as read then)",
    )
    p.add_argument(
        "--domains",
        nargs="+",
        choices=ALL_DOMAINS,
        help="only these domains (default: all five; a slow encoder may skip AutoFJ's 40 test tables)",
    )
    p.set_defaults(func=evaluate)
    p = sub.add_parser("benchmark", help="write the benchmark's counts and fingerprints (results/matching/)")
    p.set_defaults(func=benchmark_facts)
    args = parser.parse_args()
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    args.func(args)


if __name__ == "__main__":
    main()
