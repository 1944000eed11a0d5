"""Fuzzy join and entity linking with ``phrasezoo.match``: accuracy and rows per second, every model in one run.

Models: rapidfuzz string scorers (``token_sort_ratio``, ``WRatio``: the non-neural alternative), plain
all-MiniLM-L6-v2 with mean pooling (``baseline:minilm-l6``) and every exported zoo model found under ``outputs/``
(folders with a ``config.json``), all through the same ``join`` / ``link`` calls (exact faiss search, no blocking).

* AutoFJ (PyPI ``autofj``): the protocol of the suite's ``autofj`` task: each right title with a gold match is
  joined to the most similar title of the whole left table; accuracy per dataset, averaged over the datasets.
* YAGO / UMLS (``../shared/benchmarks``): each mention is linked to the most similar name of a **gold-name KB** (the
  unique gold names of the 10k test pairs, not the full 572k/750k-name KBs): an easier search than the paper's.

Rows per second count the right rows (mentions) matched per second of wall time, including embedding both tables
and building the index (the string cache is cleared between datasets). Models run one after another on the same
machine, so concurrent load affects them alike only roughly: the load average is recorded.

    .venv/bin/python benchmarks/fuzzy_join.py --output results/fuzzy-join.json --readme README.md
    .venv/bin/python benchmarks/fuzzy_join.py --autofj-subset half --models baseline:minilm-l6   # quicker
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

DEFAULT_BASELINES = ["rapidfuzz:token_sort_ratio", "rapidfuzz:WRatio", "baseline:minilm-l6"]
GOLD_KB_NOTE = (
    "gold-name KB (the unique gold names of the 10k test pairs, not the full KB): not comparable with the paper"
)


def zoo_models(outputs: Path) -> list[str]:
    """Exported zoo folders under ``outputs/`` (a config.json with an auto_map: loadable with trust_remote_code)."""
    found = []
    for config in sorted(outputs.glob("*/config.json")):
        try:
            if "auto_map" in json.loads(config.read_text()):
                found.append(str(config.parent))
        except (OSError, ValueError):
            continue
    return found


def zoo_note(zoo: list[str], models: list[str], outputs: str) -> str:
    """Which exported zoo models were measured, and which were present but left out (``--models``)."""
    run = [m for m in models if m in zoo]
    skipped = [m for m in zoo if m not in run]
    if not zoo:
        return (f"no exported zoo model was present under {outputs}/ when this ran, so only the baselines were "
                "measured (nothing was trained for this benchmark).")  # fmt: skip
    note = f"zoo models measured: {', '.join(run) or 'none'}"
    if skipped:
        note += f"; also exported but not run here: {', '.join(skipped)}"
    return note + "; nothing was trained for this benchmark."


def autofj_tables(subset: str):
    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj

    names = autofj_names()
    if subset == "half":
        names = names[::2]  # every other dataset in name order: a fixed, documented subset
    return read_autofj(names)


def read_pairs(path: Path) -> tuple[list[str], list[str]]:
    mentions, gold = [], []
    for line in path.read_text(encoding="utf8").splitlines():
        fields = line.rstrip("\r").split("\t")
        if len(fields) >= 2 and line.strip():
            mentions.append(fields[0])
            gold.append(fields[1])
    return mentions, gold


def run_autofj(scorer, tables) -> dict:
    from phrasezoo.match import join

    per_dataset, seconds, rows = {}, 0.0, 0
    for table in tables:
        queries = table.queries()
        scorer.clear_cache()
        start = time.perf_counter()
        joined = join(table.left, queries, model=scorer, top_k=1, progress=False)
        seconds += time.perf_counter() - start
        predicted = joined["left"].tolist()
        if len(predicted) != len(queries):
            raise RuntimeError(f"{table.name}: {len(predicted)} matches for {len(queries)} queries")
        per_dataset[table.name] = float(np.mean([p == table.gold[q] for p, q in zip(predicted, queries)]))
        rows += len(queries)
    return {
        "accuracy": float(np.mean(list(per_dataset.values()))),
        "rows": rows,
        "left_rows": sum(len(t.left) for t in tables),
        "seconds": round(seconds, 2),
        "rows_per_second": round(rows / seconds, 1),
        "per_dataset": {k: round(v, 4) for k, v in per_dataset.items()},
    }


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
    }


def fuzzy_join_table(report: dict) -> str:
    """The README block, generated from a results file."""
    tasks = [t for t in ("autofj", "yago", "umls") if any(t in m["tasks"] for m in report["models"])]
    names = {"autofj": "AutoFJ", "yago": "YAGO‡", "umls": "UMLS‡"}
    head = "| model | " + " | ".join(f"{names[t]} acc. | {names[t]} rows/s" for t in tasks) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(tasks)]
    for model in report["models"]:
        cells = []
        for t in tasks:
            r = model["tasks"].get(t)
            cells += [f"{100 * r['accuracy']:.1f}", f"{r['rows_per_second']:,.0f}"] if r else ["–", "–"]
        lines.append(f"| {model['name']} | " + " | ".join(cells) + " |")
    autofj = report.get("autofj", {})
    specs = [m["spec"] for m in report["models"]]
    subset = "" if autofj.get("subset", "").startswith("all") else f" ({autofj.get('subset', '')})"
    command = ".venv/bin/python benchmarks/fuzzy_join.py" + (
        "" if specs == DEFAULT_BASELINES else " --models " + " ".join(specs)
    )
    first = next((m["tasks"]["autofj"] for m in report["models"] if "autofj" in m["tasks"]), None)
    sizes = f"{first['rows']:,} right rows against {first['left_rows']:,} left rows in all" if first else ""
    notes = [
        f"- AutoFJ: mean accuracy over {autofj.get('n_datasets', '?')} datasets{subset}, each "
        f"right title joined to the whole left table ({sizes}); rows/s = right rows joined per second, embedding both "
        "tables and indexing included (for the encoders, embedding the larger left tables is most of the time).",
        f"- ‡ YAGO/UMLS: top-1 linking accuracy against a {GOLD_KB_NOTE}.",
        f"- Measured {report['created'][:10]} on {report['machine']} (load average {report['load_average_start']} at "
        f"the start, {report.get('load_average_end', '?')} at the end: a shared machine) with `{command}`; "
        f"{report['zoo_note']}",
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def write_block(readme: Path, text: str, block: str) -> None:
    start, end = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    content = readme.read_text()
    if start not in content or end not in content:
        raise ValueError(f"{readme} has no {start} ... {end} block to fill.")
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", help="models to run (default: rapidfuzz x2, MiniLM, outputs/*)")
    parser.add_argument("--outputs", default="outputs", help="where exported zoo models are looked for")
    parser.add_argument("--tasks", default="autofj,yago,umls")
    parser.add_argument("--autofj-subset", choices=("all", "half"), default="all",
                        help="all 50 AutoFJ datasets, or every other one in name order (25)")  # fmt: skip
    parser.add_argument("--benchmarks-dir", default=os.environ.get("PHRASEZOO_BENCHMARKS", "../shared/benchmarks"))
    parser.add_argument("--output", help="results JSON (e.g. results/fuzzy-join.json)")
    parser.add_argument("--readme", help="rewrite the <!-- fuzzy-join:start --> block of this README")
    parser.add_argument("--from-results", help="only regenerate the README block from this results file")
    parser.add_argument("--block", default="fuzzy-join", help="README block name (default fuzzy-join)")
    args = parser.parse_args()

    if args.from_results:
        write_block(Path(args.readme), fuzzy_join_table(json.loads(Path(args.from_results).read_text())), args.block)
        return

    from phrasezoo.match.scorers import make_scorer

    zoo = zoo_models(Path(args.outputs))
    models = args.models or DEFAULT_BASELINES + zoo
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "phrasezoo.match join/link: accuracy and rows per second, exact search, no blocking",
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "load_average_start": round(os.getloadavg()[0], 2),
        "zoo_note": zoo_note(zoo, models, args.outputs),
        "models": [],
    }
    data = {}
    if "autofj" in tasks:
        data["autofj"] = autofj_tables(args.autofj_subset)
        report["autofj"] = {"subset": "all 50 datasets" if args.autofj_subset == "all" else
                            "every other dataset in name order", "n_datasets": len(data["autofj"])}  # fmt: skip
    for task in ("yago", "umls"):
        if task in tasks:
            data[task] = read_pairs(Path(args.benchmarks_dir) / task / f"{task}_test_samples.tsv")
    for model in models:
        started = time.perf_counter()
        scorer = make_scorer(model, progress=False)
        entry = {
            "name": scorer.name,
            "spec": model,
            "load_seconds": round(time.perf_counter() - started, 2),
            "tasks": {},
        }
        for task in tasks:
            result = run_autofj(scorer, data[task]) if task == "autofj" else run_linking(scorer, *data[task])
            if task != "autofj":
                result["notes"] = GOLD_KB_NOTE
            entry["tasks"][task] = result
            print(f"{scorer.name:32s} {task:7s} accuracy {100 * result['accuracy']:5.1f}  "
                  f"{result['rows_per_second']:8.1f} rows/s  ({result['seconds']:.1f} s)", flush=True)  # fmt: skip
        report["models"].append(entry)
        del scorer
    report["load_average_end"] = round(os.getloadavg()[0], 2)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(args.output).with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=1))
        tmp.replace(args.output)
    print(fuzzy_join_table(report))
    if args.readme:
        write_block(Path(args.readme), fuzzy_join_table(report), args.block)


if __name__ == "__main__":
    main()
