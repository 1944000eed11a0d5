"""SLICE's report: STS-B-Context as in the paper's Table 1, run for one model and tabulated with Williams' tests.

``evaluate`` runs the suite's ``stsb_context`` task with the three setups of Table 1: (A) whole passage, (C) single
pass over all spans of 1..20 words (the headline), and (B) one forward pass per span on a fixed, seeded sample of
passages (B over all 1,024 passages is ~2 h for MiniLM on a 2-core CPU), plus span localisation. It writes the
suite's results file; the per-item scores it keeps make the significance tests possible later.

``table`` reads results files and prints a markdown table (Pearson and Spearman per setup, localisation, and the
paper's numbers as a reference row) followed by Williams' one-sided tests on Pearson r between every listed pair of
models, per setup (:mod:`phrasezoo.methods.slice.report.significance`); ``--readme`` writes it into a README block::

    python -m phrasezoo.methods.slice.report evaluate --model outputs/slice-mini --output results/slice/slice-mini.json
    python -m phrasezoo.methods.slice.report table results/baselines/baseline-minilm-l6-stsb.json results/slice/slice-mini.json \\
        --pair "slice-mini vs baseline:minilm-l6" --readme README.md --block slice
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from phrasezoo.core.files import write_readme_table
from phrasezoo.encoders import l2_normalize, load_encoder
from phrasezoo.evaluation.harness import check_benchmarks_dir
from phrasezoo.evaluation.results import TaskResult, get_value, make_document, read_results, write_results
from phrasezoo.evaluation.tasks import TaskContext, default_benchmarks_dir, get_task
from phrasezoo.evaluation.tasks.stsb_context import correlations, pooled_spans
from phrasezoo.methods.slice.report.significance import williams_from_scores
from phrasezoo.resources import resolve_backbone
from phrasezoo.zoo.registry import get_method

TASK = "stsb_context"
#: (metric suffix, label) of the paper's three setups, in Table 1's order
SETUPS = (
    ("passage", "(A) whole passage"),
    ("spans_per_span_sample", "(B) per span, sample"),
    ("spans_single_pass", "(C) single pass"),
)
#: SLICE's own rows of Table 1 (BERT-base trained on MS MARCO); (B) there covers all 1,024 passages
PAPER_ROW = {
    "passage": (0.547, 0.535),
    "spans_per_span_sample": (0.762, 0.757),
    "spans_single_pass": (0.677, 0.669),
}


# --------------------------------------------------------------------------------------------------- evaluate
def evaluate_stsb(
    model: Any,
    output: str | Path | None = None,
    name: str | None = None,
    per_span_sample: int = 150,
    seed: int = 0,
    benchmarks_dir: str | Path | None = None,
    batch_size: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run STS-B-Context (A, C, localisation; B on ``per_span_sample`` passages, 0 = none) and write the results."""
    ctx = TaskContext(
        benchmarks_dir=Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir(),
        progress=progress,
        seed=seed,
        options={"stsb_per_span_sample": per_span_sample},
    )
    check_benchmarks_dir(ctx, [TASK])
    encoder = load_encoder(model, name=name, batch_size=batch_size, progress=progress)
    task = get_task(TASK)
    results = task.score(encoder, task.load(ctx), ctx)
    doc = make_document(encoder.name, encoder.revision, results)
    if output is not None:
        write_results(doc, output)
    return doc


def sweep_max_words(
    model: Any,
    max_words: tuple[int, ...] = (5, 10, 15, 20, 25, 30, 35),
    benchmarks_dir: str | Path | None = None,
    batch_size: int | None = None,
    progress: bool = True,
) -> list:
    """The paper's MAX_SIZE sweep of setup (C): Pearson/Spearman of the single-pass search with spans of
    1..``k`` words for each ``k`` (one forward pass per passage, reused for every ``k``); result entries
    ``pearson_spans_single_pass_max{k}`` (per-item scores in ``details``) and ``spearman_...``."""
    ctx = TaskContext(benchmarks_dir=Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir())
    data = get_task(TASK).load(ctx)
    encoder = load_encoder(model, batch_size=batch_size, progress=progress)
    tokens = encoder.encode_tokens(data.passages)
    queries = encoder.encode(data.lines)
    entries = []
    for k in max_words:
        best = np.full(len(data.passages), np.nan, dtype=np.float32)
        for i, (item, passage) in enumerate(zip(tokens, data.passages)):
            vectors, _, _ = pooled_spans(item["embeddings"], item["offsets"], passage, max_words=k)
            if len(vectors):
                best[i] = float((l2_normalize(vectors) @ queries[i]).max())
        r, rho = correlations(best, data.gold)
        note = f"(C) single pass, spans of 1..{k} words (MAX_SIZE sweep)"
        details = {"scores": [round(float(x), 6) for x in best]}
        entries += [
            TaskResult(TASK, f"pearson_spans_single_pass_max{k}", r, len(best), notes=note, details=details),
            TaskResult(TASK, f"spearman_spans_single_pass_max{k}", rho, len(best), notes=note),
        ]
    return entries


def sweep_table(docs: list[dict], gold: list[float], pairs: list[tuple[str, str]]) -> list[str]:
    """Markdown lines: (C) Pearson per MAX_SIZE for each model, and Williams' p for ``pairs`` per MAX_SIZE."""
    sizes = sorted(
        {int(r["metric"].rsplit("max", 1)[1]) for d in docs for r in d["results"]
         if r["metric"].startswith("pearson_spans_single_pass_max")}
    )  # fmt: skip
    if not sizes:
        return []
    docs = [d for d in docs if any(_value(d, f"pearson_spans_single_pass_max{k}") is not None for k in sizes)]
    lines = ["| MAX_SIZE (words) | " + " | ".join(str(k) for k in sizes) + " |", "|---|" + ":---:|" * len(sizes)]
    for doc in docs:
        values = [_fmt(_value(doc, f"pearson_spans_single_pass_max{k}")) for k in sizes]
        lines.append(f"| {doc['model']} (C) r | " + " | ".join(values) + " |")
    by_name = {doc["model"]: doc for doc in docs}
    for first, second in pairs:
        if first not in by_name or second not in by_name:
            continue
        tests = [williams_between(by_name[first], by_name[second], f"spans_single_pass_max{k}", gold) for k in sizes]
        if all(test is None for test in tests):
            continue
        cells = ["–" if t is None else f"{t.p_one_sided:.2g}" + (" ✓" if t.p_one_sided < 0.05 else "") for t in tests]
        lines.append(f"| Williams p: {first} > {second} | " + " | ".join(cells) + " |")
    lines += ["", "- The paper's MAX_SIZE sweep of setup (C) (multiples of 5 up to 35; one forward pass per passage)."]
    return lines


# ------------------------------------------------------------------------------------------------------ table
def _entry(doc: dict, metric: str) -> dict | None:
    return next((r for r in doc["results"] if r["task"] == TASK and r["metric"] == metric), None)


def _value(doc: dict, metric: str) -> float | None:
    return get_value(doc, TASK, metric)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def williams_between(doc_a: dict, doc_b: dict, way: str, gold: list[float]):
    """Williams' test of model A vs model B on setup ``way`` (Pearson), or ``None`` when scores are missing."""
    a, b = _entry(doc_a, f"pearson_{way}"), _entry(doc_b, f"pearson_{way}")
    if not a or not b or not a.get("details") or not b.get("details"):
        return None
    rows_a, rows_b = a["details"].get("rows"), b["details"].get("rows")
    if rows_a != rows_b:  # different samples: not the same items
        return None
    items = [gold[i] for i in rows_a] if rows_a is not None else gold
    return williams_from_scores(items, a["details"]["scores"], b["details"]["scores"])


def slice_table(
    docs: list[dict],
    pairs: list[tuple[str, str]] | None = None,
    gold: list[float] | None = None,
    include_reference: bool = True,
) -> str:
    """Markdown: one row per results document (setups x Pearson/Spearman, localisation), the paper's SLICE row, then
    Williams' tests (one-sided, H1: first model's Pearson r is higher) for ``pairs`` of model names (default: all
    ordered pairs whose first model is listed after the second, i.e. later rows vs earlier rows)."""
    header = ["model"]
    for _, label in SETUPS:
        header += [f"{label} r", f"{label} ρ"]
    header += ["span IoU", "IoU ≥ 0.5", "median span words"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [":---:"] * (len(header) - 1)) + "|"]
    sample_n = None
    for doc in docs:
        cells = [str(doc["model"]).replace("|", "\\|")]
        for way, _ in SETUPS:
            cells += [_fmt(_value(doc, f"pearson_{way}")), _fmt(_value(doc, f"spearman_{way}"))]
            entry = _entry(doc, f"pearson_{way}")
            if way.endswith("_sample") and entry and entry["value"] is not None:
                sample_n = entry["n"]
        median = _value(doc, "span_chosen_words_median")
        cells += [
            _fmt(_value(doc, "span_iou_mean")),
            _fmt(_value(doc, "span_iou_at_least_0.5")),
            "–" if median is None else f"{median:g}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if include_reference:
        cells = ["SLICE, BERT-base on MS MARCO (paper)"]
        for way, _ in SETUPS:
            cells += [_fmt(PAPER_ROW[way][0]), _fmt(PAPER_ROW[way][1])]
        lines.append("| " + " | ".join(cells + ["–", "–", "–"]) + " |")
    lines.append("")
    notes = [
        "Pearson r / Spearman ρ with the gold 0-5 scores over the 1,024 STS-B-Context items; spans of 1..20 "
        "whitespace words. (A): the passage as one text; (C): every span mean-pooled from one forward pass of the "
        "passage (SLICE's intended use); localisation columns: the (C) argmax span vs the hidden paraphrase.",
    ]
    if sample_n:
        notes.append(
            f"(B): every span encoded on its own, on a fixed random sample of {sample_n} passages (numpy seed 0) "
            "because all 1,024 take hours on a CPU; the paper's (B) row covers all 1,024."
        )
    if include_reference:
        notes.append("The (paper) row is SLICE's published Table 1 (BERT-base, MS MARCO), not re-run here.")
    lines += [f"- {note}" for note in notes]
    if gold is not None:
        lines += ["", *williams_table(docs, gold, pairs)]
        sweep = sweep_table(docs, gold, pairs or [])
        if sweep:
            lines += ["", *sweep]
    return "\n".join(lines)


def williams_table(docs: list[dict], gold: list[float], pairs: list[tuple[str, str]] | None = None) -> list[str]:
    """Markdown lines: Williams' test per pair of models and setup (one-sided p; ✓ = p < 0.05)."""
    by_name = {doc["model"]: doc for doc in docs}
    if pairs is None:
        pairs = [(b["model"], a["model"]) for a, b in itertools.combinations(docs, 2)]
    missing = [name for pair in pairs for name in pair if name not in by_name]
    if missing:
        raise ValueError(f"Unknown model(s) {missing} in --pair; results hold: {', '.join(by_name)}.")
    lines = [
        "| model A | model B | setup | r(A) | r(B) | r(A,B) | Williams t | p (one-sided, A > B) |",
        "|---|---|---|:---:|:---:|:---:|:---:|:---:|",
    ]
    for first, second in pairs:
        for way, label in SETUPS:
            test = williams_between(by_name[first], by_name[second], way, gold)
            if test is None:
                continue
            mark = " ✓" if test.p_one_sided < 0.05 else ""
            lines.append(
                f"| {first} | {second} | {label} | {test.r12:.3f} | {test.r13:.3f} | {test.r23:.3f} | "
                f"{test.t:.2f} | {test.p_one_sided:.3g}{mark} |"
            )
    lines += [
        "",
        "- Williams' t-test for dependent correlations sharing the gold variable (df = n − 3), as in the paper; "
        "✓ = significant at p < 0.05 (one-sided: A's Pearson r higher than B's).",
    ]
    return lines


def load_gold(benchmarks_dir: str | Path | None = None) -> list[float]:
    """The gold scores of STS-B-Context, in file order (what the per-item scores are aligned with)."""
    ctx = TaskContext(benchmarks_dir=Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir())
    return get_task(TASK).load(ctx).gold


def untrained_model(spec: str, model_args: list[str] | None = None):
    """``untrained:METHOD:BACKBONE`` -> the method's model built from the pretrained backbone, untrained (eval mode).

    ``model_args`` are ``key=value`` strings (YAML values) for the method's config, e.g. ``max_seq_length=256``.
    """
    _, method_name, backbone = (spec.split(":", 2) + ["", ""])[:3]
    if not method_name or not backbone:
        raise ValueError(f"Expected untrained:METHOD:BACKBONE (e.g. untrained:slice:minilm-l6), got {spec!r}.")
    method = get_method(method_name)
    if method.from_backbone is None:
        raise ValueError(f"Method '{method_name}' is not built from a pretrained backbone.")
    kwargs = {}
    for item in model_args or []:
        key, _, value = item.partition("=")
        kwargs[key] = yaml.safe_load(value)
    return method.from_backbone(resolve_backbone(backbone), **kwargs).eval()


# -------------------------------------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m phrasezoo.methods.slice.report",
        description="STS-B-Context in the three setups of the SLICE paper's Table 1, with Williams' tests.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("evaluate", help="evaluate one model and write its results file")
    run.add_argument(
        "--model",
        required=True,
        help="model spec (baseline:minilm-l6, outputs/slice-mini, ...), or untrained:METHOD:BACKBONE for a method's "
        "model built from a pretrained backbone before any training (its own pooling, the training start point)",
    )
    run.add_argument(
        "--model-arg", action="append", default=[], metavar="KEY=VALUE", help="config argument for untrained:..."
    )
    run.add_argument("--name", help="model name in the results file (default: from the spec)")
    run.add_argument("--output", required=True, help="results JSON to write")
    run.add_argument("--per-span-sample", type=int, default=150, help="passages for setup (B) (default 150; 0: none)")
    run.add_argument("--seed", type=int, default=0, help="seed of the (B) sample (default 0)")
    run.add_argument("--benchmarks-dir", help="default: $PHRASEZOO_BENCHMARKS or ../shared/benchmarks")
    run.add_argument("--batch-size", type=int, help="encoding batch size")
    run.add_argument("--no-progress", action="store_true")
    sweep = commands.add_parser("sweep", help="add the MAX_SIZE sweep of setup (C) to a model's results file")
    sweep.add_argument("--model", required=True, help="model spec, as for evaluate")
    sweep.add_argument("--model-arg", action="append", default=[], metavar="KEY=VALUE")
    sweep.add_argument("--results", required=True, help="results file to extend (written by evaluate)")
    sweep.add_argument("--sizes", default="5,10,15,20,25,30,35", help="MAX_SIZE values (default 5,10,...,35)")
    sweep.add_argument("--benchmarks-dir", help="default: $PHRASEZOO_BENCHMARKS or ../shared/benchmarks")
    table = commands.add_parser("table", help="markdown table with Williams' tests from results files")
    table.add_argument("results", nargs="+", help="results files written by `evaluate` (rows in this order)")
    table.add_argument(
        "--pair", action="append", default=[], metavar="'A vs B'", help="test model A against model B (repeatable)"
    )
    table.add_argument("--benchmarks-dir", help="where the gold scores are read (for the tests)")
    table.add_argument("--no-reference", action="store_true", help="leave out the paper's row")
    table.add_argument("--readme", help="also write the table into the <!-- BLOCK:start/end --> block of this file")
    table.add_argument("--block", default="slice", help="README block name (default: slice)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "evaluate":
        model = untrained_model(args.model, args.model_arg) if args.model.startswith("untrained:") else args.model
        evaluate_stsb(model, args.output, args.name or (args.model if model is not args.model else None),
                      args.per_span_sample, args.seed, args.benchmarks_dir, args.batch_size,
                      progress=not args.no_progress)  # fmt: skip
        print(f"results written to {args.output}")
        return 0
    if args.command == "sweep":
        doc = read_results(args.results)
        model = untrained_model(args.model, args.model_arg) if args.model.startswith("untrained:") else args.model
        sizes = tuple(int(k) for k in args.sizes.split(","))
        entries = [e.to_dict() for e in sweep_max_words(model, sizes, args.benchmarks_dir)]
        names = {e["metric"] for e in entries}
        doc["results"] = [r for r in doc["results"] if r["metric"] not in names] + entries
        write_results(doc, args.results)
        print(f"sweep {sizes} added to {args.results}")
        return 0
    missing = [p for p in args.results if not Path(p).is_file()]
    if missing:
        print(f"error: results file(s) not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    docs = [read_results(p) for p in args.results]
    pairs = [tuple(part.strip() for part in p.split(" vs ", 1)) for p in args.pair] or None
    if pairs and any(len(p) != 2 for p in pairs):
        print("error: --pair takes 'MODEL_A vs MODEL_B'", file=sys.stderr)
        return 2
    text = slice_table(docs, pairs, load_gold(args.benchmarks_dir), include_reference=not args.no_reference)
    print(text)
    if args.readme:
        write_readme_table(Path(args.readme), text, block=args.block)
    return 0
