"""Choose a trained recipe's post-training mixing values on the dev suite, never on test data.

``grid`` maps ``weight_average`` (the blend of the fine-tuned phrase encoder with its starting weights) and any
model-config attribute that changes inference only (e.g. PEARL's ``char_weight``) to candidate values. The
un-averaged weights of the last checkpoint and the starting weights in ``checkpoints/initial.safetensors`` give every
candidate without retraining. Values are chosen one key at a time, in the grid's order (coordinate search, each key
at the best value of those before it). In a recipe: ``eval.select_on_dev: {grid: {weight_average: [...], ...}}``
(plus optional ``tasks``, ``max_items``, ``objective``, ``baseline``, ``released`` and ``margin``).

Dev differences smaller than the spread between runs of other seeds are noise: picking the best candidate by them
makes a reproduction export other values than the release it reproduces (a fresh clone chose pearl-mini's
``char_weight`` 0.0 where the release has 0.5, by 0.2 points of the dev average). With ``margin`` (that spread,
measured), a candidate replaces the incumbent value (the release's, ``released``, else the recipe's) only when it
beats it by more than the margin; a run whose choice differs from ``released`` says so, in its output, its selection
file and the card's facts.

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

from phrasezoo.core.errors import InputError
from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import Recipe
from phrasezoo.training.checkpoint import blend_with_initial, latest_checkpoint, load_checkpoint
from phrasezoo.zoo.registry import get_method

#: the keys of a recipe's ``eval.select_on_dev`` block
BLOCK_KEYS = ("grid", "tasks", "max_items", "objective", "baseline", "released", "margin")
OBJECTIVES = ("mean", "worst_margin")
SELECTED_ON = (
    "phrasezoo dev suite (phrasezoo.evaluation.dev.suite: resources no benchmark uses and the benchmarks' own dev "
    "splits; no test-benchmark item)"
)


def select_from_recipe(cfg: Recipe, evaluate_dev: Callable[..., dict], model=None, baselines=(), progress=True):
    """Run the recipe's ``eval.select_on_dev`` block on ``model`` (default: the model exported in
    ``cfg.output_dir``, for ``--no-train``); ``baseline`` defaults to the recipe's first baseline. Returns
    ``(model at the chosen values, selection, card facts)``."""
    block = check_selection(cfg, baselines)
    if model is None:
        model = get_method(cfg.method).model_class.from_pretrained(cfg.output_dir)
    options = {k: block[k] for k in ("max_items", "objective", "margin", "released") if k in block}
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


def check_selection(cfg: Recipe, baselines=()) -> dict[str, Any]:
    """The recipe's ``eval.select_on_dev`` block, checked before any training (a misspelt key would otherwise fail
    after the runs, an hour in): known keys, a grid of non-empty lists over ``weight_average`` and attributes of the
    method's config, a known objective (``worst_margin`` with a baseline), ``released`` values of grid keys, a margin
    of at least 0. An :class:`~phrasezoo.core.errors.InputError` names the recipe file and the key."""
    where = f"{cfg.source_path or cfg.name}: eval.select_on_dev"
    block = cfg.eval.get("select_on_dev") or {}
    unknown = sorted(set(block) - set(BLOCK_KEYS), key=str) if isinstance(block, dict) else []
    grid = block.get("grid") if isinstance(block, dict) else None
    if not isinstance(grid, dict) or not grid or unknown:
        raise InputError(
            f"{where} needs a 'grid' mapping, e.g. {{grid: {{weight_average: [0.0, 0.5]}}}}"
            + (f"; unknown keys {unknown} (known: {', '.join(BLOCK_KEYS)})" if unknown else "")
            + "."
        )
    problems = [f"grid.{k} must be a non-empty list" for k, v in grid.items() if not isinstance(v, list) or not v]
    config = _default_config(cfg)
    if config is not None:
        problems += [
            f"grid key '{k}' is neither weight_average nor an attribute of {type(config).__name__}"
            for k in grid
            if k != "weight_average" and not hasattr(config, k)
        ]
    objective = block.get("objective", "mean")
    if objective not in OBJECTIVES:
        problems.append(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    elif objective == "worst_margin" and not (block.get("baseline") or baselines):
        problems.append("objective worst_margin needs a baseline (baseline: baseline:minilm-l6, or eval.baselines)")
    released = block.get("released", {})
    if not isinstance(released, dict) or set(released) - set(grid):
        problems.append(f"released must map keys of the grid to the release's values, got {released!r}")
    margin = block.get("margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, int | float) or margin < 0):
        problems.append(f"margin must be a number >= 0 (the spread of the dev objective between seeds), got {margin!r}")
    if problems:
        raise InputError(f"{where}: " + "; ".join(problems) + ".")
    return block


def _default_config(cfg: Recipe):
    """The method's config with the recipe's model arguments (what the grid may set), or None if it cannot be made
    without its backbone."""
    try:
        return get_method(cfg.method).model_class.config_class(**cfg.model)
    except Exception:  # noqa: BLE001 - a config that needs its backbone: the grid is checked on the model instead
        return None


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
    margin: float | None = None,
    released: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Choose the values of ``grid`` for the trained ``cfg`` by ``evaluate_dev``'s scores; returns ``(selection,
    card facts)``.

    ``model``: the trained model (its weights are replaced by blends of the last checkpoint and the starting
    weights); it is left at the chosen blend and values, and ``cfg`` records them. The search is written to ``output``
    (default ``results/<method>/<name>-dev-selection.json``). ``dev_tasks``/``max_items`` restrict the dev suite.
    ``objective``: ``"mean"`` maximises the dev average; ``"worst_margin"`` maximises the smallest margin over
    ``baseline`` (an encoder spec, e.g. ``"baseline:minilm-l6"``, scored on the same dev tasks in this call), for a
    recipe whose goal is to beat its backbone on each of its benchmarks rather than on average. ``released``: the
    values the published model has; the search starts from them (else from the recipe's), and a choice that differs
    is said. ``margin``: a candidate replaces the incumbent value only when it beats it by more than this (the
    spread of the objective between runs of other seeds); None: the best candidate, ties to the grid's first.
    """
    if objective not in OBJECTIVES:
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
    current.update(released or {})
    search = _Search(grid, evaluate, score, objective, margin)
    search.run(current)
    build(current)
    cfg.training.weight_average = current["weight_average"]
    cfg.model.update({k: current[k] for k in grid if k != "weight_average"})
    selection = _selection_record(cfg, grid, found, state, objective, baseline, search, current)
    if objective == "worst_margin":
        selection["baseline"] = {"model": baseline, "scores": score.baseline_scores}
    facts = {"chosen on the dev suite": {k: current[k] for k in grid}}
    if released:
        selection["release"] = _compare_with_release(released, current, search, margin, objective)
        if not selection["release"]["kept"]:
            facts["not the release's choice"] = f"the release has {released}"
    path = Path(output) if output else cfg.results_path.with_name(f"{cfg.name}-dev-selection.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(selection, indent=1) + "\n")
    print(f">> dev selection: {current} (written to {path})", flush=True)
    return selection, {**facts, "dev-suite selection": str(path)}


def _selection_record(cfg: Recipe, grid, found: Path, state: dict, objective: str, baseline, search, current) -> dict:
    """The selection file's document: the checkpoint, the rule, every row scored and the choice."""
    rule = "dev_avg" if objective == "mean" else f"the smallest per-task margin over {baseline} (worst_margin)"
    if search.margin is not None:
        rule += f", a candidate replacing the incumbent only when better by more than {search.margin:g}"
    return {
        "model": cfg.name,
        "checkpoint": f"{found.name} (step {state.get('step')})",
        "selected_on": SELECTED_ON,
        "grid": grid,
        "search": "coordinate search in the grid's order, by " + rule,
        "objective": objective,
        **({"margin": search.margin} if search.margin is not None else {}),
        "dev_tasks": search.last["dev_avg_tasks"],
        "chosen": current,
        "rows": search.rows,
    }


def _compare_with_release(released: dict, current: dict, search, margin, objective: str) -> dict[str, Any]:
    """Whether this run kept the release's values; when it did not, one line in the run's output says which differ
    and by how much the dev objective preferred them."""
    differ = {k: {"release": v, "chosen": current[k]} for k, v in released.items() if current[k] != v}
    record = {"values": released, "kept": not differ}
    if differ:
        ours, theirs = search.score_of(current), search.score_of({**current, **released})
        record["differ"] = differ
        record[objective] = {"chosen": ours, "release": theirs}
        shown = ", ".join(f"{k} {d['chosen']} where the release has {d['release']}" for k, d in differ.items())
        against = f"{ours:.4f} against {theirs:.4f}" if theirs is not None else f"{ours:.4f}"
        print(f">> dev selection differs from the release: {shown} (dev {objective} {against}"
              + (f", beyond the margin {margin:g}" if margin is not None else ", no margin set")
              + "): this export is not the released model", flush=True)  # fmt: skip
    return record


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


class _Search:
    """Coordinate search over ``grid``: each key in the grid's order set to its best value, the others at their
    current best; every combination is scored once. With a ``margin``, a key keeps its incumbent value (the one it
    had when its turn came) unless a candidate beats it by more than the margin."""

    def __init__(self, grid: dict[str, list], evaluate, score, objective: str, margin: float | None) -> None:
        self.grid, self.evaluate, self.score, self.objective, self.margin = grid, evaluate, score, objective, margin
        self.rows: list[dict] = []
        self.seen: dict[str, float] = {}
        self.last: dict = {}

    def run(self, current: dict) -> None:
        """Leave ``current`` at the chosen values."""
        for key in self.grid:
            candidates = list(self.grid[key])
            if self.margin is not None and current[key] not in candidates:
                candidates.insert(0, current[key])  # the incumbent is scored even when the grid lacks it
            scored = [(self._scored({**current, key: value}), value) for value in candidates]
            best, value = max(scored, key=lambda pair: pair[0])  # the first of equals: the grid's order
            if self.margin is None or best > self._scored(current) + self.margin:
                current[key] = value

    def score_of(self, values: dict) -> float | None:
        """The objective of ``values`` when they were scored, else None."""
        return self.seen.get(json.dumps(values, sort_keys=True))

    def _scored(self, values: dict) -> float:
        signature = json.dumps(values, sort_keys=True)
        if signature not in self.seen:
            doc = self.last = self.evaluate(values)
            self.seen[signature] = self.score(doc)
            row = {**values, "dev_avg": doc["dev_avg"]}
            if self.objective == "worst_margin":
                row["worst_margin"] = round(self.seen[signature], 6)
            self.rows.append({**row, **{t: r["score"] for t, r in doc["tasks"].items()}})
            print(f">> dev {values}: {doc['dev_avg']:.4f} ({self.objective}: {self.seen[signature]:+.4f})", flush=True)
        return self.seen[signature]
