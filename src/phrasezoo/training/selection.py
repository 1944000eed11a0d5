"""Choose a trained recipe's post-training mixing values on the dev suite, never on test data.

``grid`` maps ``weight_average`` (the blend of the fine-tuned phrase encoder with its starting weights) and any
model-config attribute that changes inference only (e.g. PEARL's ``char_weight``) to candidate values. The
un-averaged weights of the last checkpoint and the starting weights in ``checkpoints/initial.safetensors`` give every
candidate without retraining. Values are chosen one key at a time, in the grid's order (coordinate search, each key
at the best value of those before it). In a recipe: ``eval.select_on_dev: {grid: {weight_average: [...], ...}}``
(plus optional ``tasks``, ``max_items``, ``objective`` and ``baseline``).

The scorer is passed in (the pipeline passes :func:`phrasezoo.evaluation.dev.suite.evaluate_dev`: resources disjoint
from every test benchmark), since the training workflow does not import the evaluation workflow. The model is left at
the chosen values; exporting it is the caller's job (the pipeline exports once, after this).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import Recipe
from phrasezoo.training.checkpoint import blend_with_initial, latest_checkpoint, load_checkpoint
from phrasezoo.zoo.registry import get_method

SELECTED_ON = (
    "phrasezoo dev suite (phrasezoo.evaluation.dev.suite: resources no benchmark uses and the benchmarks' own dev "
    "splits; no test-benchmark item)"
)


def select_from_recipe(cfg: Recipe, evaluate_dev: Callable[..., dict], model=None, baselines=(), progress=True):
    """Run the recipe's ``eval.select_on_dev`` block on ``model`` (default: the model exported in
    ``cfg.output_dir``, for ``--no-train``); ``baseline`` defaults to the recipe's first baseline. Returns
    ``(model at the chosen values, selection, card facts)``."""
    block = cfg.eval.get("select_on_dev") or {}
    if "grid" not in block:
        raise ValueError("eval.select_on_dev needs a 'grid' mapping, e.g. {grid: {weight_average: [0.0, 0.5]}}.")
    if model is None:
        model = get_method(cfg.method).model_class.from_pretrained(cfg.output_dir)
    options = {k: block[k] for k in ("max_items", "objective") if k in block}
    baseline = block.get("baseline") or (baselines[0] if baselines else None)
    selection, facts = select_on_dev(
        cfg,
        block["grid"],
        evaluate_dev,
        model,
        progress=progress,
        dev_tasks=block.get("tasks"),
        baseline=baseline,
        **options,
    )
    return model, selection, facts


def select_on_dev(
    cfg: Recipe,
    grid: dict[str, list],
    evaluate_dev: Callable[..., dict],
    model,
    output: str | Path | None = None,
    progress: bool = True,
    dev_tasks: str | list[str] | None = None,
    max_items: int | None = None,
    objective: str = "mean",
    baseline: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Choose the values of ``grid`` for the trained ``cfg`` by ``evaluate_dev``'s scores; returns ``(selection,
    card facts)``.

    ``model``: the trained model (its weights are replaced by blends of the last checkpoint and the starting
    weights); it is left at the chosen blend and values, and ``cfg`` records them. The search is written to ``output`` (default
    ``results/<method>/<name>-dev-selection.json``). ``dev_tasks``/``max_items`` restrict the dev suite. ``objective``:
    ``"mean"`` maximises the dev average; ``"worst_margin"`` maximises the smallest margin over ``baseline`` (an
    encoder spec, e.g. ``"baseline:minilm-l6"``, scored on the same dev tasks in this call), for a recipe whose goal
    is to beat its backbone on each of its benchmarks rather than on average.
    """
    if objective not in ("mean", "worst_margin"):
        raise ValueError(f"select_on_dev: objective must be 'mean' or 'worst_margin', got {objective!r}.")
    if objective == "worst_margin" and not baseline:
        raise ValueError("select_on_dev: objective 'worst_margin' needs a baseline, e.g. baseline:minilm-l6.")
    found, finetuned, initial, state = _checkpoint_weights(cfg)
    model.eval()
    unknown = [k for k in grid if k != "weight_average" and not hasattr(model.config, k)]
    if unknown:
        raise ValueError(
            f"select_on_dev: {unknown} are neither weight_average nor attributes of {type(model.config).__name__}."
        )
    score = _Objective(objective, baseline, evaluate_dev, dev_tasks, max_items, progress)

    def build(values: dict) -> None:
        weight = float(values.get("weight_average", cfg.training.weight_average or 0.0))
        model.load_state_dict(blend_with_initial(finetuned, initial, weight))
        for key, value in values.items():
            if key != "weight_average":
                setattr(model.config, key, value)

    def evaluate(values: dict) -> dict:
        build(values)
        with torch.no_grad():
            doc = evaluate_dev(model, tasks=dev_tasks, progress=progress, max_items=max_items)
        if doc["dev_avg"] is None:
            raise RuntimeError(
                "No dev-suite task could run (see the warnings above: a missing resource or benchmark folder), so "
                "nothing can be chosen; install the resources or set PHRASEZOO_BENCHMARKS."
            )
        return doc

    current = {"weight_average": cfg.training.weight_average or 0.0}
    current.update({k: getattr(model.config, k) for k in grid if k != "weight_average"})
    rows, last = _coordinate_search(grid, current, evaluate, score, objective)
    build(current)
    cfg.training.weight_average = current["weight_average"]
    cfg.model.update({k: current[k] for k in grid if k != "weight_average"})
    selection = {
        "model": cfg.name,
        "checkpoint": f"{found.name} (step {state.get('step')})",
        "selected_on": SELECTED_ON,
        "grid": grid,
        "search": "coordinate search in the grid's order, by "
        + ("dev_avg" if objective == "mean" else f"the smallest per-task margin over {baseline} (worst_margin)"),
        "objective": objective,
        "dev_tasks": last["dev_avg_tasks"],
        "chosen": current,
        "rows": rows,
    }
    if objective == "worst_margin":
        selection["baseline"] = {"model": baseline, "scores": score.baseline_scores}
    path = Path(output) if output else cfg.results_path.with_name(f"{cfg.name}-dev-selection.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(selection, indent=1) + "\n")
    print(f">> dev selection: {current} (written to {path})", flush=True)
    return selection, {"chosen on the dev suite": {k: current[k] for k in grid}, "dev-suite selection": str(path)}


def _checkpoint_weights(cfg: Recipe):
    """``(checkpoint folder, its un-averaged weights, the starting weights, its trainer state)`` of a trained run."""
    ckpt_dir = cfg.output_dir / "checkpoints"
    found = latest_checkpoint(ckpt_dir)
    initial_path = ckpt_dir / "initial.safetensors"
    if found is None or not initial_path.exists():
        raise FileNotFoundError(
            f"Dev selection needs the training checkpoints of {cfg.name} in {ckpt_dir}/ (the last step and "
            f"initial.safetensors); train it first: `phrasezoo train {cfg.name}`."
        )
    finetuned, _optimizer, state = load_checkpoint(found)
    return found, finetuned, load_file(initial_path), state


class _Objective:
    """The number the search maximises for a dev-suite document: its mean, or its smallest margin over a baseline
    scored once, here, on the same dev tasks."""

    def __init__(self, objective: str, baseline, evaluate_dev, dev_tasks, max_items, progress) -> None:
        self.objective = objective
        self.baseline = baseline
        self.baseline_scores: dict[str, float] = {}
        if objective == "worst_margin":
            doc = evaluate_dev(baseline, tasks=dev_tasks, progress=progress, max_items=max_items)
            self.baseline_scores = {t: r["score"] for t, r in doc["tasks"].items() if r.get("score") is not None}
            print(f">> dev baseline {baseline}: {doc['dev_avg']:.4f}", flush=True)

    def __call__(self, doc: dict) -> float:
        if self.objective == "mean":
            return doc["dev_avg"]
        base = self.baseline_scores
        margins = [doc["tasks"][t]["score"] - base[t] for t in doc["dev_avg_tasks"] if t in base]
        if not margins:
            raise RuntimeError(f"select_on_dev: the baseline {self.baseline} has no score on the model's dev tasks.")
        return min(margins)


def _coordinate_search(grid: dict[str, list], current: dict, evaluate, score, objective: str):
    """Each key in the grid's order set to its best value (the others at their current best); every candidate is
    scored once. Returns ``(rows, last dev document)`` and leaves ``current`` at the chosen values."""
    rows, seen, doc = [], {}, None
    for key in grid:
        best = None
        for value in grid[key]:
            values = {**current, key: value}
            signature = json.dumps(values, sort_keys=True)
            if signature not in seen:
                doc = evaluate(values)
                seen[signature] = score(doc)
                row = {**values, "dev_avg": doc["dev_avg"]}
                if objective == "worst_margin":
                    row["worst_margin"] = round(seen[signature], 6)
                rows.append({**row, **{t: r["score"] for t, r in doc["tasks"].items()}})
                print(f">> dev {values}: {doc['dev_avg']:.4f} ({objective}: {seen[signature]:+.4f})", flush=True)
            if best is None or seen[signature] > best[0]:
                best = (seen[signature], value)
        current[key] = best[1]
    return rows, doc
