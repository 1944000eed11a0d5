"""Compare recipe variants on the dev suite: the chosen row of each run's ``results/<method>/<run>-dev-selection.json``.

For choices that need one training run per value (e.g. Phrase-BERT's paraphraser): train each variant with
``phrasezoo pipeline --dev-only`` (which writes the dev-selection file and evaluates no benchmark), one or more
seeds each, then keep the variant with the better mean. It never reads a benchmark result. ``--without TASK`` adds the dev average without that task, for a
variant whose training data resembles one dev task (the pivot paraphraser and ``dev_paraphrase`` come from the same
dictionary, split by phrase), so that a gain there alone does not decide.

    .venv/bin/python experiments/common/dev_compare.py A-dev-selection.json A-seed7-dev-selection.json \\
        B-dev-selection.json B-seed7-dev-selection.json --labels offline offline pivot+offline pivot+offline \\
        --without dev_paraphrase > results/phrase-bert/experiments/phrase-bert-mini-paraphraser-dev.jsonl
    .venv/bin/python experiments/common/dev_compare.py --render results/phrase-bert/experiments/phrase-bert-mini-paraphraser-dev.jsonl \\
        --readme README.md --block phrase-bert-mini-paraphraser-dev
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from phrasezoo.core.files import write_readme_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seeds_report import chosen_row  # noqa: E402  (the sibling script: a run's chosen grid row)


def compare_row(selection: dict, without: list[str], run: str | None = None) -> dict:
    """One output line: run (``run``, else the file's ``model``), checkpoint, chosen values, dev scores and the
    averages without ``without``."""
    row = chosen_row(selection)
    tasks = selection["dev_tasks"]
    out = {"run": run or selection["model"], "checkpoint": selection.get("checkpoint"), "dev_tasks": tasks, **row}
    for task in without:
        kept = [t for t in tasks if t != task]
        out[f"dev_avg_without_{task}"] = round(sum(row[t] for t in kept) / len(kept), 6)
    return out


def render(rows: list[dict]) -> str:
    """Markdown: one line per variant (the mean over its runs) with every dev task and average, x 100."""
    variants = list(dict.fromkeys(row.get("variant", row["run"]) for row in rows))
    tasks = rows[0]["dev_tasks"]
    averages = ["dev_avg"] + sorted(k for k in rows[0] if k.startswith("dev_avg_without_"))
    # runs chosen by objective worst_margin carry their smallest margin over the baseline: the number they were
    # chosen by, so it gets a column (only when every run has one)
    margins = ["worst_margin"] if all("worst_margin" in row for row in rows) else []
    columns = tasks + averages + margins
    head = ["variant", "runs"] + ["worst margin" if c == "worst_margin" else c.removeprefix("dev_") for c in columns]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + ":---:|" * len(columns)]
    for variant in variants:
        group = [row for row in rows if row.get("variant", row["run"]) == variant]
        means = [100 * sum(row[c] for row in group) / len(group) for c in columns]
        runs = ", ".join(row["run"] for row in group)
        cells = [f"{m:+.1f}" if c == "worst_margin" else f"{m:.1f}" for c, m in zip(columns, means, strict=True)]
        lines.append(f"| {variant} | {runs} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "- Dev-suite scores x 100, averaged over the runs of a variant (for a dev-selection file: the exported "
        "model, i.e. the dev-chosen blend); no test benchmark is read. `avg_without_<task>` leaves that task out.",
    ]
    if margins:
        lines.append(
            "- worst margin: the smallest per-task dev margin over the backbone, scored in the same selection run "
            "(the number `objective: worst_margin` maximises), averaged over the runs."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("selections", nargs="*", help="dev-selection files (results/<method>/<run>-dev-selection.json)")
    parser.add_argument("--without", nargs="*", default=[], help="dev tasks to leave out of a second average")
    parser.add_argument("--labels", nargs="*", help="the variant of each file (files of one variant are its seeds)")
    parser.add_argument(
        "--runs",
        nargs="*",
        help="the run name of each file (default: its 'model' field; give the file's name when a record file was "
        "renamed after its run, e.g. results/pearl/earlier-releases/wordnet-names-before-lexicon/pearl-mini-wordnet-names-before-lexicon-dev-selection.json still says model pearl-mini)",
    )
    parser.add_argument("--render", help="print (or with --readme, write) the markdown table of this JSONL output")
    parser.add_argument("--readme", help="README whose block --block gets the rendered table")
    parser.add_argument("--block", default="dev-compare", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    if args.render:
        rows = [json.loads(line) for line in Path(args.render).read_text().splitlines() if line.strip()]
        table = render(rows)
        if args.readme:
            write_readme_table(args.readme, table, args.block)
        print(table)
        return
    if not args.selections:
        parser.error("give dev-selection files, or --render a JSONL file.")
    if args.labels and len(args.labels) != len(args.selections):
        parser.error(f"--labels needs one label per selection file ({len(args.selections)}), got {len(args.labels)}.")
    if args.runs and len(args.runs) != len(args.selections):
        parser.error(f"--runs needs one run name per selection file ({len(args.selections)}), got {len(args.runs)}.")
    for i, path in enumerate(args.selections):
        run = args.runs[i] if args.runs else None
        row = compare_row(json.loads(Path(path).read_text()), args.without, run)
        print(json.dumps({"variant": args.labels[i], **row} if args.labels else row))


if __name__ == "__main__":
    main()
