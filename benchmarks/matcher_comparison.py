"""The matcher comparison: every matcher through the same ``phrasezoo.match`` calls, accuracy and rows per second.

Matchers (``--models``): rapidfuzz ``WRatio``, character TF-IDF (``tfidf:char``, what PolyFuzz and skrub users get),
raw all-MiniLM-L6-v2 and all-mpnet-base-v2 (mean pooling), any exported zoo folder, the ten-line blend of issue 36
(``blend:<encoder>``: embedding cosine + 0.5 x char TF-IDF cosine) and the default (``hybrid``: the combination
learned on AutoFJ's dev datasets, ``experiments/matching/matching_dev.py``). Exact search, no blocking.

* AutoFJ (PyPI ``autofj``): each right row is joined to the whole left table (the suite's protocol); accuracy per
  dataset over right rows with a gold match, averaged over ``autofj_test`` (40 datasets: the headline, never used for
  a choice) and over all 50 (the paper column; 10 of them, ``autofj_dev``, are where every matching choice was made).
  AutoFJ's own precision/recall protocol on top: recall at precision 0.9 and best F1 per dataset (each matcher's
  own best threshold per dataset), and for the default the precision and recall of ``threshold="auto"`` (one
  threshold calibrated on dev, target precision 0.9; the done-when: its mean precision on test-40 is within 0.02).
* YAGO / UMLS (``../shared/benchmarks``): each mention is linked to the most similar name of a **gold-name KB** (the
  unique gold names of the 10k test pairs, not the full 572k/750k-name KBs): an easier search than the paper's.

Rows per second count the right rows (mentions) matched per second of wall time, embedding both tables, fitting the
TF-IDF vocabulary and building the index included. Models run one after another on a shared machine: the load
average is recorded. ``--vector-cache`` takes the vectors from ``matching_vectors.py``'s cache for the accuracy (the
same vectors, so the same accuracy) and measures rows/s on an uncached timing sample (every tenth AutoFJ test
dataset, the first 1,000 YAGO/UMLS pairs). ``suite:<results file>`` adds a row read from a suite run of the same
protocols (accuracy only): all-mpnet-base-v2 would need hours of single-thread CPU here to encode the 200k strings
again.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/matcher_comparison.py --models rapidfuzz:WRatio tfidf:char \
        baseline:minilm-l6 suite:results/baselines/baseline-mpnet-base.json blend:baseline:minilm-l6 hybrid \
        --vector-cache --output results/matching/matcher-comparison.json
    .venv/bin/python benchmarks/matcher_comparison.py --from-results results/matching/matcher-comparison.json \
        --docs docs/fuzzy-joins.md     # regenerate the tables only (or: python scripts/blocks.py --write)
    .venv/bin/python benchmarks/matcher_comparison.py --docs docs/fuzzy-joins.md --block matcher-zoo-codebook \
        --from-results results/matching/matcher-comparison-codebook-2026-11-23.json   # the codebook run
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "experiments" / "matching"))  # matching_dev's cache

DEFAULT_MODELS = ["rapidfuzz:WRatio", "tfidf:char", "baseline:minilm-l6", "baseline:mpnet-base",
                  "blend:baseline:minilm-l6", "hybrid"]  # fmt: skip
GOLD_KB_NOTE = (
    "gold-name KB (the unique gold names of the 10k test pairs, not the full KB): not comparable with the paper"
)
TASK_NAMES = {"autofj_test": "AutoFJ test-40", "autofj": "AutoFJ all-50", "yago": "YAGO‡", "umls": "UMLS‡"}


def make_model(spec: str, cached: bool = False):
    """A scorer for a model spec; ``blend:<encoder>`` is the reference blend with that encoder. ``cached``: the
    encoder answers from the vector cache of ``matching_vectors.py`` (the same vectors, encoded once)."""
    from phrasezoo.match.scoring.specs import make_scorer

    def encoder(name: str):
        if not cached:
            return name
        from matching_dev import CachedEncoder

        return CachedEncoder(name)

    if spec.startswith("blend:"):
        from phrasezoo.match.model.combinations import BLEND
        from phrasezoo.match.scoring.hybrid import HybridScorer

        return HybridScorer(encoder(spec.split(":", 1)[1]), combination=BLEND, progress=False)
    head, _, rest = spec.partition(":")
    if head == "hybrid":
        from phrasezoo.match.model.learned import DEFAULT_ENCODER
        from phrasezoo.match.scoring.hybrid import HybridScorer

        return HybridScorer(encoder(rest or DEFAULT_ENCODER), progress=False)
    if head in ("rapidfuzz", "tfidf"):
        return make_scorer(spec, progress=False)
    return make_scorer(encoder(spec), progress=False)


def timing_data(data: dict, mentions: int) -> dict:
    """The timing sample of each task: every tenth AutoFJ test dataset, and the first ``mentions`` YAGO/UMLS pairs
    (linked against their own gold names, so the KB:mentions ratio of the full task is kept)."""
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    out = {}
    for task, value in data.items():
        if task == "autofj":
            keep = set(autofj_names("test")[::10])
            out[task] = [t for t in value if t.name in keep]
        else:
            out[task] = (value[0][:mentions], value[1][:mentions])
    return out


def suite_entry(path: str, names: list[str]) -> dict:
    """A row from a suite results file (``phrasezoo evaluate``: the same protocols, accuracy only): for a model too
    slow to rerun here. rows/s = rows / seconds of that run (AutoFJ: right rows with a gold match)."""
    doc = json.loads(Path(path).read_text())
    tasks = {}
    for result in doc["results"]:
        task = result["task"]
        if task not in ("autofj", "yago", "umls"):
            continue
        entry = {"accuracy": result["value"], "rows": result["n"], "seconds": result["seconds"],
                 "rows_per_second": round(result["n"] / result["seconds"], 1)}  # fmt: skip
        tasks[task] = entry
        if task == "autofj":
            per = result["details"]["per_dataset"]
            tasks["autofj_test"] = entry | {"accuracy": round(float(np.mean([per[n] for n in names])), 4)}
    return {"name": f"{doc['model']} (suite run {doc['created'][:10]}, accuracy only)", "spec": doc["model"],
            "source": path, "tasks": tasks}  # fmt: skip


def display_name(spec: str, scorer) -> str:
    if spec == "hybrid":
        return f"**default** (hybrid: {scorer.vectors.name} + lexical, learned on dev)"
    if spec.startswith("blend:"):
        return f"blend: {scorer.vectors.name} + 0.5 x char TF-IDF"
    if spec.startswith("hybrid:"):
        learned = scorer.combination.meta.get("encoder", "?")
        return f"hybrid: {scorer.vectors.name} + lexical (the combination learned with {learned})"
    return Path(spec).name if os.path.isdir(spec) else scorer.name


def read_pairs(path: Path) -> tuple[list[str], list[str]]:
    mentions, gold = [], []
    for line in path.read_text(encoding="utf8").splitlines():
        fields = line.rstrip("\r").split("\t")
        if len(fields) >= 2 and line.strip():
            mentions.append(fields[0])
            gold.append(fields[1])
    return mentions, gold


def run_autofj(scorer, tables, with_auto: bool) -> dict:
    """Per dataset: accuracy (gold rows), recall at precision 0.9 and best F1 (all right rows), timing."""
    from phrasezoo.evaluation.tasks.autofj import best_f1, recall_at_precision
    from phrasezoo.match import Matcher, join

    per_dataset, seconds, rows = {}, 0.0, 0
    for table in tables:
        right = list(table.right)
        scorer.clear_cache()
        start = time.perf_counter()
        matcher = Matcher(scorer, progress=False).fit(table.left)
        joined = join(table.left, right, top_k=1, matcher=matcher, keep_unmatched=True)
        seconds += time.perf_counter() - start
        rows += len(right)
        if len(joined) != len(right):
            raise RuntimeError(f"{table.name}: {len(joined)} rows for {len(right)} right rows")
        predicted, scores = joined["left"].tolist(), joined["score"].to_numpy(dtype=float)
        correct = np.array([table.gold.get(r) is not None and p == table.gold[r] for p, r in zip(predicted, right)])
        has_gold = np.array([r in table.gold for r in right])
        entry = {
            "accuracy": float(correct[has_gold].mean()),
            "recall_at_p90": recall_at_precision(scores, correct, int(has_gold.sum())),
            "best_f1": best_f1(scores, correct, int(has_gold.sum())),
        }
        if with_auto:
            kept = scores >= matcher.threshold_for(0.9)
            entry["auto_precision"] = float(correct[kept].mean()) if kept.any() else 1.0
            entry["auto_recall"] = float(correct[kept].sum() / max(1, has_gold.sum()))
        per_dataset[table.name] = {k: round(v, 4) for k, v in entry.items()}
    return {"rows": rows, "left_rows": sum(len(t.left) for t in tables), "seconds": round(seconds, 2),
            "rows_per_second": round(rows / seconds, 1), "per_dataset": per_dataset}  # fmt: skip


def summarise_autofj(result: dict, names: list[str]) -> dict:
    per = [result["per_dataset"][n] for n in names]
    return {k: round(float(np.mean([p[k] for p in per])), 4) for k in per[0]} | {"n_datasets": len(names)}


def time_uncached(entry: dict, spec: str, timing: dict, tasks: list[str]) -> None:
    """Replace ``entry``'s rows/s by those of an uncached scorer on the timing sample (every vector encoded)."""
    scorer = make_model(spec)
    entry["timing"] = {}
    for task in tasks:
        if task == "autofj":
            sample = run_autofj(scorer, timing["autofj"], with_auto=False)
            names = ["autofj", "autofj_test"]
        else:
            sample = run_linking(scorer, *timing[task])
            names = [task]
        entry["timing"][task] = {k: sample[k] for k in ("rows", "seconds", "rows_per_second")}
        for name in names:
            entry["tasks"][name]["rows_per_second"] = sample["rows_per_second"]


def run_linking(scorer, mentions: list[str], gold: list[str]) -> dict:
    from phrasezoo.match import link

    kb = sorted(set(gold))
    scorer.clear_cache()
    start = time.perf_counter()
    linked = link(mentions, kb, model=scorer, top_k=1, progress=False)
    seconds = time.perf_counter() - start
    predicted = linked["entity"].tolist()
    if len(predicted) != len(mentions):
        raise RuntimeError(f"{len(predicted)} links for {len(mentions)} mentions")
    return {
        "accuracy": float(np.mean([p == g for p, g in zip(predicted, gold)])),
        "rows": len(mentions),
        "kb_size": len(kb),
        "seconds": round(seconds, 2),
        "rows_per_second": round(len(mentions) / seconds, 1),
        "notes": GOLD_KB_NOTE,
    }


# ------------------------------------------------------------------------------------------------------ tables
def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def accuracy_table(report: dict) -> str:
    """Accuracy and rows/s of every matcher on AutoFJ test-40 / all-50, YAGO‡ and UMLS‡."""
    tasks = [t for t in TASK_NAMES if any(t in m["tasks"] for m in report["models"])]
    head = "| matcher | " + " | ".join(f"{TASK_NAMES[t]} acc. | rows/s" for t in tasks) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(tasks)]
    best = {t: max((m["tasks"][t]["accuracy"] for m in report["models"] if t in m["tasks"]), default=None)
            for t in tasks}  # fmt: skip
    for model in report["models"]:
        cells = []
        for t in tasks:
            r = model["tasks"].get(t)
            if r is None:
                cells += ["–", "–"]
                continue
            acc = _pct(r["accuracy"])
            cells += [f"**{acc}**" if r["accuracy"] == best[t] else acc, f"{r['rows_per_second']:,.0f}"]
        lines.append(f"| {model['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + "\n".join(_notes(report))


def precision_table(report: dict) -> str:
    """AutoFJ's precision/recall protocol on test-40: recall at precision 0.9, best F1, and ``threshold="auto"``."""
    lines = ["| matcher | recall at precision 0.9 | best F1 | `threshold=\"auto\"` (0.9): precision | recall |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for model in report["models"]:
        r = model["tasks"].get("autofj_test")
        if r is None or "recall_at_p90" not in r:
            continue
        auto = [_pct(r.get("auto_precision")), _pct(r.get("auto_recall"))]
        lines.append(f"| {model['name']} | {_pct(r['recall_at_p90'])} | {_pct(r['best_f1'])} | " + " | ".join(auto)
                     + " |")  # fmt: skip
    notes = [
        "- AutoFJ's protocol on the 40 test datasets, mean over datasets: each right row joins its best left row when "
        "the score passes a threshold; precision = correct joins / joins (a right row without a gold match is a wrong "
        "join), recall = correct joins / right rows with a gold match. Recall at precision 0.9 and best F1 use each "
        "dataset's own best threshold (an oracle: what the scores allow).",
        '- `threshold="auto"` uses one threshold for every dataset: the lowest whose cross-fitted dev precision reaches '
        "0.9 on every dev domain (AutoFJ dev-10 and the name benchmark's four; default matcher only: its score is a "
        "match probability); issue 43 asks for a test precision within 0.02 of the target on every domain.",
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def _notes(report: dict) -> list[str]:
    first = next(
        (m["tasks"]["autofj"] for m in report["models"] if "autofj" in m["tasks"] and not m.get("source")), None
    )
    sizes = f" ({first['rows']:,} right rows against {first['left_rows']:,} left rows in all 50)" if first else ""
    split = any("autofj_test" in m["tasks"] for m in report["models"])
    scope = ("over the 40 test datasets (`autofj_test`, the headline) and over all 50 (10 of them, `autofj_dev`, are "
             "where every matching choice was made)" if split else "over all 50 datasets")  # fmt: skip
    timing = report.get("timing_sample")
    suite = [m for m in report["models"] if m.get("source")]
    extra = [f"- {timing} (one run on a shared machine: a few-percent difference is noise)." if timing else ""] + [
        f"- {m['name']}: accuracy (and rows/s: rows / seconds of that run, AutoFJ counting the right rows with a gold "
        f"match) from `{m['source']}`, the suite harness's run of the same protocols (`phrasezoo evaluate --model "
        f"{m['spec']} --tasks autofj,yago,umls`); it was not rerun here (hours of CPU time on this machine), so it has "
        "no precision/recall." for m in suite
    ]  # fmt: skip
    extra += [f"- {m['name']}: {m['note']}" for m in report["models"] if m.get("note")]
    added = [f"`{run['command']}` ({run['created'][:10]}, load average {run.get('load_average_start', '?')} at the "
             f"start)" for run in report.get("merged_runs", [])]  # fmt: skip
    if added:
        extra.insert(0, "- Rows added to the run above by " + "; ".join(added) + ".")
    return [
        f"- AutoFJ: mean accuracy {scope}{sizes}; each right row joined to the whole left table; rows/s = right rows "
        f"joined per second {'on the timing sample below' if timing else 'over all 50'}, embedding both tables, "
        "TF-IDF fitting and indexing included.",
        f"- ‡ YAGO/UMLS: top-1 linking accuracy against a {GOLD_KB_NOTE}.",
        f"- Measured {report['created'][:10]} on {report['machine']} (load average {report['load_average_start']} "
        f"at the start, {report.get('load_average_end', '?')} at the end: a shared machine) with "
        f"`{report['command']}`; {report['zoo_note']}",
    ] + [line for line in extra if line]


def write_tables(report: dict, docs: str | None, block: str | None = None) -> None:
    """The page's blocks (``matcher-comparison``, ``matcher-precision``; or only the accuracy table into ``block``),
    through the one block writer (docs/blocks.yaml renders the same functions for its drift check)."""
    from phrasezoo.core.files import write_readme_table

    if docs and block:
        write_readme_table(docs, accuracy_table(report), block)
    elif docs:
        write_readme_table(docs, accuracy_table(report), "matcher-comparison")
        write_readme_table(docs, precision_table(report), "matcher-precision")


def zoo_folder(spec: str) -> str | None:
    """The exported zoo folder a matcher spec runs on (``<folder>`` or ``hybrid:<folder>``), else None."""
    folder = spec.removeprefix("hybrid:")
    return folder if not folder.startswith("suite:") and os.path.isdir(folder) else None


def merged(path: str, report: dict, drop: tuple[str, ...] = ()) -> dict:
    """``report``'s models added to (or replacing the same specs in) the results file at ``path``; the specs in
    ``drop`` are taken out (a row that a change made the same as another, such as the int8 option once it became
    the default)."""
    previous = json.loads(Path(path).read_text())
    names = {m["spec"] for m in report["models"]} | set(drop)
    previous["models"] = [m for m in previous["models"] if m["spec"] not in names] + report["models"]
    runs = [r for r in previous.get("merged_runs", []) if r["created"] != report["created"]]
    runs.append({k: report.get(k) for k in ("created", "command", "load_average_start", "load_average_end")})
    previous["merged_runs"] = runs
    return previous


def save(path: str, report: dict) -> None:
    from phrasezoo.core.files import atomic_write_text

    atomic_write_text(path, json.dumps(report, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS,
                        help="matchers to run (default: %(default)s); add exported zoo folders by path, and "
                        "suite:<results file> for a row read from a suite run (accuracy only)")  # fmt: skip
    parser.add_argument("--tasks", default="autofj,yago,umls")
    parser.add_argument("--benchmarks-dir", default=os.environ.get("PHRASEZOO_BENCHMARKS", "../shared/benchmarks"))
    parser.add_argument("--output", help="results JSON (e.g. results/matching/matcher-comparison.json)")
    parser.add_argument(
        "--docs", help="rewrite the matcher-comparison / matcher-precision blocks of this page (docs/fuzzy-joins.md)"
    )
    parser.add_argument("--from-results", help="only regenerate the tables from this results file")
    parser.add_argument("--block", help="with --from-results: write only the accuracy table, into this block of --docs")
    parser.add_argument("--merge", help="add this run's models to an existing results file (same tasks)")
    parser.add_argument("--drop", nargs="+", default=[], help="with --merge: take these specs' rows out of the file")
    parser.add_argument(
        "--vector-cache",
        action="store_true",
        help="accuracy from the vector cache of matching_vectors.py; rows/s then from an uncached "
        "run on a timing sample (every tenth AutoFJ test dataset, the first --timing-mentions pairs)",
    )
    parser.add_argument("--timing-mentions", type=int, default=1000)
    parser.add_argument("--note", help="where this run's zoo folders come from (how and when they were trained), "
                        "printed under the table for each of their rows")  # fmt: skip
    args = parser.parse_args()

    if args.from_results:
        write_tables(json.loads(Path(args.from_results).read_text()), args.docs, args.block)
        return

    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    zoo = list(dict.fromkeys(folder for m in args.models if (folder := zoo_folder(m))))
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "phrasezoo.match join/link: accuracy and rows per second, exact search, no blocking",
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "load_average_start": round(os.getloadavg()[0], 2),
        "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/matcher_comparison.py " + shlex.join(sys.argv[1:]),
        "zoo_note": ("zoo models measured: " + ", ".join(zoo) if zoo else "no exported zoo model in this run")
        + "; nothing was trained for this benchmark.",
        "autofj_test_datasets": autofj_names("test"),
        "vector_cache": args.vector_cache,
        "models": [],
    }
    data = {}
    if "autofj" in tasks:
        data["autofj"] = read_autofj()
    for task in ("yago", "umls"):
        if task in tasks:
            data[task] = read_pairs(Path(args.benchmarks_dir) / task / f"{task}_test_samples.tsv")
    timing = timing_data(data, args.timing_mentions) if args.vector_cache else {}
    if args.vector_cache:
        report["timing_sample"] = (
            f"rows/s from an uncached run on a sample: AutoFJ {', '.join(t.name for t in timing.get('autofj', []))} "
            f"(every tenth test dataset); YAGO/UMLS the first {args.timing_mentions} pairs against their own gold "
            "names; accuracy from the full tasks with the vectors of the cache (the same vectors)"
        )
    for spec in args.models:
        if spec.startswith("suite:"):  # a row from a suite results file (accuracy only)
            report["models"].append(suite_entry(spec.split(":", 1)[1], autofj_names("test")))
            continue
        started = time.perf_counter()
        scorer = make_model(spec, cached=args.vector_cache)
        entry = {"name": display_name(spec, scorer), "spec": spec,
                 "load_seconds": round(time.perf_counter() - started, 2), "tasks": {}}  # fmt: skip
        if args.note and zoo_folder(spec):
            entry["note"] = args.note
        for task in tasks:
            if task == "autofj":
                calibrated = bool(getattr(getattr(scorer, "combination", None), "calibration", None))
                full = run_autofj(scorer, data["autofj"], with_auto=calibrated)
                entry["tasks"]["autofj"] = full | summarise_autofj(full, autofj_names())
                test = {k: v for k, v in full.items() if k != "per_dataset"}
                entry["tasks"]["autofj_test"] = test | summarise_autofj(full, autofj_names("test"))
            else:
                entry["tasks"][task] = run_linking(scorer, *data[task])
            for name in [task] if task != "autofj" else ["autofj_test", "autofj"]:
                r = entry["tasks"][name]
                print(f"{entry['name'][:48]:48s} {name:12s} acc {100 * r['accuracy']:5.1f}  "
                      f"{r['rows_per_second']:8.1f} rows/s", flush=True)  # fmt: skip
        del scorer
        if args.vector_cache:
            time_uncached(entry, spec, timing, tasks)
        report["models"].append(entry)
        report["load_average_end"] = round(os.getloadavg()[0], 2)
        if args.output:  # after every model: an interrupted run keeps what it measured
            save(args.output, merged(args.merge, report, tuple(args.drop)) if args.merge else report)
    report = merged(args.merge, report, tuple(args.drop)) if args.merge else report
    if args.output:
        save(args.output, report)
    print(accuracy_table(report))
    print(precision_table(report))
    write_tables(report, args.docs)


if __name__ == "__main__":
    main()
