"""Training steps per second of a recipe on a GPU against a CPU, both measured in the same run by the real loop.

The GPU machine this project is lent now and then has no network, no copy of the data caches and none of the data
builders' libraries (datasets, spaCy, faiss), and at most 64 MiB may travel to it. So the benchmark has two halves
(the GPU job, ``phrasezoo device``, trains the same way from a pack with real weights: docs/gpu-job.md):

``pack`` (where the recipe's caches are) builds the recipe's real training task exactly as ``phrasezoo train`` does,
then writes its batch source (the mention dataset, and the lexicon term's teacher rows) with the model's config and
tokenizer, without weights, to a folder:

    .venv/bin/python benchmarks/speed_train.py pack uctopic-mini --set training.method_args.lexicon_weight=3.0 \\
        --to .speedpack/uctopic-mini

``time`` (on any machine with torch and transformers) builds the model from that config with random weights (a
step costs the same whatever the weights hold), and runs :func:`phrasezoo.training.loop.train`, the loop every
recipe trains with, for a number of steps on each device asked for. It reports seconds per step after the warm-up
steps, the whole recipe's projected time and the speed-up over the first device named:

    python benchmarks/speed_train.py time .speedpack/uctopic-mini --devices cpu cuda --steps 20 300 \\
        --output results/speed/speed-train-uctopic-mini.json

Only the time is measured: the weights are random, so no score of these runs means anything. Teacher rows of the
lexicon term are a random subset (``--lexicon-strings``) with neighbour lists redrawn inside it: a step draws the
same number of strings either way, so its cost is unchanged, and the pack stays small enough to travel.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch


def _shrink_lexicon(lexicon, strings: int, seed: int = 0) -> None:
    """Keep ``strings`` random teacher rows; each row's neighbours are redrawn among them (same count per row)."""
    hood = lexicon.neighbourhoods
    if len(hood) <= strings:
        return
    rng = random.Random(seed)
    keep = sorted(rng.sample(range(len(hood)), strings))
    hood.strings = [hood.strings[i] for i in keep]
    hood.vectors = hood.vectors[torch.tensor(keep)].contiguous().clone()
    sizes = [len(hood.neighbours[i]) for i in keep]
    hood.neighbours = [
        [j for j in rng.sample(range(strings), size + 1) if j != row][:size] for row, size in enumerate(sizes)
    ]


def write_pack(out: Path, meta: dict, training: dict, model, task, lexicon_strings: int) -> Path:
    """Write the task's batch source (the GPU job's codec: JSON + arrays, without the model), the model's config
    and tokenizer and ``meta``.

    The task's lexicon term, if any, is shrunk in place to ``lexicon_strings`` rows first."""
    from phrasezoo.gpu_job.codec import write_task_state

    lexicon = getattr(getattr(task, "terms", None), "lexicon", None)  # the task's TeacherTerms, if it takes them
    if lexicon is not None:
        _shrink_lexicon(lexicon, lexicon_strings)
    out.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(out)
    model.tokenizer.save_pretrained(out / "tokenizer")  # beside no config.json: loading it runs no remote code
    try:
        write_task_state(task, model, out)
    except TypeError as error:
        raise SystemExit(
            f"{type(task).__name__} cannot be packed ({error}); time this recipe where its data caches are instead."
        ) from error
    meta = {
        **meta,
        "model_class": f"{type(model).__module__}.{type(model).__qualname__}",
        "task_class": f"{type(task).__module__}.{type(task).__qualname__}",
        "training": training,
        "lexicon strings kept": len(lexicon.neighbourhoods) if lexicon else None,
    }
    (out / "pack.json").write_text(json.dumps(meta, indent=1))
    return out


def pack(args: argparse.Namespace) -> None:
    from accelerate import Accelerator

    from phrasezoo.core.recipes import load_recipe
    from phrasezoo.training.loop import seed_everything
    from phrasezoo.zoo.registry import create_model, validate_recipe

    cfg = load_recipe(args.config, args.overrides)
    method = validate_recipe(cfg)
    accelerator = Accelerator(cpu=True)
    seed_everything(cfg.training.seed)
    model = create_model(cfg, accelerator)
    task = method.build_task(cfg, model, accelerator)
    meta = {"recipe": cfg.name, "overrides": args.overrides}
    out = write_pack(Path(args.to), meta, dataclasses.asdict(cfg.training), model, task, args.lexicon_strings)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20
    print(f"packed {cfg.name} ({task.num_examples()} training examples) into {out}: {size:.1f} MiB")


def _load_model(pack_dir: Path, class_path: str):
    from transformers import AutoTokenizer

    from phrasezoo.gpu_job.codec import import_class

    module_name, class_name = class_path.rsplit(".", 1)
    model_class = import_class(f"{module_name}:{class_name}")
    config = model_class.config_class.from_pretrained(pack_dir)
    model = model_class(config)
    model.set_tokenizer(AutoTokenizer.from_pretrained(pack_dir / "tokenizer"))
    return model


def time_device(pack_dir: Path, device: str, steps: int, warmup: int, threads: int | None) -> dict:
    """Train a fresh copy for ``steps`` steps on ``device``; seconds per step from the loop's own log."""
    from accelerate import Accelerator

    from phrasezoo.core.recipes import TrainingConfig
    from phrasezoo.gpu_job.codec import read_task_state
    from phrasezoo.training.loop import RunOptions, seed_everything, train

    meta = json.loads((pack_dir / "pack.json").read_text())
    training = dict(meta["training"])
    total = training["max_steps"]
    training.update(max_steps=steps, checkpoint_every=10**9, log_every=1, time_budget_minutes=None, num_threads=threads)
    cfg = TrainingConfig(**training)
    seed_everything(cfg.seed)
    model = _load_model(pack_dir, meta["model_class"])
    task = read_task_state(pack_dir, model)
    accelerator = Accelerator(cpu=device == "cpu")
    stamps: list[float] = []
    real_step = task.compute_loss

    def timed_loss(model_, batch):  # the loop's own work between two stamps is one whole step
        stamps.append(time.perf_counter())
        return real_step(model_, batch)

    task.compute_loss = timed_loss
    with tempfile.TemporaryDirectory() as scratch:
        result = train(model, task, cfg, RunOptions(Path(scratch), resume=False, progress=False), accelerator)
    trained_on = next(result.model.parameters()).device.type
    if trained_on != device:
        raise SystemExit(f"asked to time {device}, but the loop trained on {trained_on}.")
    if device == "cuda":
        torch.cuda.synchronize()
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][warmup:]
    if not gaps:
        raise SystemExit(f"--steps on {device} must exceed the {warmup} warm-up steps.")
    per_step = statistics.median(gaps)
    from phrasezoo.core.machine import cpu_name

    name = torch.cuda.get_device_name() if device == "cuda" else cpu_name()
    return {
        "device": device,
        "device name": name,
        "torch threads": torch.get_num_threads(),
        "cpu cores": os.cpu_count(),
        "steps run": result.steps,
        "steps timed (after warm-up)": len(gaps),
        "seconds per step (median)": round(per_step, 4),
        "recipe steps": total,
        "projected recipe minutes": round(per_step * total / 60, 2),
        "last losses (random weights: not a score)": {k: round(v, 3) for k, v in result.last_losses.items()},
    }


def time_all(args: argparse.Namespace) -> None:
    pack_dir = Path(args.pack)
    if len(args.steps) not in (1, len(args.devices)):
        raise SystemExit("--steps takes one number or one per device.")
    steps = args.steps * len(args.devices) if len(args.steps) == 1 else args.steps
    rows = []
    for device, n in zip(args.devices, steps, strict=True):
        if device == "cuda" and not torch.cuda.is_available():
            raise SystemExit("--devices names cuda, but torch sees no GPU here.")
        threads = args.cpu_threads if device == "cpu" else None
        # one process per device: Accelerate's state is a per-process singleton, so a second Accelerator in the
        # same process would keep the first one's device
        command = [sys.executable, __file__, "_one", str(pack_dir), device, str(n), str(args.warmup), str(threads or 0)]
        done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(json.dumps(row), flush=True)
    reference = rows[0]["seconds per step (median)"]
    for row in rows:
        row[f"speed-up over {rows[0]['device']}"] = round(reference / row["seconds per step (median)"], 1)
    report = {
        "benchmark": "benchmarks/speed_train.py",
        "pack": json.loads((pack_dir / "pack.json").read_text()),
        "date": dt.date.today().isoformat(),
        "torch": torch.__version__,
        "note": "random weights of the recipe's architecture on the recipe's real batches; time only",
        "runs": rows,
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n")


def render(reports: list[dict]) -> str:
    """A markdown table of the reports' runs, each with its speed-up over its own report's first run."""
    lines = [
        "| recipe | variant | device | torch threads | s / step | recipe steps | projected minutes | speed-up |",
        "|---|---|---|:---:|:---:|:---:|:---:|:---:|",
    ]
    dates = sorted({r["date"] for r in reports})
    for report in reports:
        meta = report["pack"]
        variant = ", ".join(meta.get("overrides", [])) or "the recipe"
        first = report["runs"][0]
        for run in report["runs"]:
            key = "speed-up over " + first["device"]
            speed_up = (
                f"{run[key]}x vs {first['device']} ({first['torch threads']} threads)"
                if run is not first
                else "reference"
            )
            lines.append(
                f"| {meta['recipe']} | {variant} | {run['device name']} ({run['cpu cores']} cores) | "
                f"{run['torch threads'] if run['device'] == 'cpu' else '-'} | {run['seconds per step (median)']:.3f} | "
                f"{run['recipe steps']} | {run['projected recipe minutes']:.1f} | {speed_up} |"
            )
    torch_versions = ", ".join(sorted({r["torch"] for r in reports}))
    lines += [
        "",
        f"Median seconds per training step after the warm-up steps, measured {', '.join(dates)} with torch "
        f"{torch_versions} by `benchmarks/speed_train.py` (the real loop, random weights of the recipe's shape, the "
        "recipe's real batches; a speed-up compares runs of one report, made in one call on one machine).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="write a recipe's real batch source, config and tokenizer (no weights)")
    p.add_argument("config", help="hub config name or path (uctopic-mini)")
    p.add_argument("--to", required=True, help="folder to write")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--lexicon-strings", type=int, default=6000, help="teacher rows kept for the lexicon term")
    t = sub.add_parser("time", help="time the real training loop on each device")
    t.add_argument("pack", help="folder written by pack")
    t.add_argument("--devices", nargs="+", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    t.add_argument("--steps", nargs="+", type=int, default=[20], help="steps per device (one number, or one each)")
    t.add_argument("--warmup", type=int, default=3, help="first steps left out of the timing")
    t.add_argument("--cpu-threads", type=int, default=None, help="torch threads on the CPU (default: all cores)")
    t.add_argument("--output", help="write the report as JSON here")
    r = sub.add_parser("render", help="a markdown table of reports written by time")
    r.add_argument("reports", nargs="+", help="JSON reports")
    r.add_argument("--readme", help="rewrite the <!-- speed-train:start --> block of this README instead of printing")
    o = sub.add_parser("_one")  # one device in a fresh process (used by time)
    for name, kind in (("pack", str), ("device", str), ("steps", int), ("warmup", int), ("threads", int)):
        o.add_argument(name, type=kind)
    args = parser.parse_args(argv)
    if args.command == "pack":
        pack(args)
    elif args.command == "time":
        time_all(args)
    elif args.command == "render":
        table = render([json.loads(Path(path).read_text()) for path in args.reports])
        if args.readme:
            from phrasezoo.core.files import write_readme_table

            write_readme_table(Path(args.readme), table, block="speed-train")
        else:
            print(table)
    else:
        row = time_device(Path(args.pack), args.device, args.steps, args.warmup, args.threads or None)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
