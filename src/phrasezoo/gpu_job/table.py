"""The docs' table of packs and, per recipe, its prepared sequence (pack and check here, the CPU recipe's dev
scores, one ``run`` call on the lease, unpack, the table), from the packs record and the recipes:
``phrasezoo device table --readme docs/gpu-job.md`` writes its block."""

from __future__ import annotations

import argparse
import json

from phrasezoo.core.files import REPO_ROOT, write_readme_table
from phrasezoo.core.recipes import load_recipe, results_path
from phrasezoo.evaluation.dev.suite import resolve_dev_tasks
from phrasezoo.gpu_job.unpack import REJECTED_SUFFIX


def render_packs(records: dict) -> str:
    """The docs' table of packs and, per recipe, its prepared sequence (pack and check here, the CPU recipe's dev
    scores, one ``run`` call on the lease, unpack, the table), from the packs record and the recipes (the order to
    fire them in is the lease plan's, in docs/gpu-job.md)."""
    names = sorted(records)
    lines = [
        "| recipe | runs x steps | training examples | pack (MiB) | with the repository (MiB) | weights back (MiB) "
        "| self-test | packed at |",
        "|---|:---:|:---:|:---:|:---:|:---:|:---:|---|",
    ]
    for name in names:
        r = records[name]
        test = f"passed ({r['selftest']['steps per seed']} steps)" if r["selftest"] else "skipped"
        lines.append(
            f"| {name} | {len(r['seeds'])} x {r['steps_per_seed']:,} | {r['training_examples']:,} | {r['pack_mib']:.1f} "
            f"| {r['pack_mib'] + r['repository_mib']:.1f} | {r['returned_weights_mib']:.1f} | {test} "
            f"| {r['commit'][:10] if r['commit'] else '?'}{' (dirty)' if r.get('dirty') else ''} |"
        )
    lines.append("")
    for name in names:
        lines += _sequence(name, records[name])
    lines.append(
        "Generated from `results/gpu-job/device-packs.json` (written by `phrasezoo device pack ... --record`) and the recipes "
        "with `phrasezoo device table --readme docs/gpu-job.md`."
    )
    return "\n".join(lines)


def _sequence(name: str, record: dict) -> list[str]:
    """One recipe's prepared commands, in order, as markdown (code blocks unindented: the call is copied exactly)."""
    call = record["call"]
    pack = call["carry"][0]
    sets = "".join(f" --set {o}" for o in record.get("overrides") or [])
    rule = load_recipe(name, record.get("overrides") or []).eval.get("beat_on_dev")
    lines = [f"### {name}", ""]
    if record["row_cut"]:
        lines += [f"The pack: {record['row_cut']}.", ""]
    for note in record.get("teacher_rows") or []:
        lines += [f"The pack: {note}.", ""]
    lines += [
        "**1. Here, before the lease.** Build the pack (git-ignored: a fresh clone, or a change to `src/` or the "
        "recipe since the commit above, needs it rebuilt; the data caches are needed, not a GPU), then check it "
        "(files, sizes, the recipe, one CPU step from the pack):",
        "",
        "```bash",
        f"OMP_NUM_THREADS=1 .venv/bin/phrasezoo device pack {name}{sets}",
        f"OMP_NUM_THREADS=1 .venv/bin/phrasezoo device call {pack}",
        "```",
        "",
    ]
    step = 2
    if rule:
        cpu, tasks = rule["recipe"], ",".join(resolve_dev_tasks(rule.get("tasks")))
        lines += [
            f"**{step}. Here: {cpu}'s dev scores**, which unpack compares with (not needed when "
            f"`{results_path(cpu).with_name(cpu + '-dev-selection.json')}` or `{results_path(cpu).with_name('dev-' + cpu + '.json')}` already holds these tasks: unpack reads "
            "those first, and stops before any long work when it finds none):",
            "",
            "```bash",
            f".venv/bin/phrasezoo dev-eval --model outputs/{cpu} --tasks {tasks} --output {results_path(cpu).with_name('dev-' + cpu + '.json')}",
            "```",
            "",
        ]
        step += 1
    publish = (
        f"it compares with {rule['recipe']} on dev and only if it beats it evaluates it with its baselines and "
        f"writes the card (which says where it trained) and `{results_path(name)}`; a loser goes to "
        f"`outputs/{name}{REJECTED_SUFFIX}/`, with `{results_path(name).with_name(name + '-dev-comparison.json')}`:"
        if rule
        else f"it evaluates it with its baselines and writes the card and `{results_path(name)}`:"
    )
    lines += [
        f"**{step}. On the lease: one `run` tool call**, exactly this (`timeout_s` {call['timeout_s']} leaves time "
        "to rerun it once), then `give_back` unless the lease plan fires the next recipe at once:",
        "",
        "```json",
        json.dumps(call, indent=1),
        "```",
        "",
        f"**{step + 1}. Here: unpack** the folder the reply names (`files_at`). It reassembles the shards into "
        f"`outputs/{name}/checkpoints/`, exports and runs the recipe's dev selection; {publish}",
        "",
        "```bash",
        f".venv/bin/phrasezoo device unpack <files_at> --recipe {name} --benchmarks-dir ../shared/benchmarks",
        "```",
        "",
        f"**{step + 2}. Here: the table**, when it was published (its command is registered in `docs/blocks.yaml`), "
        "and the zoo table, then commit `results/` and `docs/`:",
        "",
        "```bash",
        f".venv/bin/python scripts/blocks.py --write {name}-results zoo",
        "```",
        "",
    ]
    return lines


def table_command(args: argparse.Namespace) -> int:
    """``phrasezoo device table``: print the docs' table of packs, or rewrite its block in ``--readme``."""
    path = REPO_ROOT / args.record
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: build the packs with `phrasezoo device pack <recipe>` first.")
    table = render_packs(json.loads(path.read_text()))
    if args.readme:
        write_readme_table(args.readme, table, block="gpu-job-packs")
    else:
        print(table)
    return 0
