"""The main job: train a hub config, evaluate it and its baselines with the suite, export, print the table."""

from __future__ import annotations

import time
from pathlib import Path

from phrasezoo.hub_config import load_hub_config

README_START = "<!-- results:start -->"
README_END = "<!-- results:end -->"


def baseline_results_path(spec: str) -> Path:
    return Path("results") / (spec.replace("baseline:", "baseline-").replace("/", "--") + ".json")


def run_pipeline(
    config: str,
    benchmarks_dir: str | None = None,
    overrides: list[str] | None = None,
    force_eval: bool = False,
    resume: bool = True,
    update_readme: str | None = None,
) -> dict:
    """Train (resuming if possible) and export ``config``, evaluate it and its baselines, print the comparison.

    Baseline results are reused from ``results/`` when they cover the same tasks (``force_eval`` recomputes them).
    Returns the model's results document.
    """
    from phrasezoo.evaluation import evaluate, format_report, load_encoder, read_results
    from phrasezoo.hub.export import refresh_card
    from phrasezoo.training.run import run_training

    started = time.monotonic()
    cfg = load_hub_config(config, overrides)
    tasks = cfg.eval.get("tasks", "pearl")
    baselines = cfg.eval.get("baselines", [])
    print(f"== 1/3 train {cfg.name} ({cfg.method}, backbone {cfg.backbone})", flush=True)
    run_training(cfg, resume=resume)
    print(f"== 2/3 evaluate {cfg.name} and {len(baselines)} baseline(s) on {tasks}", flush=True)
    baseline_docs = []
    for spec in baselines:
        path = baseline_results_path(spec)
        cached = read_results(path) if path.exists() and not force_eval else None
        if cached is not None and _covers(cached, tasks):
            print(f">> reusing {path} (use --force-eval to recompute)")
            baseline_docs.append(cached)
        else:
            baseline_docs.append(evaluate(spec, tasks=tasks, benchmarks_dir=benchmarks_dir, output=path))
    # evaluate the exported folder itself: what users download, loaded through trust_remote_code
    encoder = load_encoder(str(cfg.output_dir), name=cfg.name)
    doc = evaluate(encoder, tasks=tasks, benchmarks_dir=benchmarks_dir, output=cfg.results_path)
    print("== 3/3 export the model card with the results", flush=True)
    refresh_card(cfg.output_dir, cfg, doc, baseline_docs)
    table = format_report([doc, *baseline_docs], include_reference=True)
    print("\n" + table + "\n")
    if update_readme:
        write_readme_table(Path(update_readme), table)
    print(
        f">> done in {(time.monotonic() - started) / 60:.1f} min: model in {cfg.output_dir}/, results in {cfg.results_path}"
    )
    return doc


def _covers(doc: dict, tasks) -> bool:
    from phrasezoo.evaluation import resolve_tasks

    have = {r["task"] for r in doc.get("results", [])}
    return set(resolve_tasks(tasks)) <= have


def write_readme_table(readme: Path, table: str, block: str = "results") -> None:
    """Replace the generated block ``<!-- {block}:start -->`` ... ``<!-- {block}:end -->`` of a README."""
    start, end = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    text = readme.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{readme} has no {start} ... {end} block to fill.")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{table}\n{end}{tail}")
