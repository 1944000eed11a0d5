"""The main job, ``phrasezoo pipeline``: train -> select on the dev suite -> export once -> evaluate model and
baselines -> card once, from the results -> comparison table. It runs the workflows in order, one way; they never
import each other. (Train -> export alone, ``phrasezoo train`` and ``train.py``, is :mod:`phrasezoo.train`, which
every accelerate process imports: it stays clear of the evaluation workflow this module needs.)
"""

from __future__ import annotations

import json
from pathlib import Path

from phrasezoo.core.files import atomic_write_text, write_readme_table
from phrasezoo.core.progress import StageClock
from phrasezoo.core.recipes import Recipe, load_recipe
from phrasezoo.evaluation import format_report, read_results, to_model_index
from phrasezoo.evaluation.dev.suite import evaluate_dev
from phrasezoo.evaluation.processes.baselines import Baselines
from phrasezoo.evaluation.processes.parallel import evaluate_in_parallel
from phrasezoo.evaluation.tasks import check_task_options
from phrasezoo.hub import export as hub_export
from phrasezoo.hub.card import CardResults
from phrasezoo.training.finalize import finalize_model
from phrasezoo.training.loop import RunOptions
from phrasezoo.training.recipe import train_recipe
from phrasezoo.training.selection import check_selection, select_from_recipe

README_START = "<!-- results:start -->"
README_END = "<!-- results:end -->"


def card_results(cfg: Recipe, doc: dict | None, baselines: list[dict] | None = None) -> CardResults | None:
    """A card's view of a results document: the table (baselines, the papers' rows) and model-index entries."""
    if doc is None:
        return None
    table, index = format_report([doc, *(baselines or [])], include_reference=True), to_model_index(doc, cfg.name)
    return CardResults(table, index or None, doc.get("model"), doc.get("created"))


def card_from_files(cfg: Recipe, results_path: Path, baseline_paths: list[Path]) -> CardResults | None:
    """:func:`card_results` of the results file ``results_path`` (None when it does not exist) and the baselines'
    files: ``phrasezoo export``'s card."""
    doc = read_results(results_path) if results_path.exists() else None
    return card_results(cfg, doc, [read_results(Path(path)) for path in baseline_paths])


def run_pipeline(config, benchmarks_dir=None, overrides=None, reuse_baselines=False, resume=True,
                 update_readme=None, train=True, dev_only=False) -> dict:  # fmt: skip
    """Train ``config`` (resuming if possible), choose its ``eval.select_on_dev`` values on the dev suite, export
    the folder once, evaluate it and its baselines (measured in this run unless ``reuse_baselines``), write its
    card once and print the comparison table and the time of each stage. Returns the results document; with
    ``dev_only``, the dev selection, and no benchmark is evaluated (to compare recipe variants on dev data)."""
    clock, cfg = StageClock.for_job(), load_recipe(config, overrides)
    tasks, baselines = cfg.eval.get("tasks", "all"), cfg.eval.get("baselines", [])
    selection = cfg.eval.get("select_on_dev")
    task_options = _task_options(cfg)  # checked before training, so a misspelt option fails early
    if selection:
        check_selection(cfg, baselines)  # likewise: the selection runs after training
    if dev_only and not selection:
        raise ValueError(f"--dev-only needs an eval.select_on_dev block in the recipe {cfg.name}; it has none.")
    model, facts, chosen = None, {}, None
    measured = Baselines(baselines, tasks, benchmarks_dir, force_eval=not reuse_baselines)  # now, or beside training
    if train:
        print(f"== 1/5 train {cfg.name} ({cfg.method}, backbone {cfg.backbone or 'none'})", flush=True)
        trained = train_recipe(cfg, RunOptions(resume=resume, spare=None if dev_only else measured.start))
        model, facts = trained.model, trained.facts
        clock.rows.extend(trained.stages)
    elif not (cfg.output_dir / "config.json").exists():
        raise FileNotFoundError(f"--no-train needs a model exported in {cfg.output_dir}/: drop --no-train to train it.")
    if selection:
        print("== 2/5 choose the post-training values on the dev suite (not on test data)", flush=True)
        with clock.stage("dev-suite selection"):
            model, chosen, chosen_facts = select_from_recipe(cfg, evaluate_dev, model, baselines)
        facts = {**facts, **chosen_facts}
    if model is not None:
        print(f"== 3/5 export {cfg.output_dir}/ (once, after training and selection)", flush=True)
        with clock.stage("finalize (the method's last step on the model)"):
            facts = {**facts, **finalize_model(cfg, model)}
        with clock.stage("export"):
            # the card comes with the results
            hub_export.export_model(model, cfg.output_dir, cfg, facts=facts, card=False)
    if dev_only:
        print(f">> --dev-only: no benchmark evaluated; model in {cfg.output_dir}/\n\n{clock.table()}", flush=True)
        return chosen
    print(f"== 4/5 evaluate {cfg.name} ({cfg.output_dir}/) and {len(baselines)} baseline(s) on {tasks}", flush=True)
    with clock.stage("evaluation: baselines (the rest of their run)"):
        baseline_docs = measured.results()
    if measured.background:
        clock.add("evaluation: baselines, beside training", *measured.background)
    with clock.stage("evaluation: the exported model, on two cores"):  # the folder users download (trust_remote_code)
        doc = evaluate_in_parallel(cfg.output_dir, tasks, benchmarks_dir, cfg.results_path, cfg.name, task_options)
    print("== 5/5 write the model card with the results", flush=True)
    with clock.stage("model card"):
        hub_export.refresh_card(cfg.output_dir, cfg, card_results(cfg, doc, baseline_docs))
    table = format_report([doc, *baseline_docs], include_reference=True)
    if update_readme:  # a README with several recipes has one block per recipe (<!-- pearl-mini:start -->)
        block = cfg.name if f"<!-- {cfg.name}:start -->" in Path(update_readme).read_text() else "results"
        write_readme_table(Path(update_readme), table, block=block)
    print(f"\n{table}\n\n>> done: model in {cfg.output_dir}/, results in {cfg.results_path}\n\n{clock.table()}")
    atomic_write_text(
        cfg.output_dir.with_name(f"{cfg.name}-job-stages.json"), json.dumps(clock.to_dict(), indent=1) + "\n"
    )
    return doc


def _task_options(cfg) -> dict:
    """Task options of the recipe: ``eval.ccl`` (chosen on dev data) sets this model's ``_ccl`` task options."""
    ccl = cfg.eval.get("ccl")
    if ccl is None:
        return {}
    if not isinstance(ccl, dict):
        raise ValueError(f"eval.ccl of {cfg.name} must be a mapping of CCL options, e.g. {{steps: 25}}; got {ccl!r}.")
    return check_task_options({"ccl": ccl})
