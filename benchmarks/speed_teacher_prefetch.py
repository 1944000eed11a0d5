"""The teacher rows a soup's runs draw, embedded with a cold teacher cache: three ways, timed in one run.

* **each seed alone**: every seed's run prefetches its own draws in a cache that holds none of the others' (what the
  soup's ingredients did before 2026-12-06: side by side, in processes of their own, none seeing the rows another
  was embedding), one torch thread (the pinned run's count);
* **one prefetch, here**: the first run prefetches every seed's draws at once (many share an eager batch), one
  thread;
* **one prefetch, a pool**: the same in forked one-thread workers, one per core (what the soup does now).

Every way embeds rows at their eager batch's shape, so the rows must be bit-identical: the script checks it. The
recipe's data caches must be warm (a main job or ``phrasezoo train <recipe>`` ran once here) and its teacher folder
must hold no row a run draws yet: pass ``--cache`` a cache in the state a cold build leaves it (its ``teacher/``
is copied for each way; the other folders are linked).

    .venv/bin/python benchmarks/speed_teacher_prefetch.py --recipe pearl-mini --cache /path/to/cold-built-cache
    # ~25 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from phrasezoo.core.machine import cpu_name, usable_cores
from phrasezoo.core.recipes import load_recipe
from phrasezoo.objectives import teacher as teacher_module
from phrasezoo.training.loop import _batch_plan, micro_seed, plan_steps, seed_everything
from phrasezoo.zoo.registry import create_model, validate_recipe


def draws(recipe: str, seeds: list[int]) -> tuple[list[str], dict[int, list[str]]]:
    """The teacher's strings and, per seed, the strings its run's steps look up (as the trainer plans them)."""
    cfg = load_recipe(recipe, ["training.soup_seeds=null"])
    method = validate_recipe(cfg)
    seed_everything(cfg.training.seed)
    model = create_model(cfg, None, method=method)
    seed_everything(cfg.training.seed)
    task = method.build_task(cfg, model, None)
    local_batch, total = plan_steps(cfg.training, task.num_examples(), 1)
    out = {}
    for seed in seeds:
        run = SimpleNamespace(cfg=cfg.training, task=task, accelerator=SimpleNamespace(process_index=0),
                              local_batch=local_batch)  # fmt: skip
        plan = _batch_plan(run, seed)
        texts = (
            text
            for step in range(total)
            for micro in range(cfg.training.gradient_accumulation_steps)
            for text in task.batch_texts(plan(step, micro), random.Random(micro_seed(seed, step, micro, 0)))[0]
        )
        out[seed] = [t for t in dict.fromkeys(texts) if t in task.terms.teacher.index]
    return sorted(task.terms.teacher.index), out


def fresh_cache(base: Path, root: Path, name: str) -> Path:
    """A cache whose folders link to ``base``'s, but for a copy of its ``teacher/``."""
    cache = root / name
    cache.mkdir()
    for entry in base.iterdir():
        if entry.name == "teacher":
            shutil.copytree(entry, cache / "teacher")
        else:
            (cache / entry.name).symlink_to(entry)
    return cache


def prefetch(cache: Path, strings: list[str], texts: list[str], teacher: str, workers: int) -> dict:
    """Embed ``texts``' rows in a fresh process-level store over ``cache``; seconds and rows."""
    os.environ["PHRASEZOO_CACHE"], os.environ["PHRASEZOO_TEACHER_WORKERS"] = str(cache), str(workers)
    teacher_module._STORES.clear()
    rows = teacher_module.teacher_embeddings(strings, teacher, progress=False)
    store = rows._rows.store
    missing = sum(t not in store.rows for t in texts)
    started, cpu = time.perf_counter(), time.process_time()
    rows.prefetch(texts, progress=False)
    seconds = time.perf_counter() - started
    vectors = {t: store.rows[t] for t in texts}
    store.unsaved.clear()  # nothing written: the next way starts from the same cache
    return {"rows_embedded": missing, "seconds": round(seconds, 1), "vectors": vectors,
            "parent_cpu_seconds": round(time.process_time() - cpu, 1)}  # fmt: skip


def render(results: dict) -> str:
    """The block of docs/getting-started.md: the three ways, their rows, minutes and ratios."""
    alone = results["each_seed_alone"]
    seeds = ", ".join(map(str, results["seeds"]))
    rows = [(f"each seed alone (seeds {seeds}, one after another; the soup ran them side by side)",
             sum(w["rows_embedded"] for w in alone.values()), results["each_seed_alone_seconds"], "1 thread"),
            ("one prefetch of every seed's draws, here", results["one_prefetch_here"]["rows_embedded"],
             results["one_prefetch_here"]["seconds"], "1 thread"),
            ("one prefetch, a pool of forked workers (the soup now)", results["one_prefetch_pool"]["rows_embedded"],
             results["one_prefetch_pool"]["seconds"], f"{results['one_prefetch_pool']['workers']} workers, 1 thread each")]  # fmt: skip
    lines = ["| way | rows embedded | minutes | threads |", "|---|---:|---:|---|"]
    lines += [f"| {way} | {n:,} | {sec / 60:.1f} | {threads} |" for way, n, sec, threads in rows]
    same = "bit-identical rows in every way" if results["bit_identical"] else "**rows differ**"
    lines += ["", f"{results['recipe']}'s {len(results['seeds'])} seeds draw {results['union']:,} distinct teacher "
              f"strings ({', '.join(f'{v:,}' for v in results['draws_per_seed'].values())} each); the teacher is "
              f"{results['teacher']}. On one thread, one prefetch takes {results['work_ratio_alone_vs_one']}x less "
              f"time than each seed alone (a batch is embedded whole however few of its rows a seed draws, and the "
              f"seeds share batches); the pool takes {results['wall_ratio_here_vs_pool']}x less time than one "
              f"process; "
              f"{same}. {results['machine']['cores']} cores ({results['machine']['cpu']}). From "
              f"`results/speed/speed-teacher-prefetch.json` (`{results['command']}`, {results['date']})."]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True, help="a cache as a cold build of the recipe leaves it")
    parser.add_argument("--recipe", required=True, help="a soup recipe with a teacher term (name or path)")
    parser.add_argument("--output", default="results/speed/speed-teacher-prefetch.json")
    args = parser.parse_args()
    torch.set_num_threads(1)  # the pinned training run's count (the draws' rows are embedded at it)
    os.environ["PHRASEZOO_CACHE"] = str(args.cache)
    cfg = load_recipe(args.recipe)
    seeds, teacher = list(cfg.training.soup_seeds), cfg.training.method_args["teacher"]
    strings, per_seed = draws(args.recipe, seeds)
    union = list(dict.fromkeys(t for seed in seeds for t in per_seed[seed]))
    pool = usable_cores()
    with tempfile.TemporaryDirectory(dir=args.cache.parent) as tmp:
        root = Path(tmp)
        alone = {
            s: prefetch(fresh_cache(args.cache, root, f"alone-{s}"), strings, per_seed[s], teacher, 1) for s in seeds
        }
        here = prefetch(fresh_cache(args.cache, root, "here"), strings, union, teacher, 1)
        pooled = prefetch(fresh_cache(args.cache, root, "pool"), strings, union, teacher, pool)
    same = all(np.array_equal(v, pooled["vectors"][t]) for t, v in here["vectors"].items()) and all(
        np.array_equal(v, pooled["vectors"][t]) for way in alone.values() for t, v in way["vectors"].items()
    )
    alone_seconds = sum(way["seconds"] for way in alone.values())
    record = {
        "date": dt.date.today().isoformat(),
        "command": f"benchmarks/speed_teacher_prefetch.py --recipe {args.recipe} --cache <a cache as a cold build leaves it>",
        "machine": {"cpu": cpu_name(), "cores": pool},
        "recipe": args.recipe,
        "teacher": teacher,
        "seeds": seeds,
        "draws_per_seed": {str(s): len(per_seed[s]) for s in seeds},
        "union": len(union),
        "each_seed_alone": {str(s): {k: v for k, v in way.items() if k != "vectors"} for s, way in alone.items()},
        "each_seed_alone_seconds": round(alone_seconds, 1),
        "one_prefetch_here": {k: v for k, v in here.items() if k != "vectors"},
        "one_prefetch_pool": {**{k: v for k, v in pooled.items() if k != "vectors"}, "workers": pool},
        "work_ratio_alone_vs_one": round(alone_seconds / here["seconds"], 2),
        "wall_ratio_here_vs_pool": round(here["seconds"] / pooled["seconds"], 2),
        "bit_identical": same,
    }
    print(json.dumps(record, indent=1))
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    if not same:
        raise SystemExit("the ways gave different rows: the pool or the shared prefetch changed bits")


if __name__ == "__main__":
    main()
