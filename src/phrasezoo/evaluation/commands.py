"""CLI subcommands ``evaluate``, ``report`` and ``dev-eval``; :func:`register` adds them to the main ``phrasezoo``
command.

Also runnable on its own: ``python -m phrasezoo.evaluation.commands evaluate --model baseline:minilm-l6 ...``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from phrasezoo.core.errors import run_command
from phrasezoo.core.files import write_readme_table
from phrasezoo.core.recipes import results_file_name, results_path
from phrasezoo.encoders import DEFAULT_BATCH_SIZE, SPEC_HELP, load_encoder

from .dev.suite import evaluate_dev, format_dev_table, read_dev_results, resolve_dev_tasks
from .harness import evaluate
from .hub_model import authors_results_path, is_repo_id, release_of, resolve_hub_model
from .report import format_report
from .results import read_results
from .tasks import check_task_options, default_benchmarks_dir, resolve_tasks

EVALUATE_EPILOG = f"""\
{SPEC_HELP}

tasks (--tasks all | pearl | comma-separated names):
  turney, bird               phrase similarity (accuracy / Pearson)
  ppdb, ppdb_filtered        paraphrase classification with an MLP probe (accuracy)
  yago, umls                 entity retrieval, top-1 accuracy over a gold-name KB (not the papers' full KBs)
  conll2003, bc5cdr          entity clustering, KMeans NMI
  autofj                     fuzzy join, mean accuracy over 50 datasets (data from the PyPI package autofj)
  stsb_context               STS-B-Context (SLICE), passage and single-pass span similarity (Pearson/Spearman)
  groups: all = the ten above; pearl = the nine PEARL tasks (all but stsb_context)

examples:
  phrasezoo evaluate --model baseline:minilm-l6 --tasks all --output results/baselines/baseline-minilm-l6.json
  phrasezoo evaluate --model outputs/pearl-mini --tasks pearl
  phrasezoo evaluate --model baseline:char-jaccard --tasks autofj,turney,bird
  phrasezoo evaluate --model Lihuchen/pearl_small --tasks pearl
      a Hub repo id: a zoo export, or an authors' checkpoint that `phrasezoo convert` knows (converted on the
      fly; results in results/<method>/authors-<name>.json, read by the zoo table and `report --authors`)
"""


def register(subparsers) -> None:
    """Add the ``evaluate`` and ``report`` subcommands to an argparse subparsers object."""
    evaluate = subparsers.add_parser(
        "evaluate",
        help="run the benchmark suite on a model and write a results JSON",
        description="Evaluate a model (zoo export, baseline or trained config) on the benchmark tasks and write a "
        "results file (values are fractions; tasks a model cannot run are recorded as skipped with a note).",
        epilog=EVALUATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("--model", required=True, metavar="M", help="model spec (see below)")
    evaluate.add_argument("--tasks", default="all", help="'all', 'pearl' or comma-separated task names (default: all)")
    evaluate.add_argument(
        "--benchmarks-dir",
        metavar="DIR",
        help="folder with bird/, turney/, ppdb/, ... (default: $PHRASEZOO_BENCHMARKS or ../shared/benchmarks)",
    )
    evaluate.add_argument(
        "--output", metavar="FILE", help="results JSON to write (default: results/<method>/<model name>.json)"
    )
    evaluate.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help=f"encoding batch size (default {DEFAULT_BATCH_SIZE})"
    )
    evaluate.add_argument(
        "--stsb-per-span",
        action="store_true",
        help="also score STS-B-Context with every passage span encoded on its own (slow: ~800k strings)",
    )
    evaluate.add_argument(
        "--source",
        choices=("local", "hub"),
        default="local",
        help="read the PEARL tasks from --benchmarks-dir (local, default) or from the Hub dataset "
        "Lihuchen/pearl_benchmark (hub; needs a network)",
    )
    evaluate.add_argument(
        "--ccl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a CCL option of the *_context_ccl tasks (a phrasezoo.methods.uctopic.ccl.CCLConfig field, JSON value), e.g. --ccl "
        "steps=25; repeatable. Recipes set theirs in eval.ccl (`phrasezoo pipeline` applies them)",
    )
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bars or per-task lines")
    evaluate.set_defaults(func=run_evaluate)

    report = subparsers.add_parser(
        "report",
        help="print a markdown table comparing results files (with the papers' numbers)",
        description="Markdown comparison table: one row per results file, one column per task's main metric "
        "(percentages), PEARL averages, and the papers' published numbers as reference rows.",
    )
    report.add_argument("results", nargs="+", metavar="RESULTS.json", help="results files written by `evaluate`")
    report.add_argument("--output", metavar="FILE", help="also write the table to this file")
    report.add_argument("--no-reference", action="store_true", help="leave out the papers' reference rows")
    report.add_argument("--tasks", help="only these tasks or groups (e.g. 'pearl' or 'turney,bird')")
    report.add_argument(
        "--authors",
        action="store_true",
        help="add a row per authors' published checkpoint (results/<method>/authors-<name>.json, written by "
        "`phrasezoo evaluate --model <repo id>`; marked not measured until that file exists)",
    )
    report.add_argument(
        "--readme", metavar="FILE", help="also rewrite the <!-- BLOCK:start --> ... <!-- BLOCK:end --> block of FILE"
    )
    report.add_argument("--block", default="results", help="README block name for --readme (default: results)")
    report.set_defaults(func=run_report)
    register_dev_eval(subparsers)


DEV_EVAL_DESCRIPTION = """\
Score a model on the phrase DEV suite and write a JSON document. The dev suite is what every hyper-parameter,
checkpoint and mixing choice is made on: it is built only from offline resources that no test benchmark uses
(the dict-de-en bilingual-pivot table's dev split, the wiki-leads vital articles whose title hashes into the dev
split, WordSim-353/SimLex-999 from gensim), and every item passes the strict benchmark filter, so it is disjoint
from the reported test benchmarks (Turney, BiRD, PPDB, PPDB-filtered, YAGO, UMLS, CoNLL-2003, BC5CDR, AutoFJ,
STS-B-Context). Report test numbers with `phrasezoo evaluate`; choose with `phrasezoo dev-eval`. About 20-40 s for
MiniLM on one CPU thread once the dev sets are cached (first build ~15 s, plus ~45 s if the pivot table is not yet
cached). A task whose resource is missing (e.g. dict-de-en) is skipped with a warning and recorded as skipped."""

DEV_EVAL_EPILOG = f"""\
{SPEC_HELP}

dev tasks (--tasks all | comma-separated names):
  dev_paraphrase    pivot paraphrase pairs (dev split): partner retrieval, top-1 accuracy (PPDB/BiRD proxy)
  dev_description   wiki-leads title -> one-line description retrieval, top-1 accuracy (entity-linking proxy)
  dev_topics        wiki-leads titles, KMeans (k = topics) NMI against the topic (entity-clustering proxy)
  dev_fuzzy         corrupted title -> clean title retrieval, top-1 accuracy (fuzzy-join proxy)
  dev_wordsim       WordSim-353 + SimLex-999 pairs without benchmark words, Spearman
  dev_avg = mean of the tasks that ran

examples:
  phrasezoo dev-eval --model baseline:minilm-l6 --output results/baselines/dev-baseline-minilm-l6.json
  phrasezoo dev-eval --model outputs/pearl-mini --tasks dev_fuzzy,dev_topics
"""


def register_dev_eval(subparsers) -> None:
    """Add the ``dev-eval`` subcommand (the dev suite of :mod:`phrasezoo.evaluation.dev.suite`)."""
    dev = subparsers.add_parser(
        "dev-eval",
        help="score a model on the dev suite (disjoint from the test benchmarks) for model selection",
        description=DEV_EVAL_DESCRIPTION,
        epilog=DEV_EVAL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dev.add_argument("--model", metavar="M", help="model spec (see below); required unless --table")
    dev.add_argument(
        "--table",
        nargs="+",
        metavar="RESULTS",
        help="instead of evaluating: print the markdown table of these dev results files (with --readme/--block)",
    )
    dev.add_argument("--readme", metavar="README", help="with --table: rewrite this README's block")
    dev.add_argument("--block", default="dev-suite", help="README block name for --table (default: dev-suite)")
    dev.add_argument("--tasks", default="all", help="'all' or comma-separated dev task names (default: all)")
    dev.add_argument("--output", metavar="FILE", help="JSON to write (default: results/<method>/dev-<model name>.json)")
    dev.add_argument("--max-items", type=int, metavar="N", help="cap items per task (quick checks; default: no cap)")
    dev.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="encoding batch size")
    dev.add_argument(
        "--benchmarks-dir",
        metavar="DIR",
        help="test benchmarks the dev data is checked against when built (default: $PHRASEZOO_BENCHMARKS or "
        "../shared/benchmarks)",
    )
    dev.add_argument("--rebuild", action="store_true", help="rebuild the cached dev sets")
    dev.add_argument("--no-progress", action="store_true", help="no progress bars or per-task lines")
    dev.set_defaults(func=run_dev_eval)


def run_dev_eval(args: argparse.Namespace) -> int:
    if args.table:
        missing = [p for p in args.table if not Path(p).is_file()]
        if missing:
            print(f"error: dev results file(s) not found: {', '.join(missing)}", file=sys.stderr)
            return 2
        table = format_dev_table([read_dev_results(p) for p in args.table])
        print(table)
        if args.readme:
            write_readme_table(Path(args.readme), table, block=args.block)
        return 0
    if not args.model:
        print("error: --model is required (or --table RESULTS... to print a table)", file=sys.stderr)
        return 2

    try:
        resolve_dev_tasks(args.tasks)
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 2
    output = (
        Path(args.output) if args.output else results_path(args.model).with_name(f"dev-{results_path(args.model).name}")
    )
    try:
        doc = evaluate_dev(
            args.model,
            tasks=args.tasks,
            progress=not args.no_progress,
            max_items=args.max_items,
            batch_size=args.batch_size,
            benchmarks_dir=args.benchmarks_dir,
            output=output,
            rebuild=args.rebuild,
        )
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    lines = [f"model {doc['model']} (revision {doc['model_revision']}), dev suite v{doc['version']}"]
    for name, entry in doc["tasks"].items():
        value = "skipped" if entry["score"] is None else f"{entry['score']:.4f}"
        lines.append(f"  {name:16s} {entry['metric']:14s} {value:>8s} n={entry['n']}")
    lines.append(f"dev_avg {doc['dev_avg']} ({doc['seconds']:.1f} s); written to {output}")
    print("\n".join(lines))
    return 0


def parse_key_values(items: list[str]) -> dict[str, Any]:
    """``["steps=25", "top_fraction=0.2"]`` -> ``{"steps": 25, "top_fraction": 0.2}``: ``KEY=VALUE`` options of a
    command line (JSON values; a bare word is a string), e.g. the CCL options of ``--ccl``."""
    parsed = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"Options take KEY=VALUE, e.g. --ccl steps=25; got {item!r}.")
        try:
            parsed[key] = json.loads(value)
        except json.JSONDecodeError:
            parsed[key] = value
    return parsed


def run_evaluate(args: argparse.Namespace) -> int:
    try:
        resolve_tasks(args.tasks)
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 2
    try:
        ccl = parse_key_values(args.ccl)
        check_task_options({"ccl": ccl})  # a misspelt key fails here, before the model is loaded
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    benchmarks_dir = Path(args.benchmarks_dir) if args.benchmarks_dir else default_benchmarks_dir()
    model, output = _model_and_output(args)
    started = time.perf_counter()
    try:
        doc = evaluate(
            model,
            tasks=args.tasks,
            benchmarks_dir=benchmarks_dir,
            output=output,
            progress=not args.no_progress,
            stsb_per_span=args.stsb_per_span,
            source=args.source,
            batch_size=args.batch_size,
            task_options={"ccl": ccl} if ccl else None,
        )
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(summary(doc, time.perf_counter() - started, output))
    return 0


def _model_and_output(args: argparse.Namespace) -> tuple[Any, Path]:
    """The model to evaluate and its results file: a Hub repo id is resolved to a local folder first (an authors'
    checkpoint converted in memory) and its results named after it."""
    if not is_repo_id(args.model):
        return args.model, Path(args.output) if args.output else results_path(args.model)
    found = resolve_hub_model(args.model)
    spec = str(found) if isinstance(found, Path) else found
    model = load_encoder(spec, name=args.model, batch_size=args.batch_size, progress=not args.no_progress)
    if args.output:
        return model, Path(args.output)
    if release_of(args.model):
        return model, authors_results_path(args.model)
    return model, results_path(str(found)).with_name(f"{results_file_name(args.model)}.json")


def run_report(args: argparse.Namespace) -> int:
    missing = [p for p in args.results if not Path(p).is_file()]
    if missing:
        print(f"error: results file(s) not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    docs = [read_results(p) for p in args.results]
    if args.tasks:
        keep = set(resolve_tasks(args.tasks))
        docs = [{**d, "results": [r for r in d["results"] if r["task"] in keep]} for d in docs]
    table = format_report(docs, include_reference=not args.no_reference, authors=args.authors)
    print(table)
    if args.readme:
        write_readme_table(Path(args.readme), table, block=args.block)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(table + "\n", encoding="utf8")
    return 0


def summary(doc: dict, seconds: float, output: Path | None = None) -> str:
    """Plain-text table of one results document."""
    lines = [f"model {doc['model']} (revision {doc['model_revision']})", f"{'task':14s} {'metric':28s} {'value':>7s} "
             f"{'n':>7s} {'seconds':>8s}"]  # fmt: skip
    for r in doc["results"]:
        value = "skipped" if r["value"] is None else f"{100 * r['value']:.1f}"
        lines.append(f"{r['task']:14s} {r['metric']:28s} {value:>7s} {r['n']:7d} {r['seconds']:8.1f}")
    lines.append(f"total {seconds / 60:.1f} min" + (f"; results in {output}" if output else ""))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m phrasezoo.evaluation", description="phrasezoo benchmark suite")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
