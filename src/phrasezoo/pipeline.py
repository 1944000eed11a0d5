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
from phrasezoo.recipes import Recipe, load_recipe, results_path

README_START = "<!-- results:start -->"
README_END = "<!-- results:end -->"


def baseline_results_path(spec: str) -> Path:
    return results_path(spec)


# ----------------------------------------------------------------------------------------------- train + export
def train_and_export(
    cfg: Recipe,
    output_dir: str | Path | None = None,
    resume: bool = True,
    stop_after_steps: int | None = None,
    progress: bool = True,
    card: bool = True,
):
    """Train ``cfg`` (resuming from the last checkpoint) and export the model folder (the main process does).

    With ``training.soup_seeds`` the recipe is trained once per seed, each run in ``<output>/ingredients/seed-<s>/``
    (resumable, and a finished one is reused), and the exported model is their soup (:mod:`phrasezoo.training.soup`).
    """
    from phrasezoo.hub.export import export_model
    from phrasezoo.training.run import run_training

    if cfg.training.soup_seeds:
        return _train_soup(cfg, output_dir, resume, stop_after_steps, progress, card)
    run = run_training(cfg, output_dir, resume=resume, stop_after_steps=stop_after_steps, progress=progress)
    if run.is_main_process:
        export_model(run.result.model, run.output_dir, cfg, facts=run.facts, card=card)
        print(f">> exported {run.output_dir} ({run.result.steps} steps, {run.result.seconds / 60:.1f} min)", flush=True)
    return run


def _train_soup(cfg: Recipe, output_dir, resume: bool, stop_after_steps, progress: bool, card: bool):
    """Train one run per ``cfg.training.soup_seeds`` seed and export the soup of their last checkpoints."""
    import copy

    from safetensors.torch import load_file

    from phrasezoo.hub.export import export_model
    from phrasezoo.training.checkpoint import blend_with_initial
    from phrasezoo.training.run import run_training
    from phrasezoo.training.soup import write_soup_checkpoint

    seeds = list(cfg.training.soup_seeds)
    if len(set(seeds)) != len(seeds) or len(seeds) < 2:
        raise ValueError(f"training.soup_seeds needs at least two different seeds, got {seeds}.")
    output = Path(output_dir or cfg.output_dir)
    runs = []
    for i, seed in enumerate(seeds, start=1):
        ingredient = copy.deepcopy(cfg)
        ingredient.training.seed, ingredient.training.soup_seeds = seed, None
        print(f">> soup ingredient {i}/{len(seeds)}: seed {seed}", flush=True)
        run = run_training(
            ingredient,
            output / "ingredients" / f"seed-{seed}",
            resume=resume,
            stop_after_steps=stop_after_steps,
            progress=progress,
        )
        runs.append(run)
    if not runs[0].is_main_process:
        return runs[0]
    soup, soup_facts = write_soup_checkpoint([r.output_dir for r in runs], output)
    if cfg.training.weight_average:  # the same final blend as a single run's
        initial = load_file(output / "checkpoints" / "initial.safetensors")
        soup = blend_with_initial(soup, initial, cfg.training.weight_average)
    model = runs[0].result.model
    model.load_state_dict(soup)
    minutes = round(sum(r.result.seconds for r in runs) / 60, 1)
    facts = {**runs[0].facts, "seed": seeds, "training time (min)": minutes, **soup_facts}
    if not facts.get("last losses"):  # a finished ingredient reused from disk logs no new step
        facts.pop("last losses", None)
    export_model(model, output, cfg, facts=facts, card=card)
    print(f">> exported the soup of {len(runs)} runs to {output}", flush=True)
    return runs[0]


def train_from_args(args: argparse.Namespace):
    """``phrasezoo train`` / ``train.py``: the arguments of :func:`phrasezoo.training.run.add_train_arguments`."""
    if args.no_progress:
        os.environ["TQDM_DISABLE"] = "1"  # every tqdm bar, including those of datasets and stage helpers
    cfg = load_recipe(args.config, args.overrides)
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
        description="Train a phrasezoo model from its recipe, e.g. `accelerate launch train.py "
        "hub_configs/pearl-mini.yaml`. Resumes from the last checkpoint in outputs/<name>/checkpoints unless "
        "--no-resume; exports outputs/<name>/ as a Hub-ready folder at the end.",
    )
    add_train_arguments(parser)
    train_from_args(parser.parse_args(argv))


def card_results(cfg: Recipe, doc: dict | None, baselines: list[dict] | None = None):
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


# ------------------------------------------------------------------------------------------- dev-set selection
def select_on_dev(
    cfg: Recipe,
    grid: dict[str, list],
    output: str | Path | None = None,
    progress: bool = True,
    dev_tasks: str | list[str] | None = None,
    max_items: int | None = None,
    objective: str = "mean",
    baseline: str | None = None,
):
    """Choose the post-training mixing values of a trained recipe on the dev suite, never on test data.

    ``grid`` maps ``weight_average`` (the blend of the fine-tuned phrase encoder with its starting weights) and
    any model-config attribute that changes inference only (e.g. PEARL's ``char_weight``) to candidate values. The
    un-averaged weights of the last checkpoint and the starting weights in ``checkpoints/initial.safetensors`` give
    every candidate without retraining. Values are chosen one key at a time, in the grid's order (coordinate
    search, each key at the best value of those before it), by the dev suite's mean score
    (:func:`phrasezoo.evaluation.dev_suite.evaluate_dev`: resources disjoint from every test benchmark). The chosen
    model is exported over ``cfg.output_dir``; the search is written to ``output`` (default
    ``results/<method>/<name>-dev-selection.json``) and returned. ``dev_tasks``/``max_items`` restrict the dev suite (all
    tasks, full size by default). In a recipe: ``eval.select_on_dev: {grid: {weight_average: [...], ...}}`` (plus
    optional ``tasks``, ``max_items``, ``objective`` and ``baseline``).

    ``objective``: ``"mean"`` maximises the dev average; ``"worst_margin"`` maximises the smallest margin over
    ``baseline`` (an encoder spec, e.g. ``"baseline:minilm-l6"``, scored on the same dev tasks in this call), for a
    recipe whose goal is to beat its backbone on each of its benchmarks rather than on average.
    """
    import json

    import torch
    from safetensors.torch import load_file

    from phrasezoo.evaluation.dev_suite import evaluate_dev
    from phrasezoo.files import atomic_write_text
    from phrasezoo.hub.export import export_model
    from phrasezoo.registry import get_method
    from phrasezoo.training.checkpoint import blend_with_initial, latest_checkpoint, load_checkpoint

    ckpt_dir = cfg.output_dir / "checkpoints"
    found = latest_checkpoint(ckpt_dir)
    initial_path = ckpt_dir / "initial.safetensors"
    if found is None or not initial_path.exists():
        raise FileNotFoundError(
            f"Dev selection needs the training checkpoints of {cfg.name} in {ckpt_dir}/ (the last step and "
            f"initial.safetensors); train it first: `phrasezoo train {cfg.name}`."
        )
    method = get_method(cfg.method)
    model = method.model_class.from_pretrained(cfg.output_dir)
    model.eval()
    finetuned, _optimizer, state = load_checkpoint(found)
    initial = load_file(initial_path)
    if objective not in ("mean", "worst_margin"):
        raise ValueError(f"select_on_dev: objective must be 'mean' or 'worst_margin', got {objective!r}.")
    if objective == "worst_margin" and not baseline:
        raise ValueError("select_on_dev: objective 'worst_margin' needs a baseline, e.g. baseline: baseline:minilm-l6.")
    base_scores: dict[str, float] = {}
    if objective == "worst_margin":
        base_doc = evaluate_dev(baseline, tasks=dev_tasks, progress=progress, max_items=max_items)
        base_scores = {t: r["score"] for t, r in base_doc["tasks"].items() if r.get("score") is not None}
        print(f">> dev baseline {baseline}: {base_doc['dev_avg']:.4f}", flush=True)

    def objective_of(doc: dict) -> float:
        if objective == "mean":
            return doc["dev_avg"]
        margins = [doc["tasks"][t]["score"] - base_scores[t] for t in doc["dev_avg_tasks"] if t in base_scores]
        if not margins:
            raise RuntimeError(f"select_on_dev: the baseline {baseline} has no score on the dev tasks of the model.")
        return min(margins)

    keys = list(grid)
    unknown = [k for k in keys if k != "weight_average" and not hasattr(model.config, k)]
    if unknown:
        raise ValueError(
            f"select_on_dev: {unknown} are neither weight_average nor attributes of {type(model.config).__name__}."
        )

    def build(values: dict) -> None:
        weight = float(values.get("weight_average", cfg.training.weight_average or 0.0))
        model.load_state_dict(blend_with_initial(finetuned, initial, weight))
        for key, value in values.items():
            if key != "weight_average":
                setattr(model.config, key, value)

    current = {"weight_average": cfg.training.weight_average or 0.0}
    current.update({k: getattr(model.config, k) for k in keys if k != "weight_average"})
    rows, seen = [], {}
    for key in keys:
        best = None
        for value in grid[key]:
            values = {**current, key: value}
            signature = json.dumps(values, sort_keys=True)
            if signature not in seen:
                build(values)
                with torch.no_grad():
                    doc = evaluate_dev(model, tasks=dev_tasks, progress=progress, max_items=max_items)
                if doc["dev_avg"] is None:
                    raise RuntimeError(
                        "No dev-suite task could run (see the warnings above: a missing resource or benchmark "
                        "folder), so nothing can be chosen; install the resources or set PHRASEZOO_BENCHMARKS."
                    )
                seen[signature] = objective_of(doc)
                row = {**values, "dev_avg": doc["dev_avg"]}
                if objective == "worst_margin":
                    row["worst_margin"] = round(seen[signature], 6)
                rows.append({**row, **{t: r["score"] for t, r in doc["tasks"].items()}})
                print(f">> dev {values}: {doc['dev_avg']:.4f} ({objective}: {seen[signature]:+.4f})", flush=True)
            score = seen[signature]
            if best is None or score > best[0]:
                best = (score, value)
        current[key] = best[1]
    build(current)
    cfg.training.weight_average = current["weight_average"]
    for key in keys:
        if key != "weight_average":
            cfg.model[key] = current[key]
    selection = {
        "model": cfg.name,
        "checkpoint": f"{found.name} (step {state.get('step')})",
        "selected_on": (
            "phrasezoo dev suite (phrasezoo.evaluation.dev_suite: resources no benchmark uses and the benchmarks' own "
            "dev splits; no test-benchmark item)"
        ),
        "grid": grid,
        "search": "coordinate search in the grid's order, by "
        + ("dev_avg" if objective == "mean" else f"the smallest per-task margin over {baseline} (worst_margin)"),
        "objective": objective,
        "dev_tasks": doc["dev_avg_tasks"],
        "chosen": current,
        "rows": rows,
    }
    if objective == "worst_margin":
        selection["baseline"] = {"model": baseline, "scores": base_scores}
    path = Path(output) if output else cfg.results_path.with_name(f"{cfg.name}-dev-selection.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(selection, indent=1) + "\n")
    facts = {"chosen on the dev suite": {k: current[k] for k in keys}, "dev-suite selection": str(path)}
    export_model(model, cfg.output_dir, cfg, facts=facts, card=False)
    print(f">> dev selection: {current} (written to {path})", flush=True)
    return selection


# ------------------------------------------------------------------------------------------------- the main job


def run_pipeline(
    config: str,
    benchmarks_dir: str | None = None,
    overrides: list[str] | None = None,
    reuse_baselines: bool = False,
    resume: bool = True,
    update_readme: str | None = None,
    train: bool = True,
    dev_only: bool = False,
) -> dict:
    """Train (resuming if possible) and export ``config``, evaluate it and its baselines, print the comparison.

    Baselines are evaluated in this run (model and baseline in one table from one run); ``reuse_baselines`` reads
    them from ``results/`` where they cover the same tasks instead. With ``eval.select_on_dev`` in the recipe, the
    post-training mixing values are chosen on the dev suite first (:func:`select_on_dev`).
    Returns the model's results document; with ``dev_only``, the dev selection instead, and no benchmark is
    evaluated (for comparing recipe variants on dev data before any of their test numbers exist).
    """
    from phrasezoo.evaluation import evaluate, format_report, load_encoder
    from phrasezoo.hub.export import refresh_card

    started = time.monotonic()
    cfg = load_recipe(config, overrides)
    tasks = cfg.eval.get("tasks", "all")
    baselines = cfg.eval.get("baselines", [])
    selection = cfg.eval.get("select_on_dev")
    task_options = _task_options(cfg)  # checked before training, so a misspelt option fails early
    if dev_only and not selection:
        raise ValueError(f"--dev-only needs an eval.select_on_dev block in the recipe {cfg.name}; it has none.")
    if train:
        print(f"== 1/3 train {cfg.name} ({cfg.method}, backbone {cfg.backbone or 'none'})", flush=True)
        train_and_export(cfg, resume=resume, card=False)  # the card is written once, with the results (3/3)
    elif not (cfg.output_dir / "config.json").exists():
        raise FileNotFoundError(
            f"--no-train needs an exported model in {cfg.output_dir}/; train it first (drop --no-train)."
        )
    else:
        print(f"== 1/3 training skipped: evaluating the model in {cfg.output_dir}/", flush=True)
    if selection:
        if "grid" not in selection:
            raise ValueError("eval.select_on_dev needs a 'grid' mapping, e.g. {grid: {weight_average: [0.0, 0.5]}}.")
        print(f"== 1b/3 choose {', '.join(selection['grid'])} on the dev suite (not on test data)", flush=True)
        chosen = select_on_dev(
            cfg,
            selection["grid"],
            dev_tasks=selection.get("tasks"),
            max_items=selection.get("max_items"),
            objective=selection.get("objective", "mean"),
            baseline=selection.get("baseline") or (baselines[0] if baselines else None),
        )
        if dev_only:
            print(f">> --dev-only: no benchmark evaluated; model in {cfg.output_dir}/", flush=True)
            return chosen
    print(f"== 2/3 evaluate {cfg.name} and {len(baselines)} baseline(s) on {tasks}", flush=True)
    baseline_docs = [_baseline_results(spec, tasks, benchmarks_dir, not reuse_baselines) for spec in baselines]
    # evaluate the exported folder itself: what users download, loaded through trust_remote_code
    encoder = load_encoder(str(cfg.output_dir), name=cfg.name)
    doc = evaluate(
        encoder, tasks=tasks, benchmarks_dir=benchmarks_dir, output=cfg.results_path, task_options=task_options
    )
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


def _task_options(cfg) -> dict:
    """Run options of the benchmark tasks from the recipe: ``eval.ccl`` (CCL settings chosen on dev data for this
    recipe) overrides the ``_ccl`` tasks' defaults for this model; baselines keep the defaults."""
    from phrasezoo.evaluation.tasks import check_task_options

    ccl = cfg.eval.get("ccl")
    if ccl is None:
        return {}
    if not isinstance(ccl, dict):
        raise ValueError(f"eval.ccl of {cfg.name} must be a mapping of CCL options, e.g. {{steps: 25}}; got {ccl!r}.")
    return check_task_options({"ccl": ccl})


def _baseline_results(spec: str, tasks, benchmarks_dir, force_eval: bool) -> dict:
    """A baseline's results on ``tasks``: reused from ``results/`` where present (one file per baseline, shared by
    every recipe), with only the missing tasks evaluated and merged in; everything recomputed with ``force_eval``."""
    from phrasezoo.evaluation import evaluate, read_results, resolve_tasks, write_results

    path = baseline_results_path(spec)
    wanted = list(resolve_tasks(tasks))
    cached = read_results(path) if path.exists() and not force_eval else None
    if cached is None:
        fresh = evaluate(spec, tasks=",".join(wanted), benchmarks_dir=benchmarks_dir, output=None)
        # one results file per baseline is shared by every recipe: keep the other recipes' tasks in it
        others = read_results(path)["results"] if path.exists() else []
        merged = {**fresh, "results": [r for r in others if r["task"] not in wanted] + fresh["results"]}
        write_results(merged, path)
        return fresh
    have = {r["task"] for r in cached["results"]}
    missing = [t for t in wanted if t not in have]
    if not missing:
        print(f">> reusing {path} (--reuse-baselines)")
    else:
        print(f">> {path}: evaluating the missing task(s) {', '.join(missing)}")
        fresh = evaluate(spec, tasks=",".join(missing), benchmarks_dir=benchmarks_dir, output=None)
        cached["results"] = [r for r in cached["results"] if r["task"] not in missing] + fresh["results"]
        write_results(cached, path)
    # the table shows this recipe's tasks only
    return {**cached, "results": [r for r in cached["results"] if r["task"] in wanted]}
