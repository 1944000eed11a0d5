"""The pieces of issue 64's study that read the cached joins of ``open_world.py build``: each query's top answer
under a ranking, the decision features, the decision models, the ways to choose a threshold and the protocol's
metrics (precision and recall of the kept matches, absent-partner rows matched, the oracle recall)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from phrasezoo.match.features.pairs import FEATURES
from phrasezoo.match.model.decision import CLAIM_INPUTS, NEEDS, answer_inputs, claim_inputs

TARGETS = (0.8, 0.9, 0.95)


@dataclass
class Answers:
    """Each query's top answer in one join under a ranking: what a decision reads."""

    name: str
    domain: str
    world: str
    weight: float
    top_row: np.ndarray  # (n,) the top candidate's reference row (-1: no candidate)
    correct: np.ndarray  # (n,) the top candidate is the gold
    present: np.ndarray  # (n,) the gold is in the reference
    x: dict[str, np.ndarray]  # decision features, (n,) each


def ranking_scores(join, weights: np.ndarray, names: list[str]) -> np.ndarray:
    idx = [FEATURES.index(f) for f in names]
    return np.where(join.valid, join.features[..., idx] @ weights, -np.inf)


def self_scores(join, weights: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per self-join row: its best and second-best ranking score against the other reference rows."""
    idx = [FEATURES.index(f) for f in names]
    z = np.where(join.self_ids >= 0, join.self_features[..., idx] @ weights, -np.inf)
    z = -np.sort(-z, axis=1)
    best = np.where(np.isfinite(z[:, 0]), z[:, 0], np.nan)
    second = np.where(np.isfinite(z[:, 1]), z[:, 1], np.nan) if z.shape[1] > 1 else np.full(len(z), np.nan)
    return best, second


#: the product's table level of each cached join (``open_world.py levels``): name/world -> level
TABLE_LEVELS: dict[str, float] = {}


def answers(join, weights: np.ndarray, names: list[str]) -> Answers:
    """The top answer of every query of ``join`` under the ranking ``weights`` over ``names``, with its features:
    the product's decision inputs (:func:`phrasezoo.match.model.decision.answer_inputs`, the same code) and the
    study's other candidates."""
    z = ranking_scores(join, weights, names)
    order = np.argsort(-z, axis=1, kind="stable")
    rows = np.arange(len(z))
    top = order[:, 0]
    z1 = z[rows, top]
    z2 = z[rows, order[:, 1]] if z.shape[1] > 1 else np.full(len(z), -np.inf)
    top_row = np.where(np.isfinite(z1), join.ids[rows, top], -1)
    correct = (top_row == join.gold) & (join.gold >= 0)
    sib_best, sib_second = self_scores(join, weights, names)
    where = {int(r): i for i, r in enumerate(join.self_rows)}
    sampled = sib_best[join.self_sampled]
    t50, t90 = (np.nanquantile(sampled, q) for q in (0.5, 0.9))
    sib = np.array([sib_best[where[r]] if r in where else np.nan for r in top_row.tolist()])
    sib = np.where(np.isnan(sib), t90, sib)  # a top row outside the self-join: the table's 90th percentile
    z1f = np.where(np.isfinite(z1), z1, np.nan)
    null = np.sort(sampled[np.isfinite(sampled)])
    # the share of the table's own distinct entities whose best other row scores at least z1: how often a
    # non-match reaches this score in this table (AutoFJ's self-join, splink's u-probability)
    tail = 1.0 - np.searchsorted(null, np.nan_to_num(z1f, nan=-np.inf), side="left") / max(1, len(null))
    margin = np.where(np.isfinite(z2), z1 - z2, 10.0)
    x = {"z": z1f, "margin": np.minimum(margin, 10.0), "sibling_gap": z1f - sib, "table_gap": z1f - t90,
         "table_spread": np.full(len(z1), t90 - t50), "table_level": np.full(len(z1), t90),
         "null_tail": tail, "log_null_tail": np.log(tail + 1.0 / (len(null) + 1))}  # fmt: skip
    for f in FEATURES:
        x[f"top_{f}"] = join.features[rows, top, FEATURES.index(f)]
    # the top row's cosines against its own nearest other row (the hub features every candidate has already)
    x["emb_hub_gap"] = x["top_emb"] - x["top_emb_hub"]
    x["char_hub_gap"] = x["top_char"] - x["top_char_hub"]
    # round 11: the competition for the top row over the join's queries (the product's function)
    claims = claim_inputs(top_row, z1f)
    x["claim_gap"], x["log_claimants"] = claims["claim_gap"], claims["log_claimants"]
    level = TABLE_LEVELS.get(f"{join.split}/{join.name}/{join.world}", t90)
    pair = {need: join.features[..., FEATURES.index(need)] for need in NEEDS}
    product = answer_inputs(np.where(join.valid, z, 0.0), join.valid, pair, level)
    for key, values in product.items():
        x[f"input:{key}"] = values[rows, top]
    for key in CLAIM_INPUTS:  # the product reads them over the queries searched together: here, the join's
        x[f"input:{key}"] = claims[key]
    ok = np.isfinite(z1)
    for key in x:
        x[key] = np.where(ok, np.nan_to_num(x[key], nan=0.0), 0.0).astype(np.float64)
    return Answers(join.name, join.domain, join.world, join.weight, top_row, correct, join.gold >= 0, x)


# ---------------------------------------------------------------------------------------------- decisions
def kept_metrics(a: Answers, kept: np.ndarray) -> dict[str, float]:
    """Precision of the kept answers (1 when none is kept), recall over the queries whose partner is present, and
    the share of absent-partner queries that got a match."""
    right = kept & a.correct
    absent = ~a.present
    return {
        "precision": float(right.sum() / kept.sum()) if kept.any() else 1.0,
        "recall": float(right.sum() / max(1, a.present.sum())),
        "absent_matched": float((kept & absent).sum() / absent.sum()) if absent.any() else float("nan"),
        "kept": float(kept.mean()),
    }


def oracle_recall(a: Answers, score: np.ndarray, target: float) -> float:
    """The best recall of any threshold on ``score`` whose precision reaches ``target`` (read on the same join)."""
    order = np.argsort(-score, kind="stable")
    correct = a.correct[order].astype(np.float64)
    cum = np.cumsum(correct)
    precision = cum / np.arange(1, len(order) + 1)
    # a threshold keeps a prefix that ends where the next score is lower (ties kept together)
    s = score[order]
    ends = np.r_[s[1:] < s[:-1], True]
    ok = ends & (precision >= target)
    return float(cum[ok].max() / max(1, a.present.sum())) if ok.any() else 0.0


def adaptive_cut(p: np.ndarray, target: float) -> float:
    """The lowest probability ``θ`` whose kept answers (``p >= θ``) have a mean probability of at least ``target``:
    the join's own estimate of its precision, without labels. Returns ``inf`` when no cut reaches it."""
    order = np.sort(p)[::-1]
    means = np.cumsum(order) / np.arange(1, len(order) + 1)
    ends = np.r_[order[1:] < order[:-1], True]
    ok = np.flatnonzero(ends & (means >= target))
    return float(order[ok[-1]]) if ok.size else float("inf")


def weighted_mean(values: list[float], weights: list[float]) -> float:
    v = np.array(values, dtype=np.float64)
    w = np.array(weights, dtype=np.float64)
    keep = ~np.isnan(v)
    return float(np.average(v[keep], weights=w[keep])) if keep.any() else float("nan")


# ---------------------------------------------------------------------------------------------- training
def fit_ranking(dev_joins: list, names: list[str]) -> np.ndarray:
    """Listwise ranking weights over ``names`` on the given dev joins (closed world: an open join's absent
    queries have no gold to rank and are left out by the listwise loss), domains weighted equally."""
    from matching_dev import fit_listwise

    return fit_listwise(dev_joins, names)


def balanced_weights(groups: list[Answers]) -> np.ndarray:
    """Row weights giving every domain the same total (its joins and worlds sharing it by their weights)."""
    domains = sorted({a.domain for a in groups})
    total = {d: sum(a.weight for a in groups if a.domain == d) for d in domains}
    return np.concatenate([np.full(len(a.correct), a.weight / total[a.domain] / len(a.correct)) for a in groups])


def design(groups: list[Answers], keys: list[str]) -> np.ndarray:
    return np.concatenate([np.stack([a.x[k] for k in keys], 1) for a in groups])


@dataclass
class Decision:
    """A logistic model of "the top answer is the query's entity" over decision features ``keys``."""

    keys: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def probability(self, a: Answers) -> np.ndarray:
        x = (np.stack([a.x[k] for k in self.keys], 1) - self.mean) / self.scale
        z = x @ self.coef + self.intercept
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))
        return np.where(a.top_row >= 0, p, 0.0)


def fit_decision(groups: list[Answers], keys: list[str], c: float = 1.0) -> Decision:
    from sklearn.linear_model import LogisticRegression

    x = design(groups, keys)
    y = np.concatenate([a.correct for a in groups])
    w = balanced_weights(groups)
    mean, scale = x.mean(0), x.std(0) + 1e-9
    model = LogisticRegression(C=c, max_iter=5000)
    model.fit((x - mean) / scale, y, sample_weight=w / w.mean())
    return Decision(list(keys), mean, scale, model.coef_[0], float(model.intercept_[0]))


def domain_mean(groups: list[Answers], probabilities: list[np.ndarray], cut: float, key: str) -> float:
    """A metric of the answers kept at ``cut``, averaged over the domains (each domain's joins and worlds by weight):
    the precision table_cuts reads, the training recall the shipped decision records."""
    per: dict[str, list] = {}
    for a, p in zip(groups, probabilities):
        per.setdefault(a.domain, []).append((kept_metrics(a, p >= cut)[key], a.weight))
    return float(np.mean([np.average([v for v, _ in r], weights=[w for _, w in r]) for r in per.values()]))


def table_cuts(groups: list[Answers], probabilities: list[np.ndarray], targets=TARGETS) -> dict[float, float]:
    """Per target, the lowest probability cut whose precision, averaged over the domains (each domain's joins and
    worlds by weight), reaches it on the training answers."""
    grid = np.unique(np.round(np.concatenate(probabilities), 4))
    cuts = {}
    for t in targets:
        chosen = 1.0
        for cut in grid:
            if domain_mean(groups, probabilities, cut, "precision") >= t:
                chosen = float(cut)
                break
        cuts[t] = chosen
    return cuts


# ---------------------------------------------------------------------------------------------- the protocol
def decision_answers(data: dict, domains: list[str], ranking, names: list[str], fold_ranking) -> list[Answers]:
    """The answers a decision model trains on, for ``domains``: the name domains' calib splits under ``ranking``
    (never fitted on them) and AutoFJ's dev tables under ``fold_ranking(parity)`` (a ranking trained without the
    tables of that parity), both worlds."""
    out = []
    for d in domains:
        for world in ("closed", "open"):
            if d == "autofj":
                for i, join in enumerate(data[(d, "dev", world)]):
                    out.append(answers(join, fold_ranking(i % 2), names))
            else:
                out += [answers(join, ranking, names) for join in data[(d, "calib", world)]]
    return out


def lodo_rankings(data: dict, held: str, names: list[str], shipped: np.ndarray | None = None):
    """The ranking that scores a held-out domain and, for AutoFJ's dev tables, one per table parity trained without
    those tables (``fold(parity)``). ``shipped`` given: the shipped ranking (trained on every domain's dev split,
    never on calib or test), folds trained on every dev join but that parity's AutoFJ tables; else the strict
    protocol: rankings trained on the other domains' dev splits only."""
    train = [d for d in data_domains(data) if d != held]
    rank_on = data_domains(data) if shipped is not None else train
    dev = [j for d in rank_on for j in data[(d, "dev", "closed")]]
    ranking = shipped if shipped is not None else fit_ranking(dev, names)
    folds = {}
    if "autofj" in rank_on:
        autofj = data[("autofj", "dev", "closed")]
        for parity in (0, 1):
            drop = {j.name for i, j in enumerate(autofj) if i % 2 == parity}
            key = (tuple(sorted(rank_on)), parity, tuple(names))
            if key not in _FOLD_CACHE:
                _FOLD_CACHE[key] = fit_ranking([j for j in dev if j.name not in drop], names)
            folds[parity] = _FOLD_CACHE[key]
    return ranking, folds.__getitem__, train


_FOLD_CACHE: dict = {}


def data_domains(data: dict) -> list[str]:
    return sorted({d for d, _, _ in data})


def judge(a: Answers, p: np.ndarray, cut: float) -> dict[str, float]:
    return kept_metrics(a, p >= cut)


def prior_shift(p: np.ndarray, train_rate: float, iterations: int = 100) -> tuple[np.ndarray, float]:
    """Probabilities re-weighted to this join's own rate of right answers, estimated without labels by EM (Saerens,
    Latinne and Decaestecker, 2002, "Adjusting the outputs of a classifier to new a priori probabilities"): a join
    with many absent partners has fewer right answers than the training data, and each probability shrinks to match.
    Returns the adjusted probabilities and the estimated rate."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    rate = train_rate
    for _ in range(iterations):
        up, down = rate / train_rate, (1 - rate) / (1 - train_rate)
        adjusted = up * p / (up * p + down * (1 - p))
        new = float(adjusted.mean())
        if abs(new - rate) < 1e-6:
            break
        rate = new
    return adjusted, rate


def training_rate(groups: list[Answers]) -> float:
    """The rate of right top answers a decision trained on ``groups`` carries: their balanced weighted rate (a
    logistic model's mean probability under its sample weights equals it)."""
    return float(np.average(np.concatenate([a.correct for a in groups]), weights=balanced_weights(groups)))


def rate_shifted(p: np.ndarray, a: Answers, train_rate: float) -> np.ndarray:
    """Rule 38: ``p`` re-weighted to the join's own EM-estimated rate of right answers (queries with a candidate)."""
    answered = a.top_row >= 0
    out = np.zeros_like(p, dtype=np.float64)
    if answered.any():
        out[answered] = prior_shift(p[answered], train_rate)[0]
    return out


def fdr_cut(a: Answers, target: float, pi0: float = 1.0) -> float:
    """The lowest ranking score whose estimated false discovery rate, ``pi0 * n * null_tail / kept``, is at most
    ``1 - target``: the self-join's scores stand in for the scores of wrong answers (Storey's estimate with an
    empirical null). Returns a cut on ``a.x["z"]``."""
    z = a.x["z"]
    order = np.argsort(-z, kind="stable")
    kept = np.arange(1, len(z) + 1)
    fdr = pi0 * len(z) * a.x["null_tail"][order] / kept
    ends = np.r_[z[order][1:] < z[order][:-1], True]
    ok = np.flatnonzero(ends & (fdr <= 1 - target))
    return float(z[order][ok[-1]]) if ok.size else float("inf")


def storey_pi0(a: Answers, lam: float = 0.5) -> float:
    """Rule 54: Storey's estimate of the share of nulls among the answered queries, each query's p-value its null
    tail (the share of the self-join's best scores at least as high), ``#{p > lam} / ((1 - lam) n)`` capped at 1."""
    answered = a.top_row >= 0
    if not answered.any():
        return 1.0
    return float(min(1.0, np.mean(a.x["null_tail"][answered] > lam) / (1.0 - lam)))


def switch_kept(a: Answers, p: np.ndarray, table_cut: float, target: float, share: float = 0.1) -> np.ndarray:
    """Rule 54's *switch*: the fdr cut with Storey's ``pi0`` where it keeps at least ``share`` of the answered
    queries, else the decision's table cut."""
    answered = a.top_row >= 0
    by_fdr = (a.x["z"] >= fdr_cut(a, target, storey_pi0(a))) & answered
    if answered.any() and by_fdr.sum() >= share * answered.sum():
        return by_fdr
    return p >= table_cut


# ---------------------------------------------------------------------------------------------- a few labels
def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def recalibrate(p: np.ndarray, y: np.ndarray, prior_scale: tuple[float, float] = (0.5, 1.0)) -> tuple[float, float]:
    """``(a, b)`` of ``P(right) = sigmoid(a logit(p) + b)``: the MAP fit to labelled answers under a Gaussian prior
    centred on the model as it is (a = 1, b = 0), so that a handful of labels moves it only as far as they show."""
    x = logit(p)
    w = np.array([1.0, 0.0])
    prior = np.array([1.0, 0.0])
    precision = 1.0 / np.square(np.array(prior_scale))
    for _ in range(50):
        z = w[0] * x + w[1]
        q = 1.0 / (1.0 + np.exp(-z))
        grad = np.array([np.sum((q - y) * x), np.sum(q - y)]) + precision * (w - prior)
        h = q * (1 - q)
        hess = np.array([[np.sum(h * x * x), np.sum(h * x)], [np.sum(h * x), np.sum(h)]]) + np.diag(precision)
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])


def apply_recalibration(p: np.ndarray, ab: tuple[float, float]) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(ab[0] * logit(p) + ab[1])))


def next_to_label(p: np.ndarray, labelled: np.ndarray, cut: float) -> int:
    """The unlabelled answer whose probability is nearest the current cut (its decision is the least certain)."""
    distance = np.where(labelled, np.inf, np.abs(logit(p) - logit(np.array([min(max(cut, 1e-6), 1 - 1e-6)]))[0]))
    return int(np.argmin(distance))


def label_loop(p: np.ndarray, truth: np.ndarray, target: float, budget: int) -> tuple[float, np.ndarray, tuple]:
    """Simulated labelling of one join: ask about the least certain answer, refit the recalibration, move the cut,
    ``budget`` times; returns the final cut on the original probabilities' recalibrated scale, the recalibrated
    probabilities and ``(a, b)``."""
    labelled = np.zeros(len(p), dtype=bool)
    ab = (1.0, 0.0)
    cut = adaptive_cut(p, target)
    for _ in range(min(budget, len(p))):
        i = next_to_label(apply_recalibration(p, ab), labelled, cut if np.isfinite(cut) else 1.0)
        labelled[i] = True
        ab = recalibrate(p[labelled], truth[labelled].astype(np.float64))
        cut = adaptive_cut(apply_recalibration(p, ab), target)
    q = apply_recalibration(p, ab)
    return cut, q, ab


def shift_fit(p: np.ndarray, y: np.ndarray, prior_scale: float = 1.5) -> float:
    """``b`` of ``P(right) = sigmoid(logit p + b)``: the MAP shift of the model's log-odds given labelled answers,
    under a Gaussian prior centred on the model as it is (one number: stable with a handful of labels)."""
    x = logit(p)
    b = 0.0
    for _ in range(200):
        q = 1.0 / (1.0 + np.exp(-(x + b)))
        grad = np.sum(q - y) + b / prior_scale**2
        hess = np.sum(q * (1 - q)) + 1.0 / prior_scale**2
        step = float(np.clip(grad / hess, -1.0, 1.0))  # damped: an undamped Newton step oscillates on flat tails
        b -= step
        if abs(step) < 1e-9:
            break
    return float(b)


def labelled_cut(p: np.ndarray, known: np.ndarray, truth: np.ndarray, target: float) -> float:
    """The lowest probability whose kept answers' expected precision reaches ``target``: labelled answers count
    as what they were labelled, the others by their (recalibrated) probability."""
    expected = np.where(known, truth, p)
    order = np.argsort(-p, kind="stable")
    means = np.cumsum(expected[order]) / np.arange(1, len(p) + 1)
    s = p[order]
    ends = np.r_[s[1:] < s[:-1], True]
    ok = np.flatnonzero(ends & (means >= target))
    return float(s[ok[-1]]) if ok.size else float("inf")


def honoured_kept(q: np.ndarray, cut: float, labelled: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Rule 49: the answers the product keeps since labels win over the threshold: the threshold's, minus those
    labelled wrong, plus those labelled right."""
    return ((q >= cut) & ~(labelled & ~truth)) | (labelled & truth)


def kept_labelled_cut(p: np.ndarray, known: np.ndarray, truth: np.ndarray, target: float) -> float:
    """Rule 50: the lowest probability at which the kept set of a labelled join (:func:`honoured_kept`: the
    unlabelled answers at or above it, by their probability, plus every answer labelled right) is expected to reach
    ``target``; answers labelled wrong count nowhere."""
    base = float((known & truth.astype(bool)).sum())
    free = ~known
    s = np.sort(p[free])[::-1]
    if not s.size:
        return float("inf")
    means = (base + np.cumsum(s)) / (base + np.arange(1, s.size + 1))
    ends = np.r_[s[1:] < s[:-1], True]
    ok = np.flatnonzero(ends & (means >= target))
    return float(s[ok[-1]]) if ok.size else float("inf")


def label_loop_shift(p: np.ndarray, truth: np.ndarray, target: float, budget: int,
                     with_labelled: bool = False, kept_cut: bool = False, ask: str = "near",
                     platt: bool = False, seed: int | None = None) -> tuple:  # fmt: skip
    """Simulated labelling, one parameter: ask about the unlabelled answer nearest the current cut, refit the
    log-odds shift, set the cut from labels and shifted probabilities; ``budget`` times. ``(cut, q)``, and the
    labelled answers with ``with_labelled``; ``kept_cut``: rule 50's cut (:func:`kept_labelled_cut`) throughout.
    Rule 51: ``ask="audit"`` alternates the question nearest the cut with a seeded random one among the answers the
    cut keeps (:func:`audit_question`: a generator seeded with ``seed``, or without one the draw the product would
    have made, seeded by the question's number); ``platt`` refits the two-parameter recalibration instead of the
    shift."""
    cut_of = kept_labelled_cut if kept_cut else labelled_cut
    rng = np.random.default_rng(seed)
    labelled = np.zeros(len(p), dtype=bool)
    q = p.copy()
    cut = cut_of(q, labelled, truth, target)
    for step in range(min(budget, len(p))):
        if ask == "audit" and step % 2 == 1:
            draw = rng if seed is not None else np.random.default_rng([PRODUCT_AUDIT_SEED, step])
            labelled[audit_question(q, labelled, cut, draw)] = True
        else:
            anchor = cut if np.isfinite(cut) else float(q.max())
            distance = np.where(labelled, np.inf, np.abs(logit(q) - logit(np.array([anchor]))[0]))
            labelled[int(np.argmin(distance))] = True
        y = truth[labelled].astype(np.float64)
        if platt:
            q = apply_recalibration(p, recalibrate(p[labelled], y))
        else:
            q = 1.0 / (1.0 + np.exp(-(logit(p) + shift_fit(p[labelled], y))))
        cut = cut_of(q, labelled, truth.astype(np.float64), target)
    return (cut, q, labelled) if with_labelled else (cut, q)


#: rule 51's check: the seed a product session would have drawn its random questions with (with the question's number)
PRODUCT_AUDIT_SEED = 51


def audit_question(q: np.ndarray, labelled: np.ndarray, cut: float, rng: np.random.Generator) -> int:
    """Rule 51: a uniformly random unlabelled answer among those the current cut keeps; when it keeps none, the
    unlabelled answer of highest probability."""
    pool = np.flatnonzero(~labelled & (q >= cut))
    if pool.size:
        return int(rng.choice(pool))
    return int(np.argmax(np.where(labelled, -np.inf, q)))
