"""Does a checkpoint beat another recipe's on the dev suite? The publication rule of GPU-trained recipes.

A recipe states the rule in its eval section::

    eval:
      beat_on_dev:
        recipe: codebook-phrase-mini   # the recipe to beat (its CPU counterpart)
        tasks: null                    # dev tasks (phrasezoo.evaluation.dev.suite; null: the default five)

The checkpoint's dev scores are those of its dev selection's chosen row when the recipe has one on the same tasks,
else the dev suite run on the exported folder. The other recipe's come from ``results/`` (never from test data):
its dev selection (``results/<recipe>-dev-selection.json``, the chosen row), else a dev-suite document
(``results/dev-<recipe>.json``, written by ``phrasezoo dev-eval``), else its exported folder ``outputs/<recipe>/``
is scored now and that document written. It beats the other when the mean over the shared tasks is higher; the
comparison is written to ``results/<method>/<name>-dev-comparison.json``.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from phrasezoo.core.files import atomic_write_text
from phrasezoo.core.recipes import OUTPUTS_DIR, RESULTS_DIR, results_path
from phrasezoo.evaluation.dev.suite import evaluate_dev, resolve_dev_tasks

RULE_KEY = "beat_on_dev"


def chosen_scores(selection: dict[str, Any]) -> dict[str, float]:
    """Per-task dev scores of a dev selection's chosen values (its row in ``rows``)."""
    chosen = selection["chosen"]
    for row in selection["rows"]:
        if all(row.get(key) == value for key, value in chosen.items()):
            return {t: row[t] for t in selection["dev_tasks"] if row.get(t) is not None}
    raise ValueError(f"the dev selection has no row for its chosen values {chosen}.")


def dev_document_scores(doc: dict[str, Any]) -> dict[str, float]:
    return {t: r["score"] for t, r in doc["tasks"].items() if r.get("score") is not None}


def recipe_dev_scores(recipe: str, tasks: list[str], progress: bool = True) -> tuple[dict[str, float], str]:
    """``(scores, where they came from)`` of ``recipe`` on ``tasks`` (see the module docstring for the order)."""
    selection = results_path(recipe).with_name(f"{recipe}-dev-selection.json")
    if selection.exists():
        scores = chosen_scores(json.loads(selection.read_text()))
        if set(tasks) <= set(scores):
            return scores, f"{selection} (chosen row)"
    document = results_path(recipe).with_name(f"dev-{recipe}.json")
    if document.exists():
        scores = dev_document_scores(json.loads(document.read_text()))
        if set(tasks) <= set(scores):
            return scores, str(document)
    folder = OUTPUTS_DIR / recipe
    if (folder / "config.json").exists():
        doc = evaluate_dev(str(folder), tasks=tasks, progress=progress, output=document)
        return dev_document_scores(doc), f"{document} (scored now from {folder}/)"
    raise FileNotFoundError(
        f"No dev scores of {recipe} on {', '.join(tasks)} in {RESULTS_DIR}/ and no {folder}/ to score: train it "
        f"(`phrasezoo pipeline {recipe}`), or score its exported folder with `phrasezoo dev-eval --model "
        f"outputs/{recipe} --tasks {','.join(tasks)} --output {document}`, then unpack again."
    )


def rule_scores(cfg, progress: bool = True) -> tuple[str, list[str], dict[str, float], str] | None:
    """``(recipe to beat, dev tasks, its scores, where they came from)`` for ``cfg``'s ``eval.beat_on_dev`` rule, or
    None without one. Raises when the scores are not to be had (call it before any long work)."""
    rule = cfg.eval.get(RULE_KEY)
    if not rule:
        return None
    if not isinstance(rule, dict) or "recipe" not in rule:
        raise ValueError(f"eval.{RULE_KEY} of {cfg.name} must be a mapping with a 'recipe' (and optional 'tasks').")
    tasks = resolve_dev_tasks(rule.get("tasks"))
    scores, source = recipe_dev_scores(rule["recipe"], tasks, progress)
    return rule["recipe"], tasks, scores, source


def compare_on_dev(
    cfg, selection: dict[str, Any] | None, record: dict | None = None, progress: bool = True, rule=None
) -> dict[str, Any] | None:
    """The comparison of ``cfg``'s exported model with the recipe named in ``eval.beat_on_dev``, written to
    ``results/<method>/<name>-dev-comparison.json``; None when the recipe states no such rule. ``rule``: what
    :func:`rule_scores` returned, if it was called already."""
    rule = rule or rule_scores(cfg, progress)
    if rule is None:
        return None
    against, tasks, theirs, their_source = rule
    ours: dict[str, float] = {}
    if selection and set(tasks) <= set(selection["dev_tasks"]):
        ours, where = chosen_scores(selection), "its dev selection (chosen row)"
    if not set(tasks) <= set(ours):
        doc = evaluate_dev(str(cfg.output_dir), tasks=tasks, progress=progress)
        ours, where = dev_document_scores(doc), f"the dev suite on {cfg.output_dir}/"
    shared = [t for t in tasks if t in ours and t in theirs]
    if not shared:
        raise RuntimeError(f"No dev task scored both {cfg.name} and {against}; nothing to compare.")
    mean_ours = sum(ours[t] for t in shared) / len(shared)
    mean_theirs = sum(theirs[t] for t in shared) / len(shared)
    beats = mean_ours > mean_theirs
    verdict = f"{cfg.name} {mean_ours:.4f} vs {against} {mean_theirs:.4f} (dev mean of {', '.join(shared)}): " + (
        "beats it, published" if beats else "does not beat it"
    )
    comparison = {
        "model": cfg.name,
        "against": against,
        "tasks": shared,
        "scores": {cfg.name: {t: ours[t] for t in shared}, against: {t: theirs[t] for t in shared}},
        "means": {cfg.name: round(mean_ours, 6), against: round(mean_theirs, 6)},
        "sources": {cfg.name: where, against: their_source},
        "beats": beats,
        "verdict": verdict,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    if record is not None:
        comparison["trained_on"] = record.get("device_name")
    path = cfg.results_path.with_name(f"{cfg.name}-dev-comparison.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(comparison, indent=1) + "\n")
    print(f">> dev comparison: {verdict} ({path})", flush=True)
    return comparison
