"""Rows per second of the default matcher (``model="hybrid"``: MiniLM in int8 by ONNX Runtime since round 8), the same
matcher with the torch fp32 encoder (``model="hybrid:baseline:minilm-l6"``, the default until round 8) and MiniLM
alone (``model="baseline:minilm-l6"``, torch).

All join the same tables in the same process, one thread each, alternating runs so that machine load affects both
alike: every AutoFJ dev-10 table (fit on the left table, search every right row), the encoders' string caches
cleared before each run, so every run encodes everything it reads. A row is a right-table row joined; the median of
``--repeats`` timed runs after one warm-up run is reported, with the ratios between them (issue 43 asks for default /
MiniLM at least 0.8; issue 47 for the default at least 2x the torch default of wave 3).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed_match.py --repeats 3 --output results/speed/speed-match.json

``--extra SPEC`` adds a matcher to the alternation (its ratio to the default is reported) and ``--tables N`` keeps
the first N dev tables, for a slow option such as ``hybrid:baseline:nomic-v1.5`` (a base-size encoder):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed_match.py --repeats 1 --tables 3 --no-torch \
        --extra hybrid:baseline:nomic-v1.5 --output results/speed/speed-match-nomic.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import time
from pathlib import Path

DEFAULT, TORCH, MINILM = "default (hybrid, int8 encoder)", "torch encoder (hybrid:baseline:minilm-l6)", "MiniLM alone"
BEFORE = "default without its decision (before issue 64)"
RATIOS = ((DEFAULT, MINILM), (TORCH, MINILM), (DEFAULT, TORCH))


def run_once(matcher_factory, tables) -> tuple[float, int]:
    """Seconds to fit and search every table with fresh matchers (string caches cleared), and rows joined."""
    rows, start = 0, time.perf_counter()
    for table in tables:
        matcher = matcher_factory()
        matcher.fit(table.left)
        matcher.search(table.right, top_k=1)
        rows += len(table.right)
        matcher.scorer.clear_cache()
    return time.perf_counter() - start, rows


def main() -> None:
    import torch

    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj
    from phrasezoo.match import Matcher

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--extra", action="append", default=[], help="another matcher spec to time (repeatable)")
    parser.add_argument("--tables", type=int, default=0, help="only the first N AutoFJ dev tables (default: all 10)")
    parser.add_argument("--no-torch", action="store_true", help="leave the torch-encoder row out")
    parser.add_argument("--before-decision", action="store_true",
                        help="add the default without its open-world decision (the matcher before issue 64: same "
                             "ranking, no self-join at fit, no neighbour inputs at search)")  # fmt: skip
    args = parser.parse_args()
    torch.set_num_threads(1)
    tables = read_autofj(autofj_names("dev"))
    tables = tables[: args.tables] if args.tables else tables
    matchers = {DEFAULT: Matcher(progress=False)}
    if not args.no_torch:
        matchers[TORCH] = Matcher("hybrid:baseline:minilm-l6", progress=False)
    matchers[MINILM] = Matcher("baseline:minilm-l6", progress=False)
    if args.before_decision:
        matchers[BEFORE] = Matcher(progress=False)
        matchers[BEFORE].scorer.decision = None
    for spec in args.extra:
        matchers[spec] = Matcher(spec, progress=False)
    ratios = RATIOS + ((DEFAULT, BEFORE),) + tuple((spec, DEFAULT) for spec in args.extra)
    factories = {name: (lambda m=m: m) for name, m in matchers.items()}
    times: dict[str, list[float]] = {name: [] for name in factories}
    rows = 0
    for repeat in range(args.repeats + 1):
        for name, factory in factories.items():
            seconds, rows = run_once(factory, tables)
            if repeat:  # the first run of each warms up
                times[name].append(seconds)
    rates = {name: rows / statistics.median(values) for name, values in times.items()}
    report = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, 1 thread",
        "workload": f"AutoFJ dev ({len(tables)} tables): {sum(len(t.left) for t in tables)} left and {rows} right rows, fit + search",
        "rows_per_second": {name: round(rate, 1) for name, rate in rates.items()},
        "seconds": {name: [round(v, 2) for v in values] for name, values in times.items()},
        "ratio_default_over_minilm": round(rates[DEFAULT] / rates[MINILM], 3),
        "ratios": {f"{a} / {b}": round(rates[a] / rates[b], 3) for a, b in ratios if a in rates and b in rates},
        "command": "OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed_match.py " + _flags(args),
    }
    print(json.dumps(report, indent=1))
    if args.output:
        args.output.write_text(json.dumps(report, indent=1) + "\n")


def _flags(args) -> str:
    """The command line's options, for the report."""
    flags = [f"--repeats {args.repeats}"] + (["--no-torch"] if args.no_torch else [])
    flags += ["--before-decision"] if args.before_decision else []
    flags += [f"--tables {args.tables}"] if args.tables else []
    flags += [f"--extra {spec}" for spec in args.extra]
    return " ".join(flags + [f"--output {args.output}" if args.output else ""]).strip()


def render(report: dict) -> str:
    """The speed table of docs/fuzzy-joins.md."""
    workload = report.get("workload", "AutoFJ dev-10")
    tables = "AutoFJ dev-10" if "dev-10" in workload or "(10 tables)" in workload else workload.split(":")[0]
    lines = [f"| matcher | rows/s ({tables}, fit + search, 1 thread) |", "|---|---:|"]
    lines += [f"| {name} | {rate:.1f} |" for name, rate in report["rows_per_second"].items()]
    ratios = report.get("ratios") or {"default (hybrid) / MiniLM alone": report["ratio_default_over_minilm"]}
    return "\n".join(lines) + (
        "\n\n" + "; ".join(f"{name}: **{value:.2f}**" for name, value in ratios.items()) + " (median of "
        f"{len(next(iter(report['seconds'].values())))} runs each, alternating, in one process; "
        f"{report['machine']}; `{report['command']}`, {report['created'][:10]})."
    )


if __name__ == "__main__":
    main()
