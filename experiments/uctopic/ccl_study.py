"""Compare CCL recipes on a UCTopic model: one run per call, appended as a JSON line to ``--output``.

    OMP_NUM_THREADS=1 .venv/bin/python experiments/uctopic/ccl_study.py --model outputs/uctopic-mini --data dev \\
        --name default --set steps=60 --output /tmp/uct/study.jsonl

``--data dev`` is the wiki-leads choice set (spaCy NER mentions of wiki-leads dev articles,
:mod:`phrasezoo.methods.uctopic.dev_mentions`); ``conll2003-dev``/``bc5cdr-dev`` are the benchmarks' own dev splits
(disjoint from the reported test mentions: where CCL options are chosen); ``conll2003``/``bc5cdr`` are the benchmark
test mentions, for the final report only. Every option is a :class:`phrasezoo.methods.uctopic.ccl.CCLConfig` field (``--set key=value``); with
``check_every`` the run stops on the label-free silhouette monitor. ``--trace`` adds the gold NMI at every check to
the record (for the study's plots; the stopping rule never sees it). With ``--set "soup_seeds=[0,1,2]"`` the run is
a CCL soup (:func:`phrasezoo.methods.uctopic.ccl.ccl_soup`): one run per seed, weights averaged; ``--trace`` then records the soup's
gold NMI at every check step (the seeds' weights at that step, averaged).
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

    from phrasezoo.encoders import load_encoder
    from phrasezoo.evaluation.commands import parse_key_values
    from phrasezoo.evaluation.tasks.context_clustering import cluster_scores, hungarian_accuracy, read_ner_mentions
    from phrasezoo.methods.uctopic.ccl import CCLConfig, ccl_finetune, pseudo_labels, silhouette_monitor
    from phrasezoo.methods.uctopic.keys import lemma_keys
    from phrasezoo.methods.uctopic.tasks.clustering import ccl_options

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

    options = ccl_options(parse_key_values(args.set))
    config = CCLConfig(**options)
    model = load_encoder(args.model, progress=False).model.eval()
    keys = lemma_keys([s[a:b] for s, (a, b) in mentions])
    start = model.encode(mentions, show_progress_bar=False)
    before = cluster_scores(start, gold, k)
    if config.soup_seeds:
        if args.oracle_labels or args.held_out or config.recluster:
            parser.error("a CCL soup run takes no --oracle-labels, --held-out or recluster")
        record = soup_record(model, mentions, keys, start, gold, k, config, trace=args.trace)
        record = {"name": args.name, "data": args.data, "model": args.model, "options": options, **record}
        record.update(held_out_monitor=False, oracle_labels=False, n=len(mentions))
        record["before"] = {m: round(v, 6) for m, v in before.items()}
        with open(args.output, "a", encoding="utf8") as handle:
            handle.write(json.dumps(record) + "\n")
        print(json.dumps({key: record[key] for key in ("name", "data", "before", "after", "seconds")}))
        return
    labels = pseudo_labels(start, keys, k, top_fraction=config.top_fraction, seed=config.seed)
    if args.oracle_labels:
        from phrasezoo.methods.uctopic.ccl import majority_vote

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


def soup_record(model, mentions, keys, start, gold, k, config, trace: bool) -> dict:
    """Run a CCL soup; with ``trace``, the soup's gold NMI at every check step (the seeds' weights at that step,
    averaged; the monitor only takes the snapshots, so no run stops early or restores an earlier check)."""
    import copy
    from dataclasses import replace

    from phrasezoo.evaluation.tasks.context_clustering import cluster_scores
    from phrasezoo.methods.uctopic.ccl import ccl_soup
    from phrasezoo.objectives.weight_averaging import soup_state_dicts

    if trace and not config.check_every:
        raise SystemExit("--trace needs --set check_every=N")
    snapshots: dict[int, list[dict]] = {}

    def monitor_for(seed, labels):
        def snapshot(m) -> dict:
            state = {name: v.detach().to("cpu", copy=True) for name, v in m.state_dict().items()}
            snapshots.setdefault(seed, []).append(state)
            return {"score": 0.0}  # constant: the first check stays "best", and patience decides nothing

        return snapshot if trace else None

    started = time.perf_counter()
    if trace:
        config = replace(config, patience=10**9)
    tuned, results, labels = ccl_soup(model, mentions, keys, start, k, config, progress=False, monitor_for=monitor_for)
    seconds = time.perf_counter() - started
    checks = []
    if trace:
        steps = [c["step"] for c in results[0].checks]
        probe = copy.deepcopy(model)
        for i, step in enumerate(steps):
            if step == 0:
                vectors = start
            else:
                states = [snapshots[seed][i] for seed in config.soup_seeds]
                probe.load_state_dict(soup_state_dicts(states, shared=list(states[0])))
                vectors = probe.encode(mentions, show_progress_bar=False)
            checks.append({"step": step, "gold_nmi": round(cluster_scores(vectors, gold, k)["nmi"], 6)})
        after_vectors = vectors
    else:
        after_vectors = tuned.encode(mentions, show_progress_bar=False)
    after = cluster_scores(after_vectors, gold, k)
    return {
        "after": {m: round(v, 6) for m, v in after.items()},
        "steps_run": results[0].steps,
        "best_step": None,
        "checks": checks,
        "soup_runs": [
            {
                "seed": seed,
                "labelled_phrases": r.labelled_phrases,
                "anchor_instances": r.anchor_instances,
                "mean_last_loss": round(sum(r.losses[-10:]) / max(1, len(r.losses[-10:])), 4),
            }
            for seed, r in zip(config.soup_seeds, results)
        ],
        "seconds": round(seconds, 1),
    }


if __name__ == "__main__":
    main()
