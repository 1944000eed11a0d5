"""Seed-aware comparison: a recipe trained with several seeds against a baseline measured in the same runs.

One training run is not evidence: two seeds of one recipe can differ by more than the margin over the backbone.
This table shows, per benchmark column, the baseline, the seeds' mean with its spread (max - min over seeds), the
margin of the mean over the baseline, and whether that margin is larger than the spread (the "beyond the rerun
spread" criterion of the zoo's checkpoints). Averages (the suite's 7 tasks without the gold-name KB ones, and all
9) are computed per seed first, then summarised the same way.

``python experiments/common/seeds_report.py --baseline results/baselines/baseline-minilm-l6.json \\
    --model pearl-mini results/pearl/pearl-mini-seed*.json --readme README.md --block pearl-mini-seeds``

``--effect AFTER=BEFORE`` (task names, e.g. ``conll2003_context_ccl=conll2003_context``) adds a table of what a
step of the recipe does per seed (UCTopic's CCL: the score after it minus the score before it, same metric).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from phrasezoo.core.files import write_readme_table
from phrasezoo.evaluation.report import _columns_for, _doc_values, _key, _mean, no_kb_tasks, suite_tasks
from phrasezoo.evaluation.results import get_value, read_results

AVG_NO_KB = "avg w/o KB (7)"
AVG_ALL = "PEARL avg (9)"


def _values(doc: dict, columns) -> dict[str, float | None]:
    values = _doc_values(doc, columns)
    main = {c.task: values.get(_key(c)) for c in columns}
    suite = suite_tasks()
    if set(suite) <= set(main):
        values[AVG_NO_KB] = _mean([main[t] for t in no_kb_tasks()])
        values[AVG_ALL] = _mean([main[t] for t in suite])
    return values


def seed_summary(baseline: dict, seeds: list[dict]) -> list[dict[str, Any]]:
    """Per column: ``label, baseline, mean, spread, margin, beyond_spread, per_seed``."""
    if not seeds:
        raise ValueError("seed_summary needs at least one results document of the trained model.")
    columns = _columns_for([baseline, *seeds])
    base = _values(baseline, columns)
    per_seed = [_values(doc, columns) for doc in seeds]
    keys = [(_key(c), c.label) for c in columns] + [(k, k) for k in (AVG_NO_KB, AVG_ALL) if k in base]
    rows = []
    for key, label in keys:
        values = [v.get(key) for v in per_seed]
        if any(v is None for v in values) or base.get(key) is None:
            continue
        mean = statistics.fmean(values)
        spread = max(values) - min(values)
        margin = mean - base[key]
        rows.append(
            {
                "label": label,
                "baseline": base[key],
                "mean": mean,
                "spread": spread,
                "margin": margin,
                "beyond_spread": margin > spread,
                "per_seed": values,
            }
        )
    return rows


def format_seed_table(name: str, baseline: dict, seeds: list[dict], unit: str = "seeds") -> str:
    """Markdown: one column per benchmark; rows baseline, per seed, mean, spread, margin and the verdict.

    ``unit`` names what the rows are (``"seeds"``; ``"soups"`` for a model-soup recipe, one soup per row)."""
    rows = seed_summary(baseline, seeds)
    header = ["", *(r["label"] for r in rows)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [":---:"] * len(rows)) + "|"]

    def line(label: str, cells: list[str]) -> None:
        lines.append("| " + " | ".join([label, *cells]) + " |")

    line(str(baseline.get("model", "baseline")), [f"{100 * r['baseline']:.1f}" for r in rows])
    for i, doc in enumerate(seeds):
        label = doc.get("seed", doc.get("model", f"run {i + 1}"))
        line(str(label), [f"{100 * r['per_seed'][i]:.1f}" for r in rows])
    line(f"**{name} mean ({len(seeds)} {unit})**", [f"**{100 * r['mean']:.1f}**" for r in rows])
    line("spread (max - min)", [f"{100 * r['spread']:.1f}" for r in rows])
    line("mean - baseline", [f"{100 * r['margin']:+.1f}" for r in rows])
    line("beats the baseline by more than the spread", ["yes" if r["beyond_spread"] else "**no**" for r in rows])
    lines += [
        "",
        "- Values are percentages (accuracy, Pearson r, NMI x 100); the baseline and every seed were measured by "
        "the same harness on the same benchmark files.",
        f"- Spread: max - min over the {unit}. A margin over the baseline counts only when it is larger than that.",
    ]
    return "\n".join(lines)


def baseline_dev_average(baseline_dev: dict, tasks: list[str] | None) -> float | None:
    """The baseline's dev average over the tasks the runs were chosen on (``tasks``; all of its own when ``None``),
    or ``None`` when the baseline's dev file lacks one of them (then the two averages would not be comparable)."""
    if not tasks:
        return baseline_dev.get("dev_avg")
    scores = [baseline_dev.get("tasks", {}).get(t, {}).get("score") for t in tasks]
    return None if any(v is None for v in scores) else sum(scores) / len(scores)


def chosen_row(selection: dict) -> dict:
    """The grid row of a dev selection's chosen values (``results/<method>/<run>-dev-selection.json``): the dev scores of
    the exported model."""
    for row in selection["rows"]:
        if all(row.get(k) == v for k, v in selection["chosen"].items()):
            return row
    raise ValueError(f"{selection.get('model')}: no grid row matches the chosen values {selection['chosen']}.")


def format_selection_table(selections: list[dict], baseline_dev: dict | None = None) -> str:
    """Markdown: what each run chose on the dev suite (``results/<method>/<name>-dev-selection.json``) and its dev score
    (and, for runs chosen by ``worst_margin``, the chosen values' smallest margin over the baseline)."""
    keys = list(selections[0]["chosen"]) if selections else []
    worst = any(sel.get("objective") == "worst_margin" for sel in selections)
    header = ["run", "checkpoint", *keys, "dev_avg (chosen)", *(["worst margin (chosen)"] if worst else [])]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    if baseline_dev is not None:
        avg = baseline_dev_average(baseline_dev, selections[0].get("dev_tasks") if selections else None)
        shown = "–" if avg is None else f"{100 * avg:.1f}"
        cells = [str(baseline_dev.get("model", "baseline")), "–", *("–" for _ in keys), shown]
        lines.append("| " + " | ".join(cells + (["–"] if worst else [])) + " |")
    for sel in selections:
        chosen = sel["chosen"]
        row = next((r for r in sel["rows"] if all(r.get(k) == chosen[k] for k in keys)), {})
        cells = [sel["model"], sel["checkpoint"], *(str(chosen[k]) for k in keys)]
        cells.append(f"{100 * row['dev_avg']:.1f}" if "dev_avg" in row else "–")
        if worst:
            cells.append(f"{100 * row['worst_margin']:+.1f}" if "worst_margin" in row else "–")
        lines.append("| " + " | ".join(cells) + " |")
    if selections:
        lines += ["", f"- Chosen on: {selections[0]['selected_on']}; {selections[0]['search']}."]
    return "\n".join(lines)


def format_effect_table(seeds: list[dict], effects: list[tuple[str, str]], metric: str = "nmi") -> str:
    """Markdown: per seed, ``metric`` of each ``(after, before)`` task pair and the change; the mean change and
    whether the step helps in every seed."""
    header = ["seed", *(f"{after} - {before}" for after, before in effects)]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "|".join([":---:"] * len(effects)) + "|"]
    deltas: list[list[float]] = [[] for _ in effects]
    for doc in seeds:
        cells = [str(doc.get("seed", doc.get("model", "?")))]
        for i, (after, before) in enumerate(effects):
            a, b = get_value(doc, after, metric), get_value(doc, before, metric)
            if a is None or b is None:
                cells.append("–")
                continue
            deltas[i].append(a - b)
            cells.append(f"{100 * b:.1f} -> {100 * a:.1f} ({100 * (a - b):+.1f})")
        lines.append("| " + " | ".join(cells) + " |")
    mean_cells = [f"{100 * statistics.fmean(d):+.1f}" if d else "–" for d in deltas]
    lines.append("| **mean change** | " + " | ".join(f"**{c}**" for c in mean_cells) + " |")
    verdict = ["yes" if d and all(x > 0 for x in d) else "**no**" for d in deltas]
    lines.append("| improves in every seed | " + " | ".join(verdict) + " |")
    lines += ["", f"- {metric.upper()} x 100 before -> after the step, on the same test items, per seed."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python experiments/common/seeds_report.py",
        description="Seed-aware table of one recipe's runs (several seeds) against a baseline; see the module doc.",
    )
    parser.add_argument("--baseline", required=True, help="results file of the baseline (same tasks)")
    parser.add_argument("--model", required=True, help="the recipe's name, shown in the table")
    parser.add_argument("seeds", nargs="+", help="results files, one per seed")
    parser.add_argument(
        "--unit", default="seeds", help="what each results file is: seeds (default), or soups for a soup recipe"
    )
    parser.add_argument("--labels", nargs="*", help="row labels of the seed files (default: the file names)")
    parser.add_argument("--selections", nargs="*", default=[], help="dev-selection files of the runs (optional)")
    parser.add_argument("--baseline-dev", help="dev-suite results of the baseline (optional, for --selections)")
    parser.add_argument(
        "--effect",
        action="append",
        default=[],
        metavar="AFTER=BEFORE",
        help="task pair whose per-seed change to tabulate, e.g. conll2003_context_ccl=conll2003_context",
    )
    parser.add_argument("--effect-metric", default="nmi", help="metric of the --effect tasks (default: nmi)")
    parser.add_argument("--readme", help="rewrite this README's block")
    parser.add_argument("--block", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    pairs = []
    for item in args.effect:
        after, sep, before = item.partition("=")
        if not sep or not after or not before:
            parser.error(f"--effect takes AFTER=BEFORE task names, got {item!r}.")
        pairs.append((after, before))
    docs = [read_results(p) for p in args.seeds]
    labels = args.labels or [Path(p).stem for p in args.seeds]
    if len(labels) != len(docs):
        parser.error(f"--labels gives {len(labels)} labels for {len(docs)} results files.")
    for label, doc in zip(labels, docs):
        doc["seed"] = label
    table = format_seed_table(args.model, read_results(args.baseline), docs, unit=args.unit)
    if pairs:
        table += "\n\nWhat the step does, per seed:\n\n" + format_effect_table(docs, pairs, args.effect_metric)
    if args.selections:
        selections = [json.loads(Path(p).read_text()) for p in args.selections]
        base_dev = json.loads(Path(args.baseline_dev).read_text()) if args.baseline_dev else None
        table += "\n\nChoices made on the dev suite (never on the benchmarks above):\n\n"
        table += format_selection_table(selections, base_dev)
    print(table)
    if args.readme:
        write_readme_table(Path(args.readme), table, block=args.block or f"{args.model}-seeds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
