"""The entry point that runs the workflows in order: train -> export (``train.py``, ``phrasezoo train``) and the
main job, train -> export -> evaluate model and baselines -> card with the results -> comparison table
(``phrasezoo pipeline``). The workflows themselves (training, hub, evaluation) never import each other.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from phrasezoo.files import write_readme_table
from phrasezoo.recipes import HubConfig, load_hub_config, results_path

README_START = "<!-- results:start -->"
README_END = "<!-- results:end -->"


def baseline_results_path(spec: str) -> Path:
    return results_path(spec)


# ----------------------------------------------------------------------------------------------- train + export
def train_and_export(
    cfg: HubConfig,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
    card: bool = True,
):
    """Train ``cfg`` (resuming from the last checkpoint) and export the model folder (the main process does)."""
    from phrasezoo.hub.export import export_model
    from phrasezoo.training.run import run_training

    run = run_training(cfg, output_dir, resume=resume, stop_after_steps=stop_after_steps, progress=progress)
    if run.is_main_process:
        export_model(run.result.model, run.output_dir, cfg, facts=run.facts, card=card)
        print(f">> exported {run.output_dir} ({run.result.steps} steps, {run.result.seconds / 60:.1f} min)", flush=True)
    return run


def train_from_args(args: argparse.Namespace):
    """``phrasezoo train`` / ``train.py``: the arguments of :func:`phrasezoo.training.run.add_train_arguments`."""
    if args.no_progress:
        os.environ["TQDM_DISABLE"] = "1"  # every tqdm bar, including those of datasets and stage helpers
    cfg = load_hub_config(args.config, args.overrides)
    return train_and_export(
        cfg,
        output_dir=args.output_dir,
        resume=not args.no_resume,
        stop_after_steps=args.stop_after_steps,
        progress=not args.no_progress,
    )


def train_main(argv: list[str] | None = None) -> None:
    """``train.py``: train a recipe and export it."""
    from phrasezoo.training.run import add_train_arguments

    parser = argparse.ArgumentParser(
        description="Train a phrasezoo model from its hub config, e.g. `accelerate launch train.py "
        "hub_configs/pearl-mini.yaml`. Resumes from the last checkpoint in outputs/<name>/checkpoints unless "
        "--no-resume; exports outputs/<name>/ as a Hub-ready folder at the end.",
    )
    add_train_arguments(parser)
    train_from_args(parser.parse_args(argv))


def card_results(cfg: HubConfig, doc: dict | None, baselines: list[dict] | None = None):
    """What a card shows of a results document: the comparison table (with baselines and the papers' rows) and
    the model-index entries."""
    from phrasezoo.evaluation import format_report, to_model_index
    from phrasezoo.hub.card import CardResults

    if doc is None:
        return None
    return CardResults(
        table=format_report([doc, *(baselines or [])], include_reference=True),
        model_index=to_model_index(doc, cfg.name) or None,
        model=doc.get("model"),
        created=doc.get("created"),
    )


# ------------------------------------------------------------------------------------------------- the main job


def run_pipeline(
    config: str,
    benchmarks_dir: str | None = None,
    overrides: list[str] | None = None,
    force_eval: bool = False,
    resume: bool = True,
    update_readme: str | None = None,
    train: bool = True,
) -> dict:
    """Train (resuming if possible) and export ``config``, evaluate it and its baselines, print the comparison.

    Baseline results are reused from ``results/`` when they cover the same tasks (``force_eval`` recomputes them).
    Returns the model's results document.
    """
    from phrasezoo.evaluation import evaluate, format_report, load_encoder
    from phrasezoo.hub.export import refresh_card

    started = time.monotonic()
    cfg = load_hub_config(config, overrides)
    tasks = cfg.eval.get("tasks", "all")
    baselines = cfg.eval.get("baselines", [])
    if train:
        print(f"== 1/3 train {cfg.name} ({cfg.method}, backbone {cfg.backbone or 'none'})", flush=True)
        train_and_export(cfg, resume=resume, card=False)  # the card is written once, with the results (3/3)
    elif not (cfg.output_dir / "config.json").exists():
        raise FileNotFoundError(
            f"--no-train needs an exported model in {cfg.output_dir}/; train it first (drop --no-train)."
        )
    else:
        print(f"== 1/3 training skipped: evaluating the model in {cfg.output_dir}/", flush=True)
    print(f"== 2/3 evaluate {cfg.name} and {len(baselines)} baseline(s) on {tasks}", flush=True)
    baseline_docs = [_baseline_results(spec, tasks, benchmarks_dir, force_eval) for spec in baselines]
    # evaluate the exported folder itself: what users download, loaded through trust_remote_code
    encoder = load_encoder(str(cfg.output_dir), name=cfg.name)
    doc = evaluate(encoder, tasks=tasks, benchmarks_dir=benchmarks_dir, output=cfg.results_path)
    print("== 3/3 export the model card with the results", flush=True)
    refresh_card(cfg.output_dir, cfg, card_results(cfg, doc, baseline_docs))
    table = format_report([doc, *baseline_docs], include_reference=True)
    print("\n" + table + "\n")
    if update_readme:
        readme = Path(update_readme)
        # a README with several recipes has one block per recipe (<!-- pearl-mini:start -->); else the generic one
        block = cfg.name if f"<!-- {cfg.name}:start -->" in readme.read_text() else "results"
        write_readme_table(readme, table, block=block)
    print(
        f">> done in {(time.monotonic() - started) / 60:.1f} min: model in {cfg.output_dir}/, results in {cfg.results_path}"
    )
    return doc


def _baseline_results(spec: str, tasks, benchmarks_dir, force_eval: bool) -> dict:
    """A baseline's results on ``tasks``: reused from ``results/`` where present (one file per baseline, shared by
    every recipe), with only the missing tasks evaluated and merged in; everything recomputed with ``force_eval``."""
    from phrasezoo.evaluation import evaluate, read_results, resolve_tasks, write_results

    path = baseline_results_path(spec)
    wanted = list(resolve_tasks(tasks))
    cached = read_results(path) if path.exists() and not force_eval else None
    if cached is None:
        return evaluate(spec, tasks=",".join(wanted), benchmarks_dir=benchmarks_dir, output=path)
    have = {r["task"] for r in cached["results"]}
    missing = [t for t in wanted if t not in have]
    if not missing:
        print(f">> reusing {path} (use --force-eval to recompute)")
    else:
        print(f">> {path}: evaluating the missing task(s) {', '.join(missing)}")
        fresh = evaluate(spec, tasks=",".join(missing), benchmarks_dir=benchmarks_dir, output=None)
        cached["results"] = [r for r in cached["results"] if r["task"] not in missing] + fresh["results"]
        write_results(cached, path)
    # the table shows this recipe's tasks only
    return {**cached, "results": [r for r in cached["results"] if r["task"] in wanted]}
