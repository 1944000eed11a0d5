"""Which items of a dev retrieval task one model finds and another misses (dev data only, no test benchmark).

A dev average says *that* a variant lost a task; the items say *how*. For a top-1 retrieval task of the dev suite
(``dev_alias``: anchor -> its title among all dev titles; ``dev_fuzzy``; ``dev_description``) this scores each
model per item and reports, against the first (reference) model: the items it finds and the model misses, the
reverse, what each model picked instead, and accuracy by query length (one word vs several).

    .venv/bin/python experiments/common/dev_item_diff.py --task dev_alias --models baseline:minilm-l6 outputs/<run> \\
        outputs/<other run> --examples 20 --output /tmp/alias-items.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from phrasezoo.core.files import atomic_write_text
from phrasezoo.data.benchmarks.dev_sets import load_dev_set
from phrasezoo.encoders import load_encoder
from phrasezoo.evaluation.dev.suite import DEV_TASKS, gold_set, top1_hits

#: dev tasks whose data is ``queries`` / ``candidates`` / ``gold`` (candidate indices) and whose score is top-1
RETRIEVAL_TASKS = ("dev_alias", "dev_fuzzy", "dev_description")


def top1(spec: str, queries: list[str], candidates: list[str]) -> np.ndarray:
    """Index of each query's best-scoring candidate under model ``spec``."""
    encoder = load_encoder(spec, progress=False)
    return np.asarray(encoder.similarity(queries, candidates)).argmax(axis=1)


def item_diff(
    queries: list[str], candidates: list[str], gold: list, picks: dict[str, np.ndarray], examples: int
) -> dict:
    """Per model: accuracy (all, one-word, multiword queries) and, against the first model, gained/lost items."""
    reference, *others = picks
    correct = {m: top1_hits(picks[m], gold) for m in picks}
    one_word = np.array([" " not in q.strip() for q in queries])
    rng = random.Random(0)
    report: dict = {"n": len(queries), "one_word_queries": int(one_word.sum()), "reference": reference, "models": {}}
    for model in picks:
        entry = {
            "accuracy": round(float(correct[model].mean()), 6),
            "accuracy_one_word": round(float(correct[model][one_word].mean()), 6) if one_word.any() else None,
            "accuracy_multiword": round(float(correct[model][~one_word].mean()), 6) if (~one_word).any() else None,
        }
        if model in others:
            lost = np.flatnonzero(correct[reference] & ~correct[model])
            gained = np.flatnonzero(~correct[reference] & correct[model])

            def show(items: np.ndarray, who: str) -> list[dict]:
                chosen = sorted(rng.sample(list(items), min(examples, len(items))))
                return [
                    {
                        "query": queries[i],
                        "gold": candidates[min(gold_set(gold[i]))],
                        "picked": candidates[picks[who][i]],
                    }
                    for i in chosen
                ]

            entry.update(
                lost=len(lost),
                gained=len(gained),
                lost_one_word=int(one_word[lost].sum()),
                gained_one_word=int(one_word[gained].sum()),
                lost_examples=show(lost, model),
                gained_examples=show(gained, reference),
            )
        report["models"][model] = entry
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="dev_alias", choices=RETRIEVAL_TASKS)
    parser.add_argument("--models", nargs="+", required=True, help="model specs; the first is the reference")
    parser.add_argument("--examples", type=int, default=10, help="examples of lost and gained items per model")
    parser.add_argument("--output", type=Path, help="write the report here as JSON (else print it)")
    args = parser.parse_args(argv)
    if len(args.models) < 2:
        parser.error("--models needs a reference and at least one model to compare with it.")
    data = load_dev_set(DEV_TASKS[args.task].source, progress=False)
    queries, candidates, gold = list(data["queries"]), list(data["candidates"]), list(data["gold"])
    picks = {spec: top1(spec, queries, candidates) for spec in args.models}
    text = json.dumps(item_diff(queries, candidates, gold, picks, args.examples), indent=1, ensure_ascii=False)
    if args.output:
        atomic_write_text(args.output, text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
