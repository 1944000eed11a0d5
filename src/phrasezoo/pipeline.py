"""The main job: train a hub config, evaluate it and its baselines with the suite, export, print the table."""

from __future__ import annotations

import time
from pathlib import Path

from phrasezoo.recipes import load_hub_config

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
    train: bool = True,
) -> dict:
    """Train (resuming if possible) and export ``config``, evaluate it and its baselines, print the comparison.

    Baseline results are reused from ``results/`` when they cover the same tasks (``force_eval`` recomputes them).
    Returns the model's results document.
    """
    from phrasezoo.evaluation import evaluate, format_report, load_encoder
    from phrasezoo.hub.export import refresh_card
    from phrasezoo.training.run import run_training

    started = time.monotonic()
    cfg = load_hub_config(config, overrides)
    tasks = cfg.eval.get("tasks", "pearl")
    baselines = cfg.eval.get("baselines", [])
    if train:
        print(f"== 1/3 train {cfg.name} ({cfg.method}, backbone {cfg.backbone})", flush=True)
        run_training(cfg, resume=resume)
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
    refresh_card(cfg.output_dir, cfg, doc, baseline_docs)
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


def write_readme_table(readme: Path, table: str, block: str = "results") -> None:
    """Replace the generated block ``<!-- {block}:start -->`` ... ``<!-- {block}:end -->`` of a README."""
    start, end = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    text = readme.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{readme} has no {start} ... {end} block to fill.")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{table}\n{end}{tail}")
