"""Here, after the lease: the run's returned files back into a checkpoint of ``outputs/<name>/``, then what a CPU run
does next: export, dev selection, and, only where the recipe's ``eval.beat_on_dev`` rule holds (its dev score above
the CPU recipe's), evaluation, the card and the results (the main job, without its training). A checkpoint that does
not beat it is kept aside (``outputs/<name>.rejected/``) and never replaces a released one; a failed unpack puts
everything back as it was. The card says where the model was trained.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import torch

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import load_recipe, recipe_from_dict
from phrasezoo.evaluation import read_results, write_results
from phrasezoo.evaluation.dev import comparison as comparison_on_dev
from phrasezoo.evaluation.dev.suite import evaluate_dev
from phrasezoo.gpu_job.on_device import LOSS_LOG, ROWS_KEY, RUN_FORMAT, RUN_MANIFEST
from phrasezoo.gpu_job.travel import sha256_file
from phrasezoo.gpu_job.weights import read_shards, untouched_row_factor
from phrasezoo.hub.export import export_model, refresh_card
from phrasezoo.pipeline import run_pipeline
from phrasezoo.training.checkpoint import SOUP_KEY, STATE_FILE, blend_with_initial, save_state_dict
from phrasezoo.training.finalize import finalize_model
from phrasezoo.training.loop import seed_everything
from phrasezoo.training.recipe_guard import changed_keys, check_and_record_recipe, training_recipe
from phrasezoo.training.selection import select_from_recipe
from phrasezoo.zoo.registry import create_model

REJECTED_SUFFIX = ".rejected"
PREVIOUS_SUFFIX = ".previous"


def read_run(folder: Path) -> tuple[dict, dict, list[dict]]:
    """``(run manifest, trained state, loss rows)`` of a returned folder, every file checked against the manifest."""
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
    """``phrasezoo device unpack``: reassemble a run's shards here, select on dev, compare with the CPU recipe on
    dev and, where the candidate beats it (or without ``beat_on_dev``), evaluate it and write its card and results;
    3 when it does not beat it (kept aside in ``outputs/<name>.rejected/``)."""
    folder = Path(args.source)
    record, trained, losses = read_run(folder)
    cfg, overrides = _unpack_recipe(record, args)
    if args.no_eval and cfg.eval.get("beat_on_dev"):
        raise ValueError(
            f"{cfg.name} is published only if it beats {cfg.eval['beat_on_dev'].get('recipe')} on dev: --no-eval "
            "would skip that comparison. Unpack it without --no-eval."
        )
    rule = (
        None if args.no_eval else comparison_on_dev.rule_scores(cfg, progress=not args.no_progress)
    )  # fails fast when missing
    model, initial = _local_model(cfg, record)
    merged = merge_trained(initial, trained, record, cfg.training)
    facts = device_facts(record)
    print(f">> {cfg.name}: {facts['trained on']}", flush=True)
    backup = _move_aside(cfg)
    try:
        selection = _export_and_select(cfg, model, merged, initial, record, losses, facts, args)
        comparison = (
            None
            if args.no_eval
            else comparison_on_dev.compare_on_dev(cfg, selection, record, not args.no_progress, rule)
        )
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
        refresh_card(cfg.output_dir, cfg)
        print(f">> unpacked to {cfg.output_dir}/ (no evaluation: --no-eval)")
        return 0
    source = record["pack"].get("recipe_source") or cfg.name
    run_pipeline(source, benchmarks_dir=args.benchmarks_dir, overrides=overrides + chosen, train=False,
                 reuse_baselines=args.reuse_baselines)  # fmt: skip
    _stamp_results(cfg, facts)
    return 0


def _unpack_recipe(record: dict, args: argparse.Namespace):
    """The recipe to unpack under: the packed one, which must still match the recipe file it came from."""
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
    seed = record["seeds"][0]
    seeded = dataclasses.replace(cfg, training=dataclasses.replace(cfg.training, seed=seed))
    seed_everything(seed)
    model = create_model(seeded)
    return model, {k: v.detach().clone() for k, v in model.state_dict().items()}


def _export_and_select(cfg, model, merged, initial, record, losses, facts, args) -> dict | None:
    """Write the checkpoint, run the recipe's dev selection on the reassembled model (as a CPU run does, final
    weight averaging included) and export the folder once, at the chosen values; returns the selection (None
    without one)."""
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
    if cfg.results_path.exists():
        doc = read_results(cfg.results_path)
        doc["trained_on"] = facts["trained on"]
        write_results(doc, cfg.results_path)
