"""splink with and without phrase embeddings on the AutoFJ dev datasets: precision and recall against the truth.

Each of the 10 AutoFJ dev datasets (sorted names at index % 5 == 0; DESIGN.md, "Decisions for wave 3") is a
linkage of its right table to its left table; the truth is its ``gt.csv``. splink 4 runs on DuckDB, trained
without labels as a user would: u by random sampling, m by EM (blocked on the first word), the prior set to
``1 / len(left)`` (a right row names about one left row). A pair is predicted when its match probability is at
least 0.5. Three configurations, identical except for what the row says:

* ``splink``: classic blocking (same first word, or same last word), string comparisons (Jaro-Winkler of the
  lower-cased title, shared words, equal numbers);
* ``splink + embedding blocking``: the same, plus the embedding-neighbour blocking rule (the ``k`` nearest left
  rows of every right row and back, :func:`phrasezoo.integrations.splink.add_neighbour_blocks`);
* ``splink + embedding blocking + cosine``: the same blocking, plus splink's cosine comparison of the vectors;
* ``splink + embedding blocking + the default matcher's score``: the second row's blocking plus each right row's
  pick by the default matcher, and its string comparisons plus the matcher's score
  (:func:`phrasezoo.integrations.splink_matcher.matcher_comparison`: m and u fixed from the matcher's calibration,
  not trained; EM trains the string comparisons around it);
* ``the default matcher's score alone``: only the matcher's pick is compared, with only that comparison: a pair's
  probability is the calibrated target of its score band.

The default matcher's combination and calibration were fitted on the AutoFJ dev tables among other dev data
(``results/matching/experiments/names-dev-study.json``), so its two rows here are in-sample for the matcher.

The second and third rows have the same blocking and the same other comparisons, so their difference is the
embedding comparison alone. Nothing is tuned: k = 10, the cosine levels (splink's default 0.9 / 0.8 / 0.7) and
the 0.5 cut are fixed in advance, so the dev numbers are not fitted to the dev data. No AutoFJ test dataset is
read.

    .venv/bin/python experiments/matching/splink_autofj_dev.py --output results/matching/splink-dev.json \\
        --docs docs/integrations/splink.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import re
import sys
import time
from pathlib import Path

import numpy as np

WORD = re.compile(r"[^\W_]+", re.UNICODE)
NUMBER = re.compile(r"\d+")
CONFIGS = (
    "splink",
    "splink + embedding blocking",
    "splink + embedding blocking + cosine",
    "splink + embedding blocking + the default matcher's score",
    "the default matcher's score alone",
)
MATCHER_CONFIGS = CONFIGS[3:]


def dev_names() -> list[str]:
    """The AutoFJ dev datasets of the ``autofj_dev`` task (the one definition of the split)."""
    from phrasezoo.evaluation.tasks.autofj import AutoFJDev, autofj_names

    return autofj_names(AutoFJDev.split)


def prepare(titles: list[str]):
    import pandas as pd

    words = [WORD.findall(t.lower()) for t in titles]
    numbers = [" ".join(NUMBER.findall(t)) or None for t in titles]
    return pd.DataFrame({
        "unique_id": np.arange(len(titles)),
        "title": [t.lower() for t in titles],
        "tokens": words,
        "first_word": [w[0] if w else None for w in words],
        "last_word": [w[-1] if w else None for w in words],
        "numbers": numbers,
        "original": titles,
    })  # fmt: skip


def truth_pairs(left: list[str], right: list[str], gold: dict[str, str]) -> set[tuple[int, int]]:
    """(left row, right row) pairs whose titles are a gold pair (duplicate titles give every combination)."""
    left_rows: dict[str, list[int]] = {}
    for i, title in enumerate(left):
        left_rows.setdefault(title, []).append(i)
    return {(i, j) for j, title in enumerate(right) if title in gold for i in left_rows.get(gold[title], [])}


def run_config(config: str, left, right, k: int, seed: int, matcher=None) -> tuple[set, set, set]:
    """(predicted pairs at p >= 0.5, the best of them per right row, compared pairs) of one configuration."""
    import splink.comparison_library as cl
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    from phrasezoo.integrations.splink import cosine_comparison, neighbour_blocking_rule

    comparisons = [
        cl.JaroWinklerAtThresholds("title", [0.95, 0.88, 0.7]),
        cl.ArrayIntersectAtSizes("tokens", [3, 2, 1]),
        cl.ExactMatch("numbers"),
    ]
    rules = [block_on("first_word"), block_on("last_word")]
    if config != "splink":
        rules.append(neighbour_blocking_rule())
    if config.endswith("cosine"):
        comparisons.append(cosine_comparison("title_embedding"))
    if config in MATCHER_CONFIGS:
        from phrasezoo.integrations.splink_matcher import BEST_COLUMN, matcher_comparison

        rules.append(block_on(BEST_COLUMN))
        comparisons.append(matcher_comparison(matcher, left_rows=len(left)))
        if config == MATCHER_CONFIGS[1]:
            comparisons, rules = comparisons[-1:], rules[-1:]
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=comparisons,
        blocking_rules_to_generate_predictions=rules,
        probability_two_random_records_match=1.0 / len(left),
        retain_intermediate_calculation_columns=False,
        retain_matching_columns=False,
    )
    linker = Linker([left, right], settings, db_api=DuckDBAPI(), input_table_aliases=["left_names", "right_names"])
    if config != MATCHER_CONFIGS[1]:  # the matcher's comparison alone has nothing left to train
        linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=seed)
        linker.training.estimate_parameters_using_expectation_maximisation(block_on("nearest"))
    frame = linker.inference.predict().as_pandas_dataframe()
    sides = frame["source_dataset_l"].astype(str) == "left_names"
    left_ids = np.where(sides, frame["unique_id_l"], frame["unique_id_r"]).astype(int)
    right_ids = np.where(sides, frame["unique_id_r"], frame["unique_id_l"]).astype(int)
    compared = set(zip(left_ids.tolist(), right_ids.tolist()))
    probability = frame["match_probability"].to_numpy()
    keep = probability >= 0.5
    predicted = set(zip(left_ids[keep].tolist(), right_ids[keep].tolist()))
    best: dict[int, tuple[float, int]] = {}
    for left_id, right_id, weight in zip(left_ids[keep], right_ids[keep], frame["match_weight"].to_numpy()[keep]):
        if right_id not in best or weight > best[right_id][0]:
            best[int(right_id)] = (float(weight), int(left_id))
    return predicted, {(left_id, right_id) for right_id, (_, left_id) in best.items()}, compared


def precision_recall(predicted: set, truth: set) -> dict:
    hits = len(predicted & truth)
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "predicted": len(predicted), "correct": hits}


def scores(predicted: set, best: set, compared: set, truth: set) -> dict:
    """Pairwise P/R/F1 (splink's own output) and best-per-right-row P/R/F1 (a fuzzy join's output)."""
    return {**precision_recall(predicted, truth), "true": len(truth), "compared_pairs": len(compared),
            "blocking_recall": len(compared & truth) / len(truth) if truth else 0.0,
            "best": precision_recall(best, truth)}  # fmt: skip


def evaluate(names: list[str], model: str, k: int, seed: int, configs=CONFIGS) -> dict:
    import pandas as pd

    from phrasezoo.evaluation.tasks.autofj import read_autofj
    from phrasezoo.integrations.splink import add_embedding_column, add_neighbour_blocks
    from phrasezoo.integrations.splink_tables import resolve_encoder

    encoder = resolve_encoder(model)
    per_dataset: dict[str, dict] = {}
    seconds = {c: 0.0 for c in configs}
    matcher = None
    if set(configs) & set(MATCHER_CONFIGS):
        from phrasezoo.match import Matcher

        matcher = Matcher(progress=False)
    for table in read_autofj(names):
        left, right = prepare(table.left), prepare(table.right)
        left = add_embedding_column(left, "original", encoder, "title_embedding", progress=False)
        right = add_embedding_column(right, "original", encoder, "title_embedding", progress=False)
        left, right = add_neighbour_blocks([left, right], "title_embedding", k=k, nearest_column="nearest")
        if matcher is not None:
            from phrasezoo.integrations.splink_matcher import add_matcher_scores

            matcher.fit(list(table.left), list(range(len(table.left))))
            (left, right), matcher = add_matcher_scores([left, right], "original", matcher=matcher, progress=False)
        left, right = (t.drop(columns=["original"]) for t in (left, right))
        left.attrs, right.attrs = {}, {}
        truth = truth_pairs(table.left, table.right, table.gold)
        per_dataset[table.name] = {"left": len(left), "right": len(right)}
        for config in configs:
            start = time.perf_counter()
            predicted, best, compared = run_config(config, pd.DataFrame(left), pd.DataFrame(right), k, seed, matcher)
            seconds[config] += time.perf_counter() - start
            per_dataset[table.name][config] = scores(predicted, best, compared, truth)
            print(f"{table.name:>18} {config:<40} " + " ".join(
                f"{m}={per_dataset[table.name][config][m]:.3f}" for m in ("precision", "recall", "f1")), flush=True)  # fmt: skip
    summary = {}
    for config in configs:
        rows = [d[config] for d in per_dataset.values()]
        pooled = {m: sum(r[m] for r in rows) for m in ("predicted", "true", "correct")}
        summary[config] = {
            **{m: float(np.mean([r[m] for r in rows])) for m in ("precision", "recall", "f1", "blocking_recall")},
            **{f"best_{m}": float(np.mean([r["best"][m] for r in rows])) for m in ("precision", "recall", "f1")},
            "pooled_precision": pooled["correct"] / max(1, pooled["predicted"]),
            "pooled_recall": pooled["correct"] / max(1, pooled["true"]),
            "compared_pairs": sum(r["compared_pairs"] for r in rows),
            "seconds": round(seconds[config], 1),
        }
    return {"summary": summary, "per_dataset": per_dataset}


def table(results: dict) -> str:
    lines = [
        f"| configuration (splink 4 on DuckDB, {len(results['datasets'])} AutoFJ dev datasets) | pairwise P | "
        "pairwise R | pairwise F1 | best-match P | best-match R | best-match F1 | blocking recall | compared pairs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for config, row in results["summary"].items():
        lines.append(
            f"| {config} | {100 * row['precision']:.1f} | {100 * row['recall']:.1f} | {100 * row['f1']:.1f} | "
            f"{100 * row['best_precision']:.1f} | {100 * row['best_recall']:.1f} | {100 * row['best_f1']:.1f} | "
            f"{100 * row['blocking_recall']:.1f} | {row['compared_pairs']:,} |"
        )
    lines.append("")
    lines.append(f"Means over the datasets. Pairwise: every pair at match probability >= 0.5 (splink's output); "
                 "best match: only the highest-weight such pair of each right row (a fuzzy join's output). "
                 f"Embeddings: `{results['model']}`, k = {results['k']} neighbours.")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="baseline:minilm-l6", help="encoder spec or exported zoo folder")
    parser.add_argument("--k", type=int, default=10, help="embedding neighbours per row (fixed in advance)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--datasets", nargs="*", help="a subset of the dev datasets (default: all 10)")
    parser.add_argument("--output", help="results JSON (e.g. results/matching/splink-dev.json)")
    parser.add_argument("--docs", help="markdown page whose splink-dev block gets the table")
    parser.add_argument("--configs", nargs="*", type=int, help="run only these rows (0-based indices into CONFIGS) "
                        "and merge them into --output's other rows")  # fmt: skip
    args = parser.parse_args(argv)
    logging.getLogger("splink").setLevel(logging.ERROR)
    names = dev_names()
    if args.datasets:
        unknown = sorted(set(args.datasets) - set(names))
        if unknown:
            parser.error(f"{unknown} are not AutoFJ dev datasets ({', '.join(names)}); test datasets are not used.")
        names = args.datasets
    configs = [CONFIGS[i] for i in args.configs] if args.configs else list(CONFIGS)
    command = "python experiments/matching/splink_autofj_dev.py " + " ".join(sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    run = evaluate(names, args.model, args.k, args.seed, configs)
    results = {"benchmark": "splink_autofj_dev", "datasets": names, "model": args.model, "k": args.k,
               "date": dt.date.today().isoformat(), "command": command, **run}  # fmt: skip
    results["seconds"] = round(time.perf_counter() - start, 1)
    if args.configs and args.output and Path(args.output).exists():  # merge: the other rows keep their run
        earlier = json.loads(Path(args.output).read_text())
        if earlier["datasets"] != names or earlier["k"] != args.k or earlier["model"] != args.model:
            parser.error("--configs merges into a run with the same datasets, k and model only.")
        for dataset, rows in run["per_dataset"].items():
            earlier["per_dataset"][dataset].update({c: rows[c] for c in configs})
        earlier["summary"].update(run["summary"])
        earlier["summary"] = {c: earlier["summary"][c] for c in CONFIGS if c in earlier["summary"]}
        earlier.setdefault("runs", []).append({"configs": configs, "command": command, "date": results["date"],
                                               "seconds": results["seconds"]})  # fmt: skip
        results = earlier
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    if args.docs:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(args.docs, table(results), block="splink-dev")
    print(table(results))


if __name__ == "__main__":
    main()
