"""Issue 47: why the default matcher falls below char TF-IDF at a million names, read on growing subsets.

At 1M x 1M (``results/matching/scale-1m.json``) the default matcher's top-1 was 45.4 against 47.3 for char TF-IDF
alone and 63.8 for rapidfuzz. Two explanations compete: its candidates lose the true row (a recall problem), or the
learned combination ranks it below a look-alike once every row has near twins (a ranking problem). This script fits
the default matcher on ``n x n`` subsets of the same tables (``benchmarks/match_scale.py``'s first right rows and
the left rows they were made from, so every size holds each query's true row) and, on one seeded sample of queries
per size, scores the same candidate sets several ways:

* the default combination (what ships);
* each channel alone among the candidates (character cosine, embedding cosine);
* rapidfuzz ``token_sort_ratio`` among the candidates (the 1M table's best method, confined to our candidates);
* the default combination with its two neighbourhood terms (``emb_hub``, ``char_hub``) left out: a diagnostic of
  the crowding features, not a candidate to ship (its other weights were learned with them).

It also reports the candidate recall (the true row among the candidates) and the neighbourhood terms' mean over the
true rows and over all candidates. Nothing here is chosen on a benchmark's test split; the tables are the scale
benchmark's own.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/scale_diagnosis.py --sizes 32768 131072
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from match_scale import load_tables, sample_rows  # noqa: E402

OUT = Path("results/matching/experiments/scale-diagnosis.json")
HUB = ("emb_hub", "char_hub")


def top1(scores: np.ndarray, cands: np.ndarray) -> np.ndarray:
    """The candidate row with the highest score per query (-1 when a query has none)."""
    scores = np.where(cands >= 0, scores, -np.inf)
    best = np.argmax(scores, axis=1)
    picked = np.take_along_axis(cands, best[:, None], 1)[:, 0]
    return np.where(np.isfinite(scores.max(1)), picked, -1)


def rapidfuzz_scores(queries: list[str], cands: np.ndarray, reference: list[str]) -> np.ndarray:
    from rapidfuzz import fuzz, utils

    out = np.full(cands.shape, -np.inf, dtype=np.float32)
    for i, query in enumerate(queries):
        for j, row in enumerate(cands[i]):
            if row >= 0:
                out[i, j] = fuzz.token_sort_ratio(query, reference[row], processor=utils.default_process)
    return out


def diagnose(folder: Path, size: int, sample: int, seed: int, also: dict[str, Path] | None = None) -> dict:
    """Every reading of the module docstring for the ``size x size`` subset; ``also``: more combinations (label ->
    a ``{"combination": ...}`` file, e.g. a former default's fit) scored on the same candidates."""
    from phrasezoo.match import Matcher
    from phrasezoo.match.model.combinations import Combination

    left, right, truth = load_tables(folder, size)
    rows = sample_rows(len(right), sample, seed)
    queries, gold = [right[i] for i in rows], truth[rows]
    start = time.perf_counter()
    matcher = Matcher("hybrid", progress=False).fit(left)
    fit_seconds = time.perf_counter() - start
    scorer = matcher.scorer
    combination = scorer.combination
    qv = scorer.encode(queries)
    sv = scorer.static_vectors(queries)
    cands = scorer.candidate_ids(queries, qv, static_vectors=sv)
    others = {label: Combination.from_dict(json.loads(path.read_text())["combination"])
              for label, path in (also or {}).items()}  # fmt: skip
    names = list(combination.features)
    every = names + sorted({f for c in others.values() for f in c.features} - set(names))
    feats_all = scorer.features(queries, cands, qv, names=every, static_vectors=sv)
    feats = feats_all[..., : len(names)]
    weights = np.asarray(combination.weights, dtype=np.float32)
    no_hub = weights.copy()
    for name in HUB:
        if name in names:
            no_hub[names.index(name)] = 0.0
    valid = cands >= 0
    readings = {
        "default combination": combination.rank_score(feats),
        "char cosine among candidates": feats[..., names.index("char")],
        "embedding cosine among candidates": feats[..., names.index("emb")],
        "rapidfuzz token_sort_ratio among candidates": rapidfuzz_scores(queries, cands, left),
        "default without its neighbourhood terms (diagnostic)": feats @ no_hub,
    }
    for label, other in others.items():
        readings[label] = other.rank_score(feats_all[..., [every.index(f) for f in other.features]])
    in_cands = (cands == gold[:, None]).any(1)
    gold_mask = cands == gold[:, None]
    hub = {}
    for name in HUB:
        if name in names:
            column = feats[..., names.index(name)]
            hub[name] = {"true_rows": float(column[gold_mask].mean()), "all_candidates": float(column[valid].mean())}
    return {
        "size": size,
        "queries": len(rows),
        "fit_seconds": round(fit_seconds, 1),
        "candidates_per_query": float(valid.sum(1).mean()),
        "candidate_recall": float(in_cands.mean()),
        "combination": combination.meta.get("feature_set", ""),
        "top1": {label: float(np.mean(top1(s, cands) == gold)) for label, s in readings.items()},
        "neighbourhood_means": hub,
        "weights": dict(zip(names, map(float, weights))),
    }


def render(report: dict) -> str:
    """One row per reading, one column per size: top-1 among the same candidates, and their recall."""
    sizes = report["rows"]
    head = (
        "| reading (same candidates per size) | " + " | ".join(f"{r['size']:,} x {r['size']:,}" for r in sizes) + " |"
    )
    lines = [head, "|---|" + "---:|" * len(sizes)]
    lines.append("| candidate recall (true row among the candidates) | "
                 + " | ".join(f"{100 * r['candidate_recall']:.1f}" for r in sizes) + " |")  # fmt: skip
    for label in sizes[0]["top1"]:
        lines.append(f"| top-1: {label} | " + " | ".join(f"{100 * r['top1'][label]:.1f}" for r in sizes) + " |")
    for name in HUB:
        if name in sizes[0]["neighbourhood_means"]:
            cells = [f"{r['neighbourhood_means'][name]['true_rows']:.3f} / {r['neighbourhood_means'][name]['all_candidates']:.3f}"
                     for r in sizes]  # fmt: skip
            lines.append(f"| `{name}` mean: true rows / all candidates | " + " | ".join(cells) + " |")
    return "\n".join(lines) + (
        f"\n\n{sizes[0]['queries']:,} seeded queries per size, candidates per query about "
        f"{sizes[-1]['candidates_per_query']:.0f}; the default's feature set: `{sizes[0].get('combination', '')}`. "
        f"From `{report.get('file', OUT)}` (`{report['command']}`, {report['created'][:10]})."
    )


def main() -> None:
    from phrasezoo.resources import cache_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[32768, 131072])
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--tables", type=Path, default=None, help="the scale benchmark's table folder")
    parser.add_argument(
        "--also",
        nargs="*",
        default=[],
        metavar="LABEL=FILE",
        help="more combinations to score on the same candidates ({'combination': ...} files)",
    )
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    also = dict(item.split("=", 1) for item in args.also)
    also = {label: Path(path) for label, path in also.items()}
    folder = args.tables or cache_dir() / "match-scale" / "size-1000000-seed-0"
    if not (folder / "left.parquet").exists():
        parser.error(f"no tables in {folder}: run `benchmarks/match_scale.py --steps tables` first")
    rows = []
    for size in args.sizes:
        rows.append(diagnose(folder, size, args.sample, args.seed, also))
        print(json.dumps(rows[-1]), flush=True)
    output = "" if args.output == OUT else f" --output {args.output}"
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "rows": rows, "file": str(args.output),
              "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/scale_diagnosis.py --sizes "
                         + " ".join(map(str, args.sizes)) + f" --sample {args.sample} --seed {args.seed}"
                         + "".join(f" --also '{label}={path}'" for label, path in also.items()) + output}  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(render(report))


if __name__ == "__main__":
    main()
