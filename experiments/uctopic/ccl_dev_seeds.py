"""Summarise CCL dev traces over several seed models: what each CCL setting does to dev NMI, per step count.

Input: JSON lines written by ``experiments/uctopic/ccl_study.py --trace`` (one run per model x dev split x setting),
e.g. the three uctopic-mini seeds on ``conll2003-dev`` and ``bc5cdr-dev``. For every setting and check step it
reports the NMI change against step 0 of each (model, split), their mean and worst case, and whether the setting
raises dev NMI for every model on every split (what "CCL improves the model" needs). Runs made with
``--oracle-labels`` (gold types in place of pseudo labels, a diagnosis) are listed apart and never chosen.
``--choose`` adds rule 16's choice (one CCL seed); ``--choose-across-seeds`` adds rule 19's, which pools the runs of
one setting with different CCL seeds and asks every seed to raise every model on every split.
No test mention is read.

    .venv/bin/python experiments/uctopic/ccl_dev_seeds.py results/uctopic/experiments/contrastive-clustering/uctopic-ccl-dev-seeds.jsonl \\
        --plot results/uctopic/experiments/contrastive-clustering/uctopic-ccl-dev-seeds.png --readme README.md --block uctopic-ccl-dev-seeds
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from phrasezoo.core.files import write_readme_table
from phrasezoo.methods.uctopic.ccl import CCLConfig


def setting_of(run: dict, with_seed: bool = True) -> str:
    """A readable name of the run's CCL setting (the options that vary in the study); ``with_seed=False`` leaves
    out the CCL seed, so runs of one setting with different CCL seeds share a name."""
    config = CCLConfig(**run["options"])
    name = f"{config.instances}, t={config.top_fraction:g}, {config.masking}"
    if config.learning_rate != CCLConfig.learning_rate:
        name += f", lr {config.learning_rate:g}"
    if config.soup_seeds:
        name += f", CCL soup of seeds {', '.join(map(str, config.soup_seeds))}"
    elif with_seed and config.seed != CCLConfig.seed:
        name += f", CCL seed {config.seed}"
    if config.loss_vector != "training":
        name += f", loss on the {config.loss_vector} vector"
    if run.get("oracle_labels"):
        name += " [gold labels: diagnosis]"
    return name


def model_of(run: dict) -> str:
    return Path(run["model"]).name


def short_model(model: str) -> str:
    """``uctopic-mini-seed7`` -> ``seed 7``; a name without a seed suffix stays as it is (the recipe's seed)."""
    return f"seed {model.rsplit('-seed', 1)[1]}" if "-seed" in model else model


def changes(runs: list[dict]) -> dict[tuple[str, int], dict[tuple[str, str], float]]:
    """``{(setting, step): {(model, split): dev NMI change x 100 against step 0}}``."""
    table: dict[tuple[str, int], dict[tuple[str, str], float]] = defaultdict(dict)
    for run in runs:
        checks = [(c["step"], c["gold_nmi"]) for c in run["checks"]]
        start = dict(checks)[0]
        for step, nmi in checks:
            if step:
                table[(setting_of(run), step)][(model_of(run), run["data"])] = 100 * (nmi - start)
    return table


def summary(runs: list[dict], cells_needed: int | None = None) -> list[dict]:
    """One row per (setting, step): per-(model, split) change, mean, worst, and the every-seed verdict.

    A row is complete with ``cells_needed`` (model, split) cells: by default every model x split of ``runs``; a
    caller that summarises part of a file passes the whole file's count."""
    if cells_needed is None:
        cells_needed = len({model_of(r) for r in runs}) * len({r["data"] for r in runs})
    rows = []
    for (setting, step), cells in sorted(changes(runs).items()):
        complete = len(cells) == cells_needed
        values = list(cells.values())
        rows.append(
            {
                "setting": setting,
                "step": step,
                "cells": {f"{m} {s}": round(v, 2) for (m, s), v in sorted(cells.items())},
                "runs": len(cells),
                "complete": complete,
                "mean": round(sum(values) / len(values), 2),
                "worst": round(min(values), 2),
                "improves_everywhere": complete and min(values) > 0,
            }
        )
    return rows


def choose(rows: list[dict]) -> tuple[dict, bool]:
    """Rule 16's choice over complete, non-diagnosis rows: among the (setting, step) pairs that raise dev NMI for
    every model on every split, the highest mean change (a tie goes to fewer steps); if none does, the highest
    worst-case change. Returns ``(row, improves_everywhere)``."""
    candidates = [r for r in rows if r["complete"] and "gold labels" not in r["setting"]]
    if not candidates:
        raise ValueError("no complete setting to choose from: every (setting, step) needs all models and splits")
    winners = [r for r in candidates if r["improves_everywhere"]]
    if winners:
        return min(winners, key=lambda r: (-r["mean"], r["step"])), True
    return min(candidates, key=lambda r: (-r["worst"], r["step"])), False


def render_choice(runs: list[dict]) -> str:
    """The README line that states rule 16's choice."""
    row, everywhere = choose(summary(runs))
    if everywhere:
        return (
            f"- Chosen (rule 16): {row['setting']}, {row['step']} steps: it raises dev NMI for every model on both "
            f"splits, with the highest mean change ({row['mean']:+.1f}) of the pairs that do."
        )
    return (
        f"- Chosen (rule 16): {row['setting']}, {row['step']} steps, the highest worst-case change "
        f"({row['worst']:+.1f}). No setting raises dev NMI for every model on both splits: on dev, CCL does not "
        "improve these models."
    )


def seed_robust_rows(runs: list[dict]) -> list[dict]:
    """Rule 19's view: one row per (setting without its CCL seed, step), pooling the cells of every CCL seed the
    file has for that setting. A row passes (``raises_for_every_seed``) only if every one of those seeds has a
    complete row at that step that raises dev NMI for every model on every split: a setting that helps for one
    draw of pseudo labels and batches only is what failed on test (rule 16)."""
    usable = [r for r in runs if not r.get("oracle_labels") and not r["options"].get("soup_seeds")]
    needed = len({model_of(r) for r in usable}) * len({r["data"] for r in usable})
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for run in usable:
        groups[(setting_of(run, with_seed=False), CCLConfig(**run["options"]).seed)].append(run)
    by_seed: dict[tuple[str, int], dict[int, dict]] = defaultdict(dict)
    for (setting, seed), group in groups.items():
        for row in summary(group, cells_needed=needed):  # complete means every model x split of the whole file
            by_seed[(setting, row["step"])][seed] = row
    pooled = []
    for (setting, step), rows in sorted(by_seed.items()):
        seeds = sorted(seed for name, seed in groups if name == setting)
        values = [v for row in rows.values() for v in row["cells"].values()]
        passes = set(rows) == set(seeds) and all(row["improves_everywhere"] for row in rows.values())
        pooled.append(
            {
                "setting": setting,
                "step": step,
                "seeds": seeds,
                "seeds_at_step": sorted(rows),
                "cells": len(values),
                "mean": round(sum(values) / len(values), 2),
                "worst": round(min(values), 2),
                "raises_for_every_seed": passes,
            }
        )
    return pooled


def render_seed_robust(runs: list[dict]) -> str:
    """Rule 19's table and choice: per (setting, step), the CCL seeds, the pooled mean and worst change, and whether
    every seed raises every model on every split; the choice is the highest pooled mean among those that do (a tie
    goes to fewer steps), or none."""
    rows = seed_robust_rows(runs)
    lines = [
        "| setting | steps | CCL seeds with this step | cells | mean | worst | raises for every CCL seed |",
        "|---|---:|:---:|---:|---:|---:|:---:|",
    ]
    for row in rows:
        missing = sorted(set(row["seeds"]) - set(row["seeds_at_step"]))
        seeds = ", ".join(map(str, row["seeds_at_step"])) + (
            f" (not run: {', '.join(map(str, missing))})" if missing else ""
        )
        verdict = "yes" if row["raises_for_every_seed"] else "no"
        lines.append(f"| {row['setting']} | {row['step']} | {seeds} | {row['cells']} | {row['mean']:+.1f} | "
                     f"{row['worst']:+.1f} | {verdict} |")  # fmt: skip
    winners = [r for r in rows if r["raises_for_every_seed"]]
    lines.append("")
    if winners:
        best = min(winners, key=lambda r: (-r["mean"], r["step"]))
        lines.append(
            f"- Chosen (rule 19): {best['setting']}, {best['step']} steps: every CCL seed ({', '.join(map(str, best['seeds']))}) "
            f"raises dev NMI for every model on both splits; pooled mean change {best['mean']:+.1f} over {best['cells']} cells."
        )
    else:
        lines.append(
            "- Chosen (rule 19): none. No (setting, steps) pair raises dev NMI for every model on both splits with "
            "every CCL seed: the recipe keeps its CCL options."
        )
    return "\n".join(lines)


def render(runs: list[dict]) -> str:
    """Markdown table: rows = setting x step, columns = each (model, split) change, mean, worst, verdict."""
    rows = summary(runs)
    models = sorted({model_of(r) for r in runs})
    splits = sorted({r["data"] for r in runs})
    columns = [(m, s) for s in splits for m in models]
    head = ["setting", "steps"] + [f"{s.removesuffix('-dev')} {short_model(m)}" for m, s in columns]
    head += ["mean", "worst", "raises every one"]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|" + "---:|" * (len(columns) + 2) + ":---:|"]
    for row in rows:
        cells = [row["cells"].get(f"{m} {s}") for m, s in columns]
        shown = ["–" if v is None else f"{v:+.1f}" for v in cells]
        verdict = "yes" if row["improves_everywhere"] else ("no" if row["complete"] else "(incomplete)")
        tail = f" | {row['mean']:+.1f} | {row['worst']:+.1f} | {verdict} |"
        lines.append(f"| {row['setting']} | {row['step']} | " + " | ".join(shown) + tail)
    starts = {(model_of(r), r["data"]): 100 * dict((c["step"], c["gold_nmi"]) for c in r["checks"])[0] for r in runs}
    start_text = ", ".join(f"{m} {s} {v:.1f}" for (m, s), v in sorted(starts.items()))
    lines += [
        "",
        "- Change of dev NMI x 100 after that many CCL steps, against the same model before CCL (step 0: "
        f"{start_text}). Columns: the seed models (`outputs/uctopic-mini*`) on each benchmark's dev split; "
        "'–': not run. 'raises every one': above zero for every model on every split. Rows marked 'gold labels' "
        "replace the pseudo labels by the gold types of the same instances: a diagnosis, never a choice.",
    ]
    return "\n".join(lines)


def plot(runs: list[dict], path: str) -> None:
    """One panel per dev split: dev NMI change against CCL steps, one line per (setting, model)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = sorted({r["data"] for r in runs})
    settings = sorted({setting_of(r) for r in runs})
    colors = {s: f"C{i}" for i, s in enumerate(settings)}
    styles = {m: style for m, style in zip(sorted({model_of(r) for r in runs}), ["-", "--", ":", "-."] * 4)}
    figure, axes = plt.subplots(
        1, len(splits), figsize=(6 * len(splits), 4.2 + 0.16 * (len(settings) + 4)), squeeze=False
    )
    for axis, split in zip(axes[0], splits):
        for run in (r for r in runs if r["data"] == split):
            checks = [(c["step"], c["gold_nmi"]) for c in run["checks"]]
            start = dict(checks)[0]
            axis.plot(
                [s for s, _ in checks],
                [100 * (v - start) for _, v in checks],
                styles[model_of(run)],
                color=colors[setting_of(run)],
                marker="o",
                markersize=3,
            )
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set_title(f"{split}: dev NMI change during CCL")
        axis.set_xlabel("CCL steps")
        axis.set_ylabel("NMI change (points)")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=color, marker="o", markersize=3, label=name) for name, color in colors.items()]
    handles += [Line2D([], [], color="gray", linestyle=style, label=model) for model, style in styles.items()]
    figure.legend(handles=handles, loc="lower center", ncol=2, fontsize=7, frameon=False)
    figure.tight_layout(rect=(0, 0.06 * (1 + len(handles) // 2) / 2, 1, 1))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", help="JSONL files of experiments/uctopic/ccl_study.py --trace")
    parser.add_argument("--plot", help="write the traces as a PNG here")
    parser.add_argument("--summary", help="write the per-(setting, step) rows as JSON here")
    parser.add_argument("--readme", help="README whose block --block gets the table")
    parser.add_argument(
        "--choose", action="store_true", help="add rule 16's choice (best mean among settings that raise every run)"
    )
    parser.add_argument(
        "--choose-across-seeds",
        action="store_true",
        help="add rule 19's table and choice: a (setting, steps) pair must raise every run for every CCL seed",
    )
    parser.add_argument("--block", default="uctopic-ccl-dev-seeds", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    runs = [json.loads(line) for path in args.runs for line in Path(path).read_text().splitlines() if line.strip()]
    missing = [r.get("name") for r in runs if not r.get("checks") or "gold_nmi" not in r["checks"][0]]
    if missing:
        parser.error(f"runs without a gold-NMI trace (rerun them with --trace): {missing}")
    table = render(runs)
    if args.choose:
        table += "\n" + render_choice(runs)
    if args.choose_across_seeds:
        table += "\n\n" + render_seed_robust(runs)
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary(runs), indent=1) + "\n")
    if args.plot:
        plot(runs, args.plot)
    if args.readme:
        write_readme_table(args.readme, table, args.block)
    else:
        print(table)


if __name__ == "__main__":
    main()
