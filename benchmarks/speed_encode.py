"""Phrases per second of ``PearlModel.encode`` against sentence-transformers' ``encode`` on the same backbone.

Both encoders embed the same real phrases (AutoFJ titles: the heaviest workload of the benchmark suite) with the
same batch size, in the same process, alternating runs so that machine load affects both alike; the median of
``--repeats`` timed runs after one warm-up run each is reported, with the ratio PEARL / sentence-transformers.
PEARL does more work per phrase (its character encoder); the ratio says whether it pays for it.

    .venv/bin/python benchmarks/speed_encode.py                      # fresh PEARL on the embedded MiniLM
    .venv/bin/python benchmarks/speed_encode.py --model outputs/pearl-mini --output results/speed/speed-encode.json
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path

import torch


def load_phrases(n: int, seed: int = 0) -> list[str]:
    """``n`` unique AutoFJ left-table titles, shuffled with a fixed seed."""
    import autofj

    root = Path(autofj.__file__).parent / "benchmark"
    titles: list[str] = []
    for table in sorted(root.glob("*/left.csv")):
        with open(table, encoding="utf8") as handle:
            titles.extend(row["title"] for row in csv.DictReader(handle) if row["title"].strip())
    titles = list(dict.fromkeys(titles))
    random.Random(seed).shuffle(titles)
    return titles[:n]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="exported PEARL folder (default: a fresh PEARL model on --backbone)")
    parser.add_argument("--backbone", default="minilm-l6", help="backbone of both encoders (default minilm-l6)")
    parser.add_argument("--n", type=int, default=4000, help="number of phrases (default 4000)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", help="write the measurements as JSON here")
    parser.add_argument("--readme", help="also rewrite the <!-- speed:start --> block of this README")
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    from phrasezoo.models.pearl.modeling_pearl import PearlModel
    from phrasezoo.resources import resolve_backbone

    backbone = resolve_backbone(args.backbone)
    if args.model:
        pearl = AutoModel.from_pretrained(args.model, trust_remote_code=True)
    else:
        pearl = PearlModel.from_backbone(backbone)
    pearl.eval()
    st = SentenceTransformer(backbone, device="cpu")
    phrases = load_phrases(args.n)

    runners = {
        "pearl": lambda: pearl.encode(phrases, batch_size=args.batch_size, show_progress_bar=False),
        "sentence_transformers": lambda: st.encode(phrases, batch_size=args.batch_size, show_progress_bar=False),
    }
    for run in runners.values():  # warm-up
        run()
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(args.repeats):
        for name, run in runners.items():
            seconds[name].append(timed(run))
    rate = {name: len(phrases) / statistics.median(values) for name, values in seconds.items()}
    ratio = rate["pearl"] / rate["sentence_transformers"]
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchmark": "PearlModel.encode vs SentenceTransformer.encode, same backbone, phrases and batch size",
        "alternative": f"sentence-transformers {__import__('sentence_transformers').__version__} SentenceTransformer.encode",
        "model": args.model or f"fresh PEARL on {args.backbone}",
        "backbone": args.backbone,
        "n_phrases": len(phrases),
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "torch_threads": torch.get_num_threads(),
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "seconds": seconds,
        "phrases_per_second": {k: round(v, 1) for k, v in rate.items()},
        "ratio_pearl_over_sentence_transformers": round(ratio, 3),
    }
    print(json.dumps(report, indent=1))
    print(
        f"\nPEARL {rate['pearl']:.0f} phrases/s vs sentence-transformers {rate['sentence_transformers']:.0f} "
        f"phrases/s: ratio {ratio:.2f}x ({len(phrases)} phrases, batch {args.batch_size}, median of {args.repeats})"
    )
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(report, indent=1))
    if args.readme:
        from phrasezoo.core.files import write_readme_table

        write_readme_table(Path(args.readme), speed_table(report), block="speed")


def speed_table(report: dict) -> str:
    """The README's speed block, generated from a measurement."""
    rate = report["phrases_per_second"]
    return (
        "| encoder | phrases / s | ratio |\n|---|---|---|\n"
        f"| `PearlModel.encode` ({report['model']}) | {rate['pearl']:.0f} | "
        f"{report['ratio_pearl_over_sentence_transformers']:.2f}x |\n"
        f"| {report['alternative']} | {rate['sentence_transformers']:.0f} | 1.00x |\n\n"
        f"{report['n_phrases']} AutoFJ titles, batch {report['batch_size']}, median of {report['repeats']} alternating "
        f"runs, {report['torch_threads']} torch threads on {report['machine']}, measured {report['created'][:10]} "
        "with `.venv/bin/python benchmarks/speed_encode.py`."
    )


if __name__ == "__main__":
    main()
