"""Compare CCL recipes on a UCTopic model: one run per call, appended as a JSON line to ``--output``.

    OMP_NUM_THREADS=1 .venv/bin/python scripts/uctopic_ccl_study.py --model outputs/uctopic-mini --data dev \\
        --name default --set steps=60 --output /tmp/uct/study.jsonl

``--data dev`` is the wiki-leads choice set (spaCy NER mentions of wiki-leads dev articles,
:mod:`phrasezoo.methods.uctopic.dev_mentions`); ``conll2003-dev``/``bc5cdr-dev`` are the benchmarks' own dev splits
(disjoint from the reported test mentions: where CCL options are chosen); ``conll2003``/``bc5cdr`` are the benchmark
test mentions, for the final report only. Every option is a :class:`phrasezoo.ccl.CCLConfig` field (``--set key=value``); with
``check_every`` the run stops on the label-free silhouette monitor. ``--trace`` adds the gold NMI at every check to
the record (for the study's plots; the stopping rule never sees it).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", choices=["dev", "conll2003-dev", "bc5cdr-dev", "conll2003", "bc5cdr"], required=True)
    parser.add_argument("--name", required=True, help="label of the run in the output")
    parser.add_argument(
        "--set", action="append", default=[], help="CCLConfig field=value (JSON value; a bare word is a string)"
    )
    parser.add_argument("--held-out", action="store_true", help="monitor the silhouette of unlabelled phrases")
    parser.add_argument("--trace", action="store_true", help="record the gold NMI at every check")
    parser.add_argument(
        "--oracle-labels",
        action="store_true",
        help="diagnosis only: give each pseudo-labelled phrase the majority GOLD type of its confident instances "
        "(same instances, no label noise) to tell label noise from the objective",
    )
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    import numpy as np

    from phrasezoo.ccl import CCLConfig, ccl_finetune, pseudo_labels, silhouette_monitor
    from phrasezoo.data.keys import lemma_keys
    from phrasezoo.encoders import load_encoder
    from phrasezoo.evaluation.tasks.context_clustering import (
        ccl_options,
        cluster_scores,
        hungarian_accuracy,
        parse_ccl_options,
        read_ner_mentions,
    )

    if args.data == "dev":
        from phrasezoo.methods.uctopic.dev_mentions import load_dev_mentions

        raw = load_dev_mentions(progress=False)
        mentions = [(s, tuple(span)) for s, span in raw["mentions"]]
        gold, k = raw["labels"], len(raw["types"])
    else:
        name, _, split = args.data.partition("-")
        types = {"conll2003": ["PER", "LOC", "ORG"], "bc5cdr": ["Chemical", "Disease"]}[name]
        folder = Path(os.environ.get("PHRASEZOO_BENCHMARKS", "../shared/benchmarks"))
        data = read_ner_mentions(folder / name / f"{split or 'test'}.jsonl", types)
        mentions, gold, k = data.mentions, data.labels, len(types)

    options = ccl_options(parse_ccl_options(args.set))
    config = CCLConfig(**options)
    model = load_encoder(args.model, progress=False).model.eval()
    keys = lemma_keys([s[a:b] for s, (a, b) in mentions])
    start = model.encode(mentions, show_progress_bar=False)
    before = cluster_scores(start, gold, k)
    labels = pseudo_labels(start, keys, k, top_fraction=config.top_fraction, seed=config.seed)
    if args.oracle_labels:
        from phrasezoo.ccl import majority_vote

        type_ids = {label: i for i, label in enumerate(dict.fromkeys(gold))}
        labels.by_key = majority_vote(keys, [type_ids[g] for g in gold], labels.confident)
    labelled = [i for i, key in enumerate(keys) if key in labels.by_key]
    purity = hungarian_accuracy([gold[i] for i in labelled], [labels.by_key[keys[i]] for i in labelled])
    held_out = {key for key in keys if key not in labels.by_key} if args.held_out else None
    base_monitor = silhouette_monitor(
        mentions,
        keys,
        k,
        held_out_keys=held_out,
        max_items=config.monitor_max_items,
        seed=config.seed,
        all_vectors=args.trace or config.recluster,
    )

    def monitor(m):
        report = base_monitor(m)
        if args.trace:
            report["gold_nmi"] = round(cluster_scores(report["vectors"], gold, k)["nmi"], 6)
            if not config.recluster:
                report.pop("vectors")
        return report

    tuned = copy.deepcopy(model)
    started = time.perf_counter()
    result = ccl_finetune(
        tuned,
        mentions,
        keys,
        labels.by_key,
        config,
        progress=False,
        monitor=monitor if config.check_every else None,
        confident=labels.confident,
    )
    seconds = time.perf_counter() - started
    after = cluster_scores(tuned.encode(mentions, show_progress_bar=False), gold, k)
    record = {
        "name": args.name,
        "data": args.data,
        "model": args.model,
        "options": options,
        "held_out_monitor": args.held_out,
        "oracle_labels": args.oracle_labels,
        "n": len(mentions),
        "before": {m: round(v, 6) for m, v in before.items()},
        "after": {m: round(v, 6) for m, v in after.items()},
        "steps_run": result.steps,
        "best_step": result.best_step,
        "checks": result.checks,
        "labelled_phrases": result.labelled_phrases,
        "pseudo_label_accuracy": round(purity, 4),  # of the mentions that carry a pseudo label (diagnosis only)
        "anchor_instances": result.anchor_instances,
        "mean_last_loss": round(float(np.mean(result.losses[-10:])), 4) if result.losses else None,
        "seconds": round(seconds, 1),
    }
    with open(args.output, "a", encoding="utf8") as handle:
        handle.write(json.dumps(record) + "\n")
    print(json.dumps({k: record[k] for k in ("name", "data", "before", "after", "steps_run", "best_step", "seconds")}))


if __name__ == "__main__":
    main()
