"""The matching study of issue 36: every choice of the hybrid matcher, made on AutoFJ's dev-10 and the alias proxy.

Sub-commands (results under ``results/matching/experiments/``; the log with the numbers behind each choice is
``docs/experiments/matching.md``):

* ``study``: candidate recall, single channels, blends and logistic-regression combinations over feature sets on
  ``autofj_dev``, each scored with leave-one-dataset-out cross-fitting (a combination is never scored on a dataset
  it was trained on), plus the alias proxy's MRR (``experiments/matching/matching_alias_proxy.py``).
* ``fit``: the chosen combination trained on all dev-10 pairs, its ``threshold="auto"`` calibration table from the
  cross-fitted dev scores, written into ``src/phrasezoo/match/model/learned.json``.
* the model-level lexical channel is studied by ``experiments/pearl/lexical_channel.py study``.
* ``evaluate``: combinations on any split (``--split test`` only for the final report: nothing is chosen there).

Embeddings come from the disk cache of ``benchmarks/matching_vectors.py`` (run it first for the model), so runs are
cheap; the feature code is the package's own (:class:`phrasezoo.match.scoring.hybrid.HybridScorer`).

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/matching_dev.py study --model baseline:minilm-l6
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # matching_vectors.py, the vector cache

from matching_alias_proxy import alias_mrr, load_alias_groups  # noqa: E402

from phrasezoo.encoders.base import Encoder  # noqa: E402
from phrasezoo.evaluation.tasks.autofj import (  # noqa: E402
    autofj_names,
    best_f1,
    read_autofj,
    recall_at_precision,
)
from phrasezoo.match.features.pairs import FEATURES, margins  # noqa: E402
from phrasezoo.match.model import learned  # noqa: E402
from phrasezoo.match.model.combinations import BLEND, Combination  # noqa: E402
from phrasezoo.match.scoring.hybrid import HybridScorer  # noqa: E402

RESULTS = Path("results/matching/experiments")


class CachedEncoder(Encoder):
    """An encoder answered from the disk cache of ``matching_vectors.py`` (encodes only what is missing)."""

    def __init__(self, spec: str) -> None:
        from matching_vectors import VectorStore

        from phrasezoo.encoders import load_encoder

        self.inner = load_encoder(spec, progress=False)
        super().__init__(self.inner.name, self.inner.revision, progress=False)
        self.store = VectorStore(self.inner)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.store.lookup(texts)


@dataclass
class TableFeatures:
    """One AutoFJ table's candidate pairs: ids ``(n, p)`` (-1 padded), features ``(n, p, F)``, labels ``(n, p)``."""

    name: str
    ids: np.ndarray
    features: np.ndarray
    labels: np.ndarray
    has_gold: np.ndarray  # (n,) right rows with a gold match
    names: tuple[str, ...]
    weight: float = 1.0  # the table's share of the objective and of mean metrics (a domain's tables share 1.0)
    domain: str = "autofj"

    @property
    def valid(self) -> np.ndarray:
        return self.ids >= 0

    def column(self, name: str) -> np.ndarray:
        return self.features[..., self.names.index(name)]


def table_features(encoder, table, candidates: int, extra_char_fit: bool = False) -> TableFeatures:
    """Candidates and every feature of :data:`FEATURES` for all right rows of an AutoFJ table."""
    scorer = HybridScorer(encoder, combination=Combination(list(FEATURES), [0.0] * len(FEATURES)),
                          candidates=candidates, progress=False)  # fmt: skip
    scorer.fit(table.left)
    if extra_char_fit:  # the lead's blend: char TF-IDF fitted on both tables
        scorer.char.fit(table.left + table.right)
        scorer.word.fit(table.left + table.right)
        scorer._prepare()
    queries = list(table.right)
    qv = scorer.encode(queries)
    sv = scorer.static_vectors(queries)
    ids = scorer.candidate_ids(queries, qv, static_vectors=sv)
    features = scorer.features(queries, ids, qv, names=FEATURES, static_vectors=sv)
    gold = [table.gold.get(q) for q in queries]
    left = np.array(table.left, dtype=object)
    labels = np.zeros(ids.shape, dtype=bool)
    for r, g in enumerate(gold):
        if g is not None:
            row = ids[r]
            labels[r] = (row >= 0) & (left[np.maximum(row, 0)] == g)
    return TableFeatures(table.name, ids, features, labels, np.array([g is not None for g in gold]), FEATURES)


def load_tables(split: str, encoder, candidates: int, extra_char_fit: bool = False) -> list[TableFeatures]:
    out = []
    for table in read_autofj(autofj_names(split)):
        start = time.perf_counter()
        out.append(table_features(encoder, table, candidates, extra_char_fit))
        print(f"  {table.name}: {len(table.right)} rows, {out[-1].ids.shape[1]} candidate slots, "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)  # fmt: skip
    return out


# ----------------------------------------------------------------------------------------------------- metrics
def table_metrics(t: TableFeatures, scores: np.ndarray) -> dict[str, float]:
    """Top-1 accuracy over gold rows, recall at precision 0.9 and best F1 (AutoFJ's protocol) of one table."""
    s = np.where(t.valid, scores, -np.inf)
    best = s.argmax(1)
    correct = t.labels[np.arange(len(best)), best]
    top = s[np.arange(len(best)), best]
    n_gold = int(t.has_gold.sum())
    return {
        "accuracy": float(correct[t.has_gold].mean()),
        "recall_at_p90": recall_at_precision(top, correct, n_gold),
        "best_f1": best_f1(top, correct, n_gold),
        "candidate_recall": float(t.labels.any(1)[t.has_gold].mean()),
    }


def summarise(per_table: dict[str, dict[str, float]]) -> dict:
    keys = next(iter(per_table.values())).keys()
    out = {k: round(float(np.mean([m[k] for m in per_table.values()])), 4) for k in keys}
    out["per_dataset"] = {name: {k: round(v, 4) for k, v in m.items()} for name, m in per_table.items()}
    return out


def score_fixed(tables: list[TableFeatures], combination: Combination) -> dict:
    idx = [FEATURES.index(f) for f in combination.features]
    return summarise({t.name: table_metrics(t, combination.score(t.features[..., idx], t.valid)) for t in tables})


# ---------------------------------------------------------------------------------------------- learning
def training_rows(tables: list[TableFeatures], names: list[str], balance: bool):
    idx = [FEATURES.index(f) for f in names]
    xs, ys, ws = [], [], []
    for t in tables:
        x = t.features[t.valid][:, idx]
        y = t.labels[t.valid]
        xs.append(x)
        ys.append(y)
        ws.append(np.full(len(y), t.weight / max(1, len(t.ids)) if balance else 1.0))
    w = np.concatenate(ws)
    return np.concatenate(xs), np.concatenate(ys), w / w.mean()


def fit_logistic(tables: list[TableFeatures], names: list[str], c: float = 1.0, balance: bool = True) -> Combination:
    """A pointwise logistic regression over candidate pairs (label: the pair is the gold match)."""
    from sklearn.linear_model import LogisticRegression

    x, y, w = training_rows(tables, names, balance)
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, y, sample_weight=w)
    return Combination(list(names), [float(v) for v in model.coef_[0]], float(model.intercept_[0]), "logistic")


def fit_listwise(tables: list[TableFeatures], names: list[str], l2: float = 1e-3, balance: bool = True) -> np.ndarray:
    """Weights of a linear score trained listwise: softmax over each query's candidates, cross-entropy of the gold
    candidate (queries whose gold is not among the candidates are left out), datasets weighted equally (``balance``)
    or by their number of queries, L2 penalty ``l2``. The objective is the top-1 choice the join makes."""
    from scipy.optimize import minimize

    idx = [FEATURES.index(f) for f in names]
    parts = []
    for t in tables:
        keep = t.labels.any(1)
        parts.append((t.features[keep][..., idx], t.valid[keep], t.labels[keep],
                      t.weight / len(t.ids) if balance else 1.0))  # fmt: skip
    total = sum(w * len(x) for x, _, _, w in parts)

    def objective(weights: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad = 0.0, np.zeros_like(weights)
        for x, valid, gold, w in parts:
            s = np.where(valid, x @ weights, -1e9)
            top = s.max(1, keepdims=True)
            e = np.exp(s - top)
            p = e / e.sum(1, keepdims=True)
            pg = np.where(gold, p, 0.0)
            pg = pg / pg.sum(1, keepdims=True)
            loss += w * float((np.log(e.sum(1)) + top[:, 0] - np.log((np.where(gold, e, 0)).sum(1)) - top[:, 0]).sum())
            grad += w * (((p - pg)[..., None] * x).sum(1)).sum(0)
        return loss / total + l2 * float(weights @ weights), grad / total + 2 * l2 * weights

    start = np.zeros(len(idx))
    start[0] = 1.0
    return minimize(objective, start, jac=True, method="L-BFGS-B").x


def fit_probability(
    tables: list[TableFeatures], z: dict[str, np.ndarray], context: tuple[str, ...] = ()
) -> list[float]:
    """``[a, b, c, *w]`` of ``sigmoid(a z + b margin(z) + c + w . g)``: a logistic regression of "the query's
    top-ranked candidate is its gold match" on the top candidate's ranking score, margin and ``context`` features
    ``g`` (every right row, those without a gold match included), datasets weighted equally; a and b are kept >= 0,
    so the order of ``z`` is kept. The score of a top-1 answer is then the probability that it is right."""
    from sklearn.linear_model import LogisticRegression

    xs, ys, ws = [], [], []
    ctx = [FEATURES.index(f) for f in context]
    for t in tables:
        s = np.where(t.valid, z[t.name], -np.inf)
        top = s.argmax(1)
        rows = np.arange(len(top))
        m = margins(z[t.name], t.valid)
        xs.append(np.concatenate([np.stack([z[t.name][rows, top], m[rows, top]], 1), t.features[rows, top][:, ctx]], 1))
        ys.append(t.labels[rows, top])
        ws.append(np.full(len(top), t.weight / len(top)))
    model = LogisticRegression(C=100.0, max_iter=2000)
    w = np.concatenate(ws)
    model.fit(np.concatenate(xs), np.concatenate(ys), sample_weight=w / w.mean())
    a, b = (max(0.0, float(v)) for v in model.coef_[0][:2])
    return [a, b, float(model.intercept_[0]), *(float(v) for v in model.coef_[0][2:])]


def fit_ranked(tables: list[TableFeatures], names: list[str], nested: bool = True, **options) -> Combination:
    """A ranked combination: listwise weights on ``tables`` and the probability map fitted on scores of each table
    from weights trained on the other tables (``nested``), so the probabilities are not those of training data."""
    weights = fit_listwise(tables, names, **options)
    idx = [FEATURES.index(f) for f in names]
    if nested and len(tables) > 2:
        z = {t.name: t.features[..., idx] @ fit_listwise(tables[:i] + tables[i + 1 :], names, **options)
             for i, t in enumerate(tables)}  # fmt: skip
    else:
        z = {t.name: t.features[..., idx] @ weights for t in tables}
    probability = fit_probability(tables, z)
    return Combination(list(names), [float(w) for w in weights], 0.0, "ranked", probability)


def cross_fitted_scores(tables: list[TableFeatures], names: list[str], kind: str = "ranked", **options):
    """Scores of each table from a combination trained on the other tables (leave one dataset out)."""
    out = {}
    fit = {"ranked": fit_ranked, "logistic": fit_logistic}[kind]
    for i, t in enumerate(tables):
        combination = fit(tables[:i] + tables[i + 1 :], names, **options)
        out[t.name] = combination.score(t.features[..., [FEATURES.index(f) for f in names]], t.valid)
    return out


def score_cross_fitted(tables: list[TableFeatures], names: list[str], kind: str = "ranked", **options) -> dict:
    scores = cross_fitted_scores(tables, names, kind, **options)
    out = summarise({t.name: table_metrics(t, scores[t.name]) for t in tables})
    out["scores"] = scores
    return out


# ------------------------------------------------------------------------------------------- calibration
TARGETS = np.round(np.arange(0.5, 0.991, 0.01), 2)


def calibration_table(tables: list[TableFeatures], scores: dict[str, np.ndarray], targets=TARGETS) -> list[list[float]]:
    """``[target precision, threshold, recall]`` rows: the lowest threshold whose mean precision over the tables (a
    table that keeps no row counts as precision 1) reaches the target, made non-decreasing in the target, and the
    mean recall it keeps."""
    tops = []
    for t in tables:
        s = np.where(t.valid, scores[t.name], -np.inf)
        best = s.argmax(1)
        tops.append((s[np.arange(len(best)), best], t.labels[np.arange(len(best)), best]))
    grid = np.unique(np.concatenate([top for top, _ in tops]))
    grid = np.quantile(grid, np.linspace(0, 1, 2001)) if len(grid) > 2001 else grid
    mean_precision = []
    for threshold in grid:
        values = [(c[top >= threshold].mean() if (top >= threshold).any() else 1.0) for top, c in tops]
        mean_precision.append(float(np.average(values, weights=[t.weight for t in tables])))
    return threshold_rows(grid, np.array(mean_precision), tables, scores, targets)


def threshold_rows(grid: np.ndarray, precision: np.ndarray, tables: list[TableFeatures],
                   scores: dict[str, np.ndarray], targets=TARGETS) -> list[list[float]]:  # fmt: skip
    """``[target, threshold, recall]`` rows from a precision curve over the threshold ``grid``: for each target the
    lowest threshold whose precision reaches it (the top of the grid when none does), made non-decreasing in the
    target, and the mean recall it keeps."""
    table, floor = [], -np.inf
    for target in targets:
        ok = np.flatnonzero(precision >= target)
        threshold = float(grid[ok[0]]) if ok.size else float(grid[-1])
        floor = max(floor, threshold)
        table.append([float(target), round(floor, 6), precision_at(tables, scores, floor)["recall"]])
    return table


def precision_at(tables: list[TableFeatures], scores: dict[str, np.ndarray], threshold: float) -> dict:
    """Mean over tables of the precision and recall of the join that keeps top-1 answers scoring >= threshold."""
    precision, recall = [], []
    for t in tables:
        s = np.where(t.valid, scores[t.name], -np.inf)
        best = s.argmax(1)
        top, correct = s[np.arange(len(best)), best], t.labels[np.arange(len(best)), best]
        kept = top >= threshold
        precision.append(float(correct[kept].mean()) if kept.any() else 1.0)
        recall.append(float(correct[kept].sum() / max(1, t.has_gold.sum())))
    weights = [t.weight for t in tables]
    return {"precision": round(float(np.average(precision, weights=weights)), 4),
            "recall": round(float(np.average(recall, weights=weights)), 4)}  # fmt: skip


# ------------------------------------------------------------------------------------------------ alias proxy
def proxy_scorer(encoder, groups, combination: Combination):
    """``score(queries, candidates)`` for :func:`alias_mrr` under ``combination``: one hybrid matcher fitted on every
    string of the proxy (the TF-IDF statistics of a table holding all of them), scoring given pairs."""
    strings = list(dict.fromkeys(s for g in groups for s in g.strings()))
    scorer = HybridScorer(encoder, combination=combination, progress=False)
    scorer.fit(strings)
    row = {s: i for i, s in enumerate(strings)}

    def score(queries: list[str], candidates: list[str]) -> np.ndarray:
        ids = np.array([[row[c] for c in candidates]] * len(queries), dtype=np.int64)
        return scorer.pair_scores(list(queries), ids)

    return score


# ----------------------------------------------------------------------------------------------------- study
BASE = ["emb", "char"]
MARGINS = ["emb_margin", "char_margin"]
NUMBERS = ["num_agree", "num_conflict", "num_one_side"]
ACRONYMS = ["acronym", "acronym_tokens"]
NAMES = ["same_core", "same_normal"]
HUB = ["emb_hub", "char_hub"]
WORD = ["word", "word_margin"]
#: the feature sets of the study, each adding one group to the last (and the full set without each group)
FEATURE_SETS = {
    "emb+char": BASE,
    "+margins": BASE + MARGINS,
    "+numbers": BASE + MARGINS + NUMBERS,
    "+acronyms": BASE + MARGINS + NUMBERS + ACRONYMS,
    "+names": BASE + MARGINS + NUMBERS + ACRONYMS + NAMES,
    "+hub": BASE + MARGINS + NUMBERS + ACRONYMS + NAMES + HUB,
    "+word (all)": BASE + MARGINS + NUMBERS + ACRONYMS + NAMES + HUB + WORD,
    "all - numbers": BASE + MARGINS + ACRONYMS + NAMES + HUB + WORD,
    "all - acronyms": BASE + MARGINS + NUMBERS + NAMES + HUB + WORD,
    "all - names": BASE + MARGINS + NUMBERS + ACRONYMS + HUB + WORD,
    "all - hub": BASE + MARGINS + NUMBERS + ACRONYMS + NAMES + WORD,
    "all - margins": BASE + NUMBERS + ACRONYMS + NAMES + HUB + WORD,
}


def print_row(name: str, result: dict) -> None:
    proxy = result.get("alias_proxy", {})
    print(f"{name:40s} acc {100 * result['accuracy']:5.1f}  R@P90 {100 * result['recall_at_p90']:5.1f}  "
          f"F1 {100 * result['best_f1']:5.1f}  cand {100 * result['candidate_recall']:5.1f}  "
          f"alias n->a {proxy.get('name->alias', float('nan')):.3f} a->n {proxy.get('alias->name', float('nan')):.3f}",
          flush=True)  # fmt: skip


def study(args) -> None:
    encoder = CachedEncoder(args.model)
    print(f"dev tables with {args.model}, {args.candidates} candidates per channel", file=sys.stderr)
    tables = load_tables("dev", encoder, args.candidates)
    groups = load_alias_groups()
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "candidates": args.candidates, "split": "dev", "datasets": [t.name for t in tables],
              "protocol": "leave-one-dataset-out over autofj_dev (a combination is scored only on a dataset it was "
                          "not trained on); alias proxy: experiments/matching/matching_alias_proxy.py", "rows": {}}  # fmt: skip

    def add(name: str, result: dict, combination: Combination | None = None) -> None:
        result.pop("scores", None)
        if combination is not None:
            result["alias_proxy"] = alias_mrr(groups, proxy_scorer(encoder, groups, combination))
            result["combination"] = combination.to_dict()
        report["rows"][name] = result
        print_row(name, result)

    for feature in ("emb", "char", "word"):
        single = Combination([feature], [1.0], link="identity")
        add(f"{feature} alone", score_fixed(tables, single), single)
    for weight in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0):
        blend = Combination(["emb", "char"], [1 / (1 + weight), weight / (1 + weight)], link="identity")
        add(f"blend emb + {weight} char", score_fixed(tables, blend), blend if weight == 0.5 else None)
    for name in ("+margins", "+word (all)"):
        add(f"pointwise LR {name}", score_cross_fitted(tables, FEATURE_SETS[name], "logistic"),
            fit_logistic(tables, FEATURE_SETS[name]))  # fmt: skip
    for name, names in FEATURE_SETS.items():
        add(f"listwise {name}", score_cross_fitted(tables, names, "ranked"), fit_ranked(tables, names))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"dev-study-{args.tag or encoder.name.replace(':', '-').replace('/', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


def study_candidates(args) -> None:
    """Candidates per channel: candidate recall, cross-fitted accuracy and time of one feature set, per K."""
    encoder = CachedEncoder(args.model)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "features": args.features, "split": "dev", "rows": {}}  # fmt: skip
    for k in args.values:
        start = time.perf_counter()
        tables = load_tables("dev", encoder, k)
        seconds = time.perf_counter() - start
        result = score_cross_fitted(tables, FEATURE_SETS[args.features], "ranked")
        result.pop("scores")
        result["feature_seconds"] = round(seconds, 1)
        report["rows"][f"K={k}"] = result
        print_row(f"K={k} ({seconds:.0f} s for candidates + features)", result)
    out = RESULTS / f"dev-candidates-{encoder.name.replace(':', '-').replace('/', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


def lexical_corpus() -> list[str]:
    """The corpus the embedded lexical channel's IDF is fitted on: names that are neither benchmark nor dev items
    of the study: the wiki-leads article titles and the embedded Wikipedia dump's link titles and anchors."""
    from phrasezoo.data.corpus.wiki_links import link_pairs
    from phrasezoo.resources.corpora import load_wiki_leads

    names = [lead.title for lead in load_wiki_leads()]
    for anchor, title in link_pairs("embedded", progress=False):
        names += [anchor, title]
    return list(dict.fromkeys(n for n in names if n.strip()))


# ------------------------------------------------------------------------------------------ fit / evaluate
#: the package's learned-combinations file (run from the repository root); a zoo method's is
#: ``src/phrasezoo/methods/<name>/matcher.json``
LEARNED_FILE = Path("src/phrasezoo/match/model/learned.json")


def store_learned(key: str, combination: Combination, path: Path = LEARNED_FILE) -> None:
    """Write ``combination`` under ``key`` into the learned-combinations JSON file ``path`` (the package's, or a zoo
    method's ``matcher.json`` for its exports), keeping the file's other entries."""
    learned.store_learned(key, combination, path)


def fit(args) -> None:
    """Train the chosen combination on all dev-10 pairs, calibrate ``threshold="auto"`` on cross-fitted dev scores
    and write both into the learned-combinations file (``learned.json``)."""
    encoder = CachedEncoder(args.model)
    names = FEATURE_SETS[args.features]
    tables = load_tables("dev", encoder, args.candidates)
    cross = cross_fitted_scores(tables, names, "ranked")
    metrics = summarise({t.name: table_metrics(t, cross[t.name]) for t in tables})
    calibration = calibration_table(tables, cross)
    combination = fit_ranked(tables, names)
    combination.calibration = calibration
    combination.meta = {
        "encoder": encoder.name,
        "trained_on": "autofj_dev (" + ", ".join(t.name for t in tables) + ")",
        "candidates": args.candidates,
        "feature_set": args.features,
        "command": f"experiments/matching/matching_dev.py fit --model {args.model} --features '{args.features}' "
        f"--candidates {args.candidates}",
        "dev_cross_fitted": {k: metrics[k] for k in ("accuracy", "recall_at_p90", "best_f1", "candidate_recall")},
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    checks = {str(row[0]): precision_at(tables, cross, row[1]) for row in calibration if row[0] in (0.8, 0.9, 0.95)}
    combination.meta["dev_auto_threshold"] = checks
    print(json.dumps(combination.meta, indent=1))
    key = args.key or encoder.name
    store_learned(key, combination)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"fit-{key.replace(':', '-').replace('/', '-')}.json").write_text(
        json.dumps({"combination": combination.to_dict(), "dev": metrics}, indent=1)
    )
    print(f"wrote {LEARNED_FILE} (key {key!r})", file=sys.stderr)


def evaluate(args) -> None:
    """Score named combinations (the shipped ones) on a split: accuracy, R@P90, best F1, and the precision the
    calibrated ``threshold="auto"`` reaches (mean over datasets; the done-when: within 0.02 of the target)."""
    encoder = CachedEncoder(args.model)
    tables = load_tables(args.split, encoder, args.candidates)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "split": args.split, "datasets": [t.name for t in tables], "rows": {}}  # fmt: skip
    shipped = {
        "blend": BLEND,
        **{f"learned[{k}]": Combination.from_dict(v) for k, v in learned.shipped_learned().items()},
    }
    for name, combination in shipped.items():
        idx = [FEATURES.index(f) for f in combination.features]
        scores = {t.name: combination.score(t.features[..., idx], t.valid) for t in tables}
        result = summarise({t.name: table_metrics(t, scores[t.name]) for t in tables})
        if combination.calibration:
            result["auto_threshold"] = {
                str(target): {"threshold": combination.threshold_for(target),
                              **precision_at(tables, scores, combination.threshold_for(target))}
                for target in (0.8, 0.85, 0.9, 0.95)
            }  # fmt: skip
        report["rows"][name] = result
        print_row(name, result)
        for target, check in result.get("auto_threshold", {}).items():
            print(f"    auto @ {target}: threshold {check['threshold']:.3f} precision {check['precision']:.3f} "
                  f"recall {check['recall']:.3f}")  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"evaluate-{args.split}-{args.tag or encoder.name.replace(':', '-').replace('/', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


# ------------------------------------------------------------------------------------------------------- log
LOG = Path("docs/experiments/matching.md")
DOCS = Path("docs/fuzzy-joins.md")


def _row_cells(result: dict) -> list[str]:
    proxy = result.get("alias_proxy", {})
    cells = [f"{100 * result[k]:.1f}" for k in ("accuracy", "recall_at_p90", "best_f1", "candidate_recall")]
    cells += [f"{proxy[k]:.3f}" if k in proxy else "–" for k in ("name->alias", "alias->name")]
    return cells


def study_table(report: dict) -> str:
    lines = ["| matcher (dev-10, leave one dataset out) | accuracy | recall at P 0.9 | best F1 | candidates hold gold | "
             "alias proxy name->alias | alias->name |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, result in report["rows"].items():
        lines.append(f"| {name} | " + " | ".join(_row_cells(result)) + " |")
    return (
        "\n".join(lines) + f"\n\nFrom `{report['file']}` (encoder {report['model']}, {report['candidates']} "
        "candidates per channel, created " + report["created"][:16] + ")."
    )


PROXY_LABELS = {
    "emb alone": "raw MiniLM cosine",
    "char alone": "char TF-IDF",
    "word alone": "word TF-IDF",
    "blend emb + 0.5 char": "blend (MiniLM + 0.5 x char TF-IDF)",
    "listwise +hub": "listwise +hub (the study's cross-fitted row)",
    "shipped default": "**the default** (hybrid, as shipped)",
}


def proxy_table(report: dict, rows: list[str]) -> str:
    sources = sorted({k.split(":", 1)[1] for r in rows for k in report["rows"][r]["alias_proxy"] if ":" in k})
    groups = dict(report["rows"][rows[0]]["alias_proxy"]["groups_per_source"])
    groups["all"] = report["rows"][rows[0]]["alias_proxy"]["groups"]
    head = "| matcher | " + " | ".join(f"{d} {s} ({groups.get(s, '?')})" for d in ("name->alias", "alias->name")
                                         for s in ["all"] + sources) + " |"  # fmt: skip
    lines = [head, "|---|" + "---:|" * (2 * (len(sources) + 1))]
    for r in rows:
        proxy = report["rows"][r]["alias_proxy"]
        cells = [f"{proxy[d if s == 'all' else f'{d}:{s}']:.3f}" for d in ("name->alias", "alias->name")
                 for s in ["all"] + sources]  # fmt: skip
        lines.append(f"| {PROXY_LABELS.get(r, r)} | " + " | ".join(cells) + " |")
    return (
        "\n".join(lines)
        + f"\n\nMRR on the alias proxy (`experiments/matching/matching_alias_proxy.py`; groups per part in "
        f"brackets, {report['rows'][rows[0]]['alias_proxy']['groups']} in all), from `{report['file']}`."
    )


FORMATS = {"pct": lambda v: f"{100 * v:.1f}", "mrr": lambda v: f"{v:.3f}", "raw": lambda v: f"{v}"}


def simple_table(report: dict, title: str, columns: list[tuple[str, str, str]]) -> str:
    """One row per result, columns ``(dotted key, label, format: pct | mrr | raw)``."""
    lines = [f"| {title} | " + " | ".join(label for _, label, _ in columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, result in report["rows"].items():
        cells = []
        for key, _, fmt in columns:
            value = result
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            cells.append("–" if value is None else FORMATS[fmt](value))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n\nFrom `{report['file']}` (created {report['created'][:16]})."


def evaluate_table(report: dict) -> str:
    lines = ["| combination | accuracy | recall at P 0.9 | best F1 | auto 0.8: precision / recall | "
             "auto 0.9 | auto 0.95 |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, result in report["rows"].items():
        cells = [f"{100 * result[k]:.1f}" for k in ("accuracy", "recall_at_p90", "best_f1")]
        for target in ("0.8", "0.9", "0.95"):
            check = result.get("auto_threshold", {}).get(target)
            cells.append(f"{check['precision']:.3f} / {check['recall']:.3f}" if check else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return (
        "\n".join(lines) + f"\n\nFrom `{report['file']}` ({report['split']} split, encoder {report['model']}, "
        f"created {report['created'][:16]})."
    )


def fit_table(report: dict) -> str:
    """The shipped combination: its weights, and its cross-fitted dev metrics and auto-threshold checks."""
    combination = report["combination"]
    meta = combination["meta"]
    lines = ["| feature | weight |", "|---|---:|"]
    lines += [f"| `{f}` | {w:.3f} |" for f, w in zip(combination["features"], combination["weights"])]
    a, b, c = combination["probability"]
    lines += ["", f"Probability map: a = {a:.3f}, b = {b:.3f}, c = {c:.3f}.", "",
              "| dev-10, cross-fitted | accuracy | recall at P 0.9 | best F1 | candidates hold gold |",
              "|---|---:|---:|---:|---:|",
              "| shipped combination | " + " | ".join(f"{100 * meta['dev_cross_fitted'][k]:.1f}" for k in
                                                 ("accuracy", "recall_at_p90", "best_f1", "candidate_recall")) + " |",
              "", "| `threshold=\"auto\"` target | threshold | dev precision (mean over datasets) | dev recall |",
              "|---:|---:|---:|---:|"]  # fmt: skip
    rows = {str(r[0]): r for r in combination["calibration"]}
    for target, check in meta["dev_auto_threshold"].items():
        lines.append(f"| {target} | {rows[target][1]:.3f} | {check['precision']:.3f} | {check['recall']:.3f} |")
    return "\n".join(lines) + f"\n\nFrom `{report['file']}` (`{meta['command']}`, created {meta['created'][:16]})."


def _with_file(name: str, report: dict) -> dict:
    return {**report, "file": str(RESULTS / name)}


def render_dev_study(report: dict) -> str:
    return study_table(_with_file("dev-study-baseline-minilm-l6.json", report))


def render_study_alias_proxy(report: dict) -> str:
    rows = [r for r in ("emb alone", "char alone", "blend emb + 0.5 char", "listwise +hub") if r in report["rows"]]
    return proxy_table(_with_file("dev-study-baseline-minilm-l6.json", report), rows)


def render_alias_check(report: dict) -> str:
    return proxy_table(_with_file("alias-check-baseline-minilm-l6.json", report), list(report["rows"]))


def render_dev_candidates(report: dict) -> str:
    return simple_table(_with_file("dev-candidates-baseline-minilm-l6.json", report), "candidates per channel", [
        ("accuracy", "accuracy", "pct"), ("recall_at_p90", "recall at P 0.9", "pct"),
        ("candidate_recall", "candidates hold gold", "pct"),
        ("feature_seconds", "seconds (candidates + features, dev-10)", "raw")])  # fmt: skip


def render_dev_embedded(report: dict) -> str:
    return simple_table(_with_file("dev-embedded-lexical-baseline-minilm-l6.json", report),
                        "embedded lexical channel (one cosine)", [
        ("accuracy", "dev accuracy", "pct"), ("alias_proxy.name->alias", "alias proxy name->alias", "mrr"),
        ("alias_proxy.alias->name", "alias->name", "mrr")])  # fmt: skip


def render_dev_fit(report: dict) -> str:
    return fit_table(_with_file("fit-baseline-minilm-l6.json", report))


def render_evaluate_test(report: dict) -> str:
    return evaluate_table(_with_file("evaluate-test-baseline-minilm-l6.json", report))


#: block -> (page, results file under RESULTS, renderer); docs/blocks.yaml registers the same renderers
BLOCKS = {
    "dev-study": (LOG, "dev-study-baseline-minilm-l6.json", render_dev_study),
    "alias-proxy-study": (LOG, "dev-study-baseline-minilm-l6.json", render_study_alias_proxy),
    "alias-proxy": (DOCS, "alias-check-baseline-minilm-l6.json", render_alias_check),
    "dev-candidates": (LOG, "dev-candidates-baseline-minilm-l6.json", render_dev_candidates),
    "dev-embedded": (LOG, "dev-embedded-lexical-baseline-minilm-l6.json", render_dev_embedded),
    "dev-fit": (LOG, "fit-baseline-minilm-l6.json", render_dev_fit),
    "evaluate-test-baseline-minilm-l6": (LOG, "evaluate-test-baseline-minilm-l6.json", render_evaluate_test),
}


def write_log(args) -> None:
    """Render the study's results files into their blocks (docs/experiments/matching.md, docs/fuzzy-joins.md)."""
    from phrasezoo.core.files import write_readme_table

    for block, (page, name, render) in BLOCKS.items():
        if (RESULTS / name).exists():
            write_readme_table(page, render(json.loads((RESULTS / name).read_text())), block)
    print(f"wrote the blocks of {LOG} and {DOCS}", file=sys.stderr)


def alias_check(args) -> None:
    """The shipped default (``default_combination``) against raw MiniLM, char TF-IDF and the blend on the alias proxy:
    the issue's check that the default ranks true aliases above near-miss siblings at least as well as raw MiniLM."""
    encoder = CachedEncoder(args.model)
    groups = load_alias_groups()
    combinations = {
        "emb alone": Combination(["emb"], [1.0]),
        "char alone": Combination(["char"], [1.0]),
        "blend emb + 0.5 char": BLEND,
        "shipped default": learned.default_combination(encoder.name),
    }
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "command": f"OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/matching_dev.py alias-check --model {args.model}",
              "rows": {}}  # fmt: skip
    for name, combination in combinations.items():
        proxy = alias_mrr(groups, proxy_scorer(encoder, groups, combination))
        report["rows"][name] = {"alias_proxy": proxy, "combination": combination.to_dict()}
        print(f"{name:24s} n->a {proxy['name->alias']:.3f} a->n {proxy['alias->name']:.3f}", flush=True)
    out = RESULTS / f"alias-check-{encoder.name.replace(':', '-').replace('/', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("study", help="the dev study (see the module docstring)")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--tag", help="results file suffix")
    p.set_defaults(func=study)
    p = sub.add_parser("candidates", help="candidates per channel (K) for one feature set")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.add_argument("--features", default="+hub", choices=list(FEATURE_SETS))
    p.add_argument("--values", type=int, nargs="+", default=[10, 20, 40])
    p.set_defaults(func=study_candidates)
    p = sub.add_parser("alias-check", help="the shipped default against raw MiniLM on the alias proxy")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.set_defaults(func=alias_check)
    p = sub.add_parser("log", help="render the results files into docs/experiments/matching.md")
    p.set_defaults(func=write_log)
    p = sub.add_parser("fit", help="train the chosen combination on dev-10 and write it into learned.json")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--features", default="+hub", choices=list(FEATURE_SETS), help="feature set of the study")
    p.add_argument("--key", help="encoder name the combination is stored under (default: the model's name)")
    p.set_defaults(func=fit)
    p = sub.add_parser("evaluate", help="score the shipped combinations on a split (test: final report only)")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    p.add_argument("--tag", help="results file suffix")
    p.set_defaults(func=evaluate)
    args = parser.parse_args()
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    args.func(args)


if __name__ == "__main__":
    main()
