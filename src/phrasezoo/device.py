"""The GPU job: ``phrasezoo device pack|table|call|run|unpack`` (also ``python -m phrasezoo.device ...``, which needs no
install: the GPU machine runs it from the source tree with ``PYTHONPATH=src``).

A GPU is lent to this project now and then, for minutes, with no network, no data caches and no data builders, and
at most 64 MiB may travel to it. So a recipe's run is split in three:

1. ``pack`` (here): the recipe's real initial weights (fp16), tokenizer and training task into ``.devicepack/<name>/``
   (:mod:`phrasezoo.training.device_job.pack`), checked against the size limits and, by default, trained for three
   steps on this CPU from the pack alone with the data libraries made unimportable (the self-test). It prints the
   one ``run`` tool call that trains it on the GPU.
2. ``run`` (there): the project's training loop on the pack, for the recipe's steps; fp16 weight shards, the loss
   log and a run manifest come back (:mod:`phrasezoo.training.device_job.run`).
3. ``unpack`` (here): the shards back into a checkpoint of ``outputs/<name>/``, then what a CPU run does next: export,
   dev selection, and, only where the recipe's ``eval.beat_on_dev`` rule holds (its dev score above the CPU recipe's),
   evaluation, the card and the results. A checkpoint that does not beat it is kept aside
   (``outputs/<name>.rejected/``) and never replaces a released one. The card says where the model was trained.

The whole procedure, the lease plan and the prepared calls: docs/gpu-job.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from phrasezoo.core.files import REPO_ROOT

PACK_ROOT = Path(".devicepack")
PACKS_RECORD = Path("results") / "gpu-job" / "device-packs.json"
DEFAULT_TIMEOUT_S = 540
DEFAULT_DEVICE_MINUTES = 6.5
REJECTED_SUFFIX = ".rejected"
PREVIOUS_SUFFIX = ".previous"

EPILOG = """examples:
  phrasezoo device pack codebook-phrase-gpu              pack into .devicepack/codebook-phrase-gpu/, self-test, print the call
  phrasezoo device call .devicepack/codebook-phrase-gpu  print the run tool call of an existing pack again
  PYTHONPATH=src python3 -m phrasezoo.device run .devicepack/codebook-phrase-gpu --out $OUT   (on the GPU machine)
  phrasezoo device unpack <files_at> --recipe codebook-phrase-gpu   reassemble, select, compare on dev, evaluate, card
"""


# ------------------------------------------------------------------------------------------------- the call
def run_call(pack_dir: str | Path, timeout_s: int = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """The ``run`` tool call that trains ``pack_dir`` (a path relative to the repository root) on the GPU."""
    pack_dir = Path(pack_dir).as_posix()
    command = (
        "set -o pipefail; nvidia-smi -L; PYTHONPATH=src PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false python3 -m "
        f"phrasezoo.device run {pack_dir} --out $OUT --device cuda --forbid-imports 2>&1 | tee $OUT/run.log"
    )
    return {"command": command, "carry": [pack_dir], "timeout_s": timeout_s}


# ------------------------------------------------------------------------------------------------------ pack
def pack_command(args: argparse.Namespace) -> int:
    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.training.device_job.pack import PackTooLarge, build_pack

    cfg = load_recipe(args.config, args.overrides)
    out = Path(args.to) if args.to else REPO_ROOT / PACK_ROOT / cfg.name
    repo = REPO_ROOT
    extra = {"recipe_source": args.config, "device_minutes": args.device_minutes}
    try:
        manifest = build_pack(cfg, args.overrides, out, row_cut=args.row_cut, max_mib=args.max_mib, repo=repo,
                              progress=not args.no_progress, extra=extra)  # fmt: skip
    except PackTooLarge as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f">> packed {cfg.name}: {manifest['pack_mib']} MiB ({manifest['training_examples']} training examples, "
        f"{len(manifest['seeds'])} run(s) x {manifest['steps_per_seed']} steps; weights back: "
        f"{manifest['returned_weights_mib']} MiB){'; ' + manifest['row_cut']['note'] if manifest['row_cut'] else ''}",
        flush=True,
    )
    test = None if args.no_selftest else selftest(out)
    _print_call(out, args.timeout_s)
    if args.record:
        record_pack(Path(args.record), out, manifest, test, args.timeout_s)
    return 0


def selftest(pack: Path, steps: int = 3) -> dict[str, Any]:
    """Train ``pack`` for ``steps`` steps per seed on this CPU, from the pack alone, in a fresh process where the
    data libraries cannot be imported and the data cache is empty: what the GPU run does, shortened. Raises when it fails; returns the seconds
    per step after the first (one thread)."""
    source = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
    env["OMP_NUM_THREADS"] = "1"
    env["HF_HUB_OFFLINE"] = "1"  # no network on the machine
    with tempfile.TemporaryDirectory(prefix="phrasezoo-selftest-") as out, tempfile.TemporaryDirectory() as cache:
        env["PHRASEZOO_CACHE"] = cache  # no data caches there either: an empty one here
        command = [sys.executable, "-m", "phrasezoo.device", "run", str(pack), "--out", out, "--device", "cpu",
                   "--max-steps", str(steps), "--forbid-imports", "--budget-minutes", "0"]  # fmt: skip
        print(f">> self-test: {steps} steps per seed on this CPU from the pack alone (datasets, spaCy, faiss blocked; "
              "an empty data cache)")  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the pack's self-test failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        record = json.loads((Path(out) / "run_manifest.json").read_text())
    per_step = record["runs"][0]["seconds_per_step_median"] or record["runs"][0]["seconds_per_step"]
    print(f">> self-test passed: {steps} steps per seed in {record['seconds']:.0f} s ({per_step:.2f} s/step here)")
    return {"steps per seed": steps, "cpu seconds per step": round(per_step, 3), "cpu": record["device_name"],
            "torch threads": record["runs"][0]["facts"].get("torch threads")}  # fmt: skip


def record_pack(path: Path, pack: Path, manifest: dict, test: dict | None, timeout_s: int) -> None:
    """Add this pack's facts and run call to the packs record (``results/gpu-job/device-packs.json``): the docs' table."""
    from phrasezoo.core.files import atomic_write_text
    from phrasezoo.training.device_job.pack import MiB, travel_size

    try:
        relative = pack.resolve().relative_to(REPO_ROOT.resolve())
    except ValueError:
        print(f">> not recorded in {path}: {pack} is outside the repository")
        return
    path = REPO_ROOT / path
    records = json.loads(path.read_text()) if path.exists() else {}
    records[manifest["recipe_name"]] = {
        "created": manifest["created"],
        "overrides": manifest["overrides"],
        "commit": manifest["commit"],
        "dirty": manifest["dirty"],
        "data_fingerprint": manifest["data_fingerprint"],
        "training_examples": manifest["training_examples"],
        "seeds": manifest["seeds"],
        "steps_per_seed": manifest["steps_per_seed"],
        "pack_mib": manifest["pack_mib"],
        "repository_mib": round(travel_size(REPO_ROOT) / MiB, 2),
        "returned_weights_mib": manifest["returned_weights_mib"],
        "row_cut": manifest["row_cut"]["note"] if manifest["row_cut"] else None,
        **({"teacher_rows": [t["note"] for t in manifest["teacher_rows"]]} if manifest.get("teacher_rows") else {}),
        "selftest": test,
        "call": run_call(relative, timeout_s),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(dict(sorted(records.items())), indent=1) + "\n")


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
    from phrasezoo.core.recipes import load_recipe, results_path
    from phrasezoo.evaluation.dev.suite import resolve_dev_tasks

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
    from phrasezoo.core.files import write_readme_table

    path = REPO_ROOT / args.record
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: build the packs with `phrasezoo device pack <recipe>` first.")
    table = render_packs(json.loads(path.read_text()))
    if args.readme:
        write_readme_table(args.readme, table, block="gpu-job-packs")
    else:
        print(table)
    return 0


def _print_call(pack: Path, timeout_s: int) -> None:
    try:
        relative = pack.resolve().relative_to(REPO_ROOT.resolve())
    except ValueError:
        print(f">> {pack} is outside the repository {REPO_ROOT}: the run tool carries only paths inside it.")
        return
    print(">> the run tool call for a GPU lease (then give_back):")
    print(json.dumps(run_call(relative, timeout_s), indent=1))


def call_command(args: argparse.Namespace) -> int:
    from phrasezoo.training.device_job.pack import check_fits, read_manifest, verify_files

    pack = Path(args.pack)
    manifest = read_manifest(pack)
    verify_files(pack, manifest)
    size, tree = check_fits(pack, args.max_mib, REPO_ROOT)
    print(f">> {manifest['recipe_name']}: pack {size:.1f} MiB + repository {tree or 0:.1f} MiB travel")
    rebuild = f"rebuild it with `phrasezoo device pack {manifest['recipe_name']}`"
    changed = _recipe_changes(manifest)
    if changed:
        print(f"error: the recipe changed since it was packed ({', '.join(changed[:5])}): {rebuild}.", file=sys.stderr)
        return 2
    if (
        manifest.get("commit")
        and subprocess.run(
            ["git", "diff", "--quiet", manifest["commit"], "--", "src/"], cwd=REPO_ROOT, capture_output=True
        ).returncode
    ):
        print(f">> note: src/ changed since the pack was built at {manifest['commit'][:10]}; if the change touches "
              f"training or the recipe's data, {rebuild}.")  # fmt: skip
    if not args.no_selftest:
        selftest(pack, steps=1)  # this tree trains this pack: what the lease will run
    _print_call(pack, args.timeout_s)
    return 0


def _recipe_changes(manifest: dict) -> list[str]:
    """Keys of the recipe that changed since the pack was built (what its weights would be trained under)."""
    from phrasezoo.core.recipes import load_recipe, recipe_from_dict
    from phrasezoo.training.recipe_guard import changed_keys, training_recipe

    current = load_recipe(manifest.get("recipe_source") or manifest["recipe_name"], manifest["overrides"])
    return changed_keys(training_recipe(recipe_from_dict(manifest["recipe"])), training_recipe(current))


# ------------------------------------------------------------------------------------------------------- run
def run_command(args: argparse.Namespace) -> int:
    from phrasezoo.training.device_job.run import run_pack

    run_pack(Path(args.pack), Path(args.out), device=args.device, max_steps=args.max_steps,
             budget_minutes=args.budget_minutes, progress=args.progress)  # fmt: skip
    return 0


# ---------------------------------------------------------------------------------------------------- unpack
def read_run(folder: Path) -> tuple[dict, dict, list[dict]]:
    """``(run manifest, trained state, loss rows)`` of a returned folder, every file checked against the manifest."""
    from phrasezoo.training.device_job.run import LOSS_LOG, RUN_FORMAT, RUN_MANIFEST
    from phrasezoo.training.device_job.weights import read_shards, sha256_file

    path = folder / RUN_MANIFEST
    if not path.exists():
        raise FileNotFoundError(
            f"{folder} holds no {RUN_MANIFEST}: give the folder the run's files came back to (files_at), and see "
            f"run.log there if the run failed."
        )
    record = json.loads(path.read_text())
    if record.get("format") != RUN_FORMAT:
        raise ValueError(f"{path} is a {record.get('format')!r} record, not {RUN_FORMAT!r}.")
    for name, info in record["files"].items():
        file = folder / name
        if not file.exists() or sha256_file(file) != info["sha256"]:
            raise ValueError(f"{file} is missing or differs from the run manifest: fetch the run's files again.")
    if record["problems"]:
        raise ValueError(f"the run reported problems, nothing unpacked: {record['problems']}")
    shards = sorted(folder / name for name in record["files"] if name.endswith(".safetensors"))
    return record, read_shards(shards), json.loads((folder / LOSS_LOG).read_text())


def merge_trained(initial: dict, trained: dict, record: dict, training) -> dict:
    """The full state dict: trained parameters from the run (cut rows put back in place, the others at their
    starting values times the decay they had), buffers and frozen tensors from the local ``initial``."""
    import torch

    from phrasezoo.training.device_job.run import ROWS_KEY
    from phrasezoo.training.device_job.weights import untouched_row_factor

    trained = dict(trained)
    rows = trained.pop(ROWS_KEY, None)
    cut = set(record["row_cut"]["tensors"]) if record["row_cut"] else set()
    expected = set(record["trainable_tensors"])
    if set(trained) != expected:
        raise ValueError(
            f"the run returned other tensors than the recipe trains: {sorted(set(trained) ^ expected)[:5]}"
        )
    steps, total = record["runs"][0]["steps"], record["steps_per_seed"]
    merged = {}
    for name, start in initial.items():
        if name not in trained:
            merged[name] = start
        elif name in cut:
            full = start.float() * untouched_row_factor(training, name, steps, total)
            full[rows] = trained[name].float()
            merged[name] = full.to(start.dtype)
        else:
            merged[name] = trained[name].to(start.dtype)
    if not all(torch.isfinite(v).all() for v in merged.values() if v.is_floating_point()):
        raise ValueError("the reassembled weights hold non-finite values: not unpacked.")
    return merged


def device_facts(record: dict) -> dict[str, Any]:
    """What the card says about where and how the model was trained (with the run's own training facts)."""
    runs = record["runs"]
    facts = dict(runs[0]["facts"])
    facts.update(record["soup"])
    if len(runs) > 1:
        facts["seed"] = [r["seed"] for r in runs]
    minutes = round(record["training_seconds"] / 60, 1)
    facts["training date"] = facts.pop("trained on", None)
    facts.update(
        {
            "trained on": f"{record['device_name']} ({record['device']}, {record['host']['cpu_cores']} CPU cores), "
            f"by the GPU job (phrasezoo device run): {minutes} min of training, "
            f"{' + '.join(str(r['steps']) for r in runs)} steps",
            "training time (min)": minutes,
            "training machine versions": record["versions"],
            "GPU job pack": f"commit {record['pack']['commit']}{' (dirty)' if record['pack']['dirty'] else ''}, "
            f"data fingerprint {record['pack']['data_fingerprint'][:16]}",
            "weights returned from the GPU": "fp16 (trained with fp32 master weights"
            + (", bf16 autocast)" if facts.get("precision") == "bf16" else ")"),
        }
    )
    if record["row_cut"]:
        facts["vocabulary rows trained on the GPU"] = record["row_cut"]["note"]
    if not record["recipe_run"]:
        facts["NOT the recipe's run"] = (
            "fewer steps than planned or no soup (a shortened check, or the safety time budget fired)"
        )
    return facts


def write_checkpoint(cfg, merged: dict, initial: dict, record: dict, losses: list[dict]) -> Path:
    """``outputs/<name>/checkpoints/``: ``initial.safetensors`` and ``step-N/`` as a CPU run leaves them (without
    optimizer state: the run is finished), plus the loss log; the recipe is recorded for the resume guard."""
    from phrasezoo.core.files import atomic_write_text
    from phrasezoo.training.checkpoint import STATE_FILE, save_state_dict
    from phrasezoo.training.recipe_guard import check_and_record_recipe
    from phrasezoo.training.soup import SOUP_KEY

    output = cfg.output_dir
    ckpt_dir = output / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    check_and_record_recipe(cfg, output, resume=False)
    prefixes = tuple(record["averaged_prefixes"])
    save_state_dict({k: v for k, v in initial.items() if prefixes and k.startswith(prefixes)},
                    ckpt_dir / "initial.safetensors")  # fmt: skip
    step = record["runs"][0]["steps"]
    target = ckpt_dir / f"step-{step:06d}"
    target.mkdir(parents=True, exist_ok=True)
    save_state_dict(merged, target / "model.safetensors")
    state = {"step": step, "device_run": {k: record[k] for k in ("device_name", "seeds", "training_seconds")}}
    if len(record["runs"]) > 1:
        state[SOUP_KEY] = [f"{record['device_name']} seed {r['seed']}" for r in record["runs"]]
    atomic_write_text(target / STATE_FILE, json.dumps(state, indent=1) + "\n")
    atomic_write_text(ckpt_dir / "latest", target.name)
    atomic_write_text(output / "device_loss_log.json", json.dumps(losses) + "\n")
    return target


def _move_aside(cfg) -> Path | None:
    """Move an existing ``outputs/<name>/`` (and the name's results files) to ``outputs/<name>.previous/``."""
    output = cfg.output_dir
    if not output.exists():
        return None
    backup = output.with_name(output.name + PREVIOUS_SUFFIX)
    if backup.exists():
        raise FileExistsError(f"{backup} exists from an earlier unpack: move it away first.")
    shutil.move(str(output), str(backup))
    for path in _results_files(cfg):
        if path.exists():
            (backup / "results").mkdir(exist_ok=True)
            shutil.move(str(path), str(backup / "results" / path.name))
    return backup


def _results_files(cfg) -> list[Path]:
    return [cfg.results_path, cfg.results_path.with_name(f"{cfg.name}-dev-selection.json")]


def _restore(cfg, backup: Path | None, keep_as: Path | None = None) -> None:
    """Take the candidate (``outputs/<name>/`` and the name's results files) out of the way, into ``keep_as`` or
    deleted, and put what :func:`_move_aside` kept back in place."""
    output = cfg.output_dir
    if keep_as is not None:
        if keep_as.exists():
            shutil.rmtree(keep_as)
        if output.exists():
            shutil.move(str(output), str(keep_as))
    elif output.exists():
        shutil.rmtree(output)
    for path in _results_files(cfg):
        if path.exists():
            if keep_as is not None and keep_as.exists():
                shutil.move(str(path), str(keep_as / path.name))
            else:
                path.unlink()
    if backup is not None:
        kept = backup / "results"
        for path in kept.glob("*") if kept.exists() else []:
            shutil.move(str(path), str(cfg.results_path.parent / path.name))
        shutil.rmtree(kept, ignore_errors=True)
        shutil.move(str(backup), str(output))


def unpack_command(args: argparse.Namespace) -> int:
    from phrasezoo.evaluation.dev.comparison import compare_on_dev, rule_scores

    folder = Path(args.source)
    record, trained, losses = read_run(folder)
    cfg, overrides = _unpack_recipe(record, args)
    if args.no_eval and cfg.eval.get("beat_on_dev"):
        raise ValueError(
            f"{cfg.name} is published only if it beats {cfg.eval['beat_on_dev'].get('recipe')} on dev: --no-eval "
            "would skip that comparison. Unpack it without --no-eval."
        )
    rule = None if args.no_eval else rule_scores(cfg, progress=not args.no_progress)  # fails fast when missing
    model, initial = _local_model(cfg, record)
    merged = merge_trained(initial, trained, record, cfg.training)
    facts = device_facts(record)
    print(f">> {cfg.name}: {facts['trained on']}", flush=True)
    backup = _move_aside(cfg)
    try:
        selection = _export_and_select(cfg, model, merged, initial, record, losses, facts, args)
        comparison = None if args.no_eval else compare_on_dev(cfg, selection, record, not args.no_progress, rule)
    except BaseException:
        _restore(cfg, backup)  # a failed unpack leaves things as they were; run it again once fixed
        raise
    if comparison is not None and not comparison["beats"]:
        rejected = cfg.output_dir.with_name(cfg.output_dir.name + REJECTED_SUFFIX)
        _restore(cfg, backup, keep_as=rejected)
        print(f">> NOT published: {comparison['verdict']}; the candidate is in {rejected}/", flush=True)
        return 3
    if backup is not None:
        shutil.rmtree(backup)
    chosen = _chosen_overrides(selection)
    if args.no_eval:
        from phrasezoo.hub.export import refresh_card

        refresh_card(cfg.output_dir, cfg)
        print(f">> unpacked to {cfg.output_dir}/ (no evaluation: --no-eval)")
        return 0
    from phrasezoo.pipeline import run_pipeline

    source = record["pack"].get("recipe_source") or cfg.name
    run_pipeline(source, benchmarks_dir=args.benchmarks_dir, overrides=overrides + chosen, train=False,
                 reuse_baselines=args.reuse_baselines)  # fmt: skip
    _stamp_results(cfg, facts)
    return 0


def _unpack_recipe(record: dict, args: argparse.Namespace):
    """The recipe to unpack under: the packed one, which must still match the recipe file it came from."""
    from phrasezoo.core.recipes import load_recipe, recipe_from_dict
    from phrasezoo.training.recipe_guard import changed_keys, training_recipe

    packed = recipe_from_dict(record["recipe"])
    overrides = list(record["pack"]["overrides"])
    source = record["pack"].get("recipe_source") or args.recipe or packed.name
    current = load_recipe(source, overrides)
    changed = changed_keys(training_recipe(packed), training_recipe(current))
    if changed and not args.as_packed:
        raise ValueError(
            f"{source} changed since it was packed ({', '.join(changed[:6])}): the weights were trained under the "
            "packed recipe. Restore it, or pass --as-packed to unpack under the packed recipe anyway."
        )
    cfg = packed if changed else current
    if args.recipe and args.recipe not in (cfg.name, source):
        raise ValueError(f"the run trained {cfg.name}, not {args.recipe}.")
    return cfg, overrides


def _local_model(cfg, record: dict):
    """The recipe's model built here as the first run was built there, and its initial state (exact, float32)."""
    from phrasezoo.training.trainer import seed_everything
    from phrasezoo.zoo.registry import create_model

    seed = record["seeds"][0]
    seeded = dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, seed=seed))
    seed_everything(seed)
    model = create_model(seeded)
    return model, {k: v.detach().clone() for k, v in model.state_dict().items()}


def _export_and_select(cfg, model, merged, initial, record, losses, facts, args) -> dict | None:
    """Write the checkpoint, run the recipe's dev selection on the reassembled model (as a CPU run does, final
    weight averaging included) and export the folder once, at the chosen values; returns the selection (None
    without one)."""
    from phrasezoo.evaluation.dev.suite import evaluate_dev
    from phrasezoo.hub.export import export_model
    from phrasezoo.training.checkpoint import blend_with_initial
    from phrasezoo.training.finalize import finalize_model
    from phrasezoo.training.selection import select_from_recipe

    target = write_checkpoint(cfg, merged, initial, record, losses)
    prefixes = tuple(record["averaged_prefixes"])
    state = merged
    if cfg.training.weight_average and prefixes:
        start = {k: v for k, v in initial.items() if k.startswith(prefixes)}
        state = blend_with_initial(merged, start, cfg.training.weight_average)
    model.load_state_dict(state)
    selection = None
    if cfg.eval.get("select_on_dev") and not args.no_eval:
        baselines = cfg.eval.get("baselines", [])
        model, selection, chosen_facts = select_from_recipe(
            cfg, evaluate_dev, model, baselines, progress=not args.no_progress
        )
        facts = {**facts, **chosen_facts}
    facts = {**facts, **finalize_model(cfg, model)}
    export_model(model, cfg.output_dir, cfg, facts=facts, card=False)
    print(f">> reassembled {target} and exported {cfg.output_dir}/", flush=True)
    return selection


def _chosen_overrides(selection: dict | None) -> list[str]:
    """Overrides that give the evaluation the dev-chosen values (and skip choosing them again)."""
    if not selection:
        return []
    out = ["eval.select_on_dev=null"]
    for key, value in selection["chosen"].items():
        section = "training" if key == "weight_average" else "model"
        out.append(f"{section}.{key}={json.dumps(value)}")
    return out


def _stamp_results(cfg, facts: dict) -> None:
    """Say in the results file where the model was trained."""
    from phrasezoo.evaluation import read_results, write_results

    if cfg.results_path.exists():
        doc = read_results(cfg.results_path)
        doc["trained_on"] = facts["trained on"]
        write_results(doc, cfg.results_path)


# ------------------------------------------------------------------------------------------------------- CLI
def register(subparsers) -> None:
    """Add ``device`` with its ``pack``, ``call``, ``run`` and ``unpack`` subcommands to the ``phrasezoo`` CLI."""
    device = subparsers.add_parser(
        "device",
        help="the GPU job: pack a recipe here, run it on a lent GPU, unpack the weights here",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(device)
    device.set_defaults(func=dispatch)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="device_command", required=True, metavar="STEP")
    pack = sub.add_parser("pack", help="pack a recipe into .devicepack/<name>/, self-test it, print the run call")
    pack.add_argument("config", help="recipe name or path, e.g. codebook-phrase-gpu")
    pack.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                      help="override a recipe value (recorded in the pack and reapplied by unpack)")  # fmt: skip
    pack.add_argument("--to", help="pack folder (default .devicepack/<name>; .devicepack/ is git-ignored)")
    pack.add_argument("--row-cut", choices=["auto", "on", "off"], default="auto",
                      help="ship only the vocabulary rows the run reads: auto = only when needed to fit")  # fmt: skip
    pack.add_argument("--max-mib", type=float, default=55.0, help="size limit of the pack (default 55 MiB)")
    pack.add_argument("--device-minutes", type=float, default=DEFAULT_DEVICE_MINUTES,
                      help="safety budget of the GPU run's training, all seeds together (default 6.5 min)")  # fmt: skip
    pack.add_argument("--timeout-s", type=int, default=DEFAULT_TIMEOUT_S, help="timeout_s of the printed call")
    pack.add_argument("--no-selftest", action="store_true", help="skip the two-step CPU run from the pack alone")
    pack.add_argument("--no-progress", action="store_true", help="no progress bars")
    pack.add_argument("--record", default=str(PACKS_RECORD),
                      help="add the pack's facts and call to this record (default results/gpu-job/device-packs.json; '' for none)")  # fmt: skip
    table = sub.add_parser("table", help="the docs' table of packs and their run calls, from the packs record")
    table.add_argument("--record", default=str(PACKS_RECORD))
    table.add_argument(
        "--readme", help="rewrite the <!-- gpu-job-packs:start --> block of this file instead of printing"
    )
    call = sub.add_parser("call", help="check an existing pack (files, size, recipe, one CPU step), print its call")
    call.add_argument("pack", help="pack folder, e.g. .devicepack/codebook-phrase-gpu")
    call.add_argument("--max-mib", type=float, default=55.0)
    call.add_argument("--timeout-s", type=int, default=DEFAULT_TIMEOUT_S)
    call.add_argument("--no-selftest", action="store_true", help="skip the one-step CPU run from the pack alone")
    run = sub.add_parser("run", help="train a pack (on the GPU machine) and write what comes back to --out")
    run.add_argument("pack", help="pack folder")
    run.add_argument("--out", required=True, help="folder for the shards, loss log and manifest ($OUT there)")
    run.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    run.add_argument("--max-steps", type=int, help="fewer steps per seed than planned (a check, not the recipe)")
    run.add_argument("--budget-minutes", type=float,
                     help="safety stop for all seeds' training (default: the pack's; 0: none)")  # fmt: skip
    run.add_argument("--forbid-imports", action="store_true",
                     help="make datasets, spaCy and faiss unimportable first, as on the GPU machine")  # fmt: skip
    run.add_argument("--progress", action="store_true", help="the loop's progress bar (else a line every 10%%)")
    unpack = sub.add_parser("unpack", help="reassemble a run's shards here; select, compare on dev, evaluate, card")
    unpack.add_argument("source", help="folder holding the run's returned files (the run tool's files_at)")
    unpack.add_argument("--recipe", help="the recipe you expect (checked against the run's)")
    unpack.add_argument(
        "--benchmarks-dir", help="benchmark data (default $PHRASEZOO_BENCHMARKS or ../shared/benchmarks)"
    )
    unpack.add_argument("--reuse-baselines", action="store_true", help="read baselines from results/ where present")
    unpack.add_argument("--no-eval", action="store_true", help="export and card only: no dev selection or evaluation")
    unpack.add_argument(
        "--as-packed", action="store_true", help="unpack under the packed recipe though the file changed"
    )
    unpack.add_argument("--no-progress", action="store_true")


COMMANDS = {
    "pack": pack_command,
    "table": table_command,
    "call": call_command,
    "run": run_command,
    "unpack": unpack_command,
}


def dispatch(args: argparse.Namespace) -> int:
    if getattr(args, "forbid_imports", False):
        from phrasezoo.training.device_job.run import forbid_imports

        forbid_imports()
    if getattr(args, "no_progress", False):
        os.environ["TQDM_DISABLE"] = "1"
    return COMMANDS[args.device_command](args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m phrasezoo.device", description=__doc__, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    add_arguments(parser)
    return dispatch(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
