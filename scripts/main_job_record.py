"""Record one timed run of the main job (``bash scripts/run_main.sh`` on a fresh clone) and render its stage table.

The pipeline writes ``outputs/<recipe>-job-stages.json`` (each stage's start and length); a log of a run from
before that file existed gives the same rows from the stage table it printed at the end. The record,
``results/speed/main-job.json``, adds the commit, the machine and what the run was told about its caches; the block
``main-job-stages`` of ``docs/getting-started.md`` is rendered from it (``docs/blocks.yaml``).

    .venv/bin/python scripts/main_job_record.py --stages ../clone/outputs/pearl-mini-job-stages.json \
        --commit $(git -C ../clone rev-parse HEAD) --caches warm --output results/speed/main-job.json
    .venv/bin/python scripts/main_job_record.py --log main-job.log --commit ... --caches warm --output ...
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from phrasezoo.core.machine import cpu_name, usable_cores

ROW = re.compile(r"^(?P<stage>.+?)\s+(?P<start>\d+\.\d)\s+(?P<minutes>\d+\.\d)$")
TOTAL = re.compile(r"^total \(wall clock\)\s+(?P<minutes>\d+\.\d)$")


def stages_from_log(text: str) -> dict:
    """The stage table a pipeline run printed last (``stage | starts at (min) | minutes``, then the total)."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("stage ") and "starts at (min)" in line]
    if not heads:
        raise ValueError("no stage table in the log: did the main job finish?")
    stages, total = [], None
    for line in lines[heads[-1] + 1 :]:
        line = line.rstrip()
        if match := TOTAL.match(line):
            total = float(match["minutes"])
            break
        if match := ROW.match(line):
            stages.append({"stage": match["stage"].strip(), "starts_at_min": float(match["start"]),
                           "minutes": float(match["minutes"])})  # fmt: skip
    if total is None:
        raise ValueError("the stage table in the log has no total row")
    return {"stages": stages, "total_min": total}


def machine() -> dict:
    return {"cpu": cpu_name(), "cores": usable_cores(), "python": platform.python_version()}


def render(record: dict | str | Path = "results/speed/main-job.json") -> str:
    """The block (from the record or its path): when and where it ran, then the stage table."""
    if not isinstance(record, dict):
        record = json.loads(Path(record).read_text())
    lines = [f"Measured {record['date']} at commit `{record['commit'][:10]}` on {record['machine']['cores']} cores "
             f"({record['machine']['cpu']}), {record['caches']} caches, {record['conditions']}: "
             f"**{record['total_min']:.1f} minutes** in all, the install included.", "",
             "| stage | starts at (min) | minutes |", "|---|:---:|:---:|"]  # fmt: skip
    for row in record["stages"]:
        lines.append(f"| {row['stage']} | {row['starts_at_min']:.1f} | {row['minutes']:.1f} |")
    lines.append(f"| **total (wall clock)** | | **{record['total_min']:.1f}** |")
    return "\n".join(lines)


def summary(record: dict | str | Path = "results/speed/main-job.json") -> str:
    """One line for the README: the last timed run's total, where and how."""
    if not isinstance(record, dict):
        record = json.loads(Path(record).read_text())
    section = "with-cold-caches" if record["caches"] == "cold" else "quick-start-two-commands"
    return (f"The last timed run, on a fresh clone with {record['caches']} caches on {record['machine']['cores']} "
            f"CPU cores, took **{record['total_min']:.1f} minutes**, the install included "
            f"([stage table](docs/getting-started.md#{section})).")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--stages", help="outputs/<recipe>-job-stages.json of the run")
    source.add_argument("--log", help="the run's output (its last stage table is read)")
    parser.add_argument("--commit", required=True, help="the commit the fresh clone ran")
    parser.add_argument("--caches", choices=("warm", "cold"), required=True,
                        help="whether ~/.cache/phrasezoo and the pip cache held the data already")  # fmt: skip
    parser.add_argument("--conditions", default="nothing else running", help="what else ran on the machine")
    parser.add_argument("--output", default="results/speed/main-job.json")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.stages).read_text()) if args.stages else stages_from_log(Path(args.log).read_text())
    record = {"date": datetime.now(UTC).date().isoformat(), "commit": args.commit, "caches": args.caches,
              "conditions": args.conditions,
              "command": "bash scripts/run_main.sh (a fresh clone, ../shared beside it)", "machine": machine(),
              **data}  # fmt: skip
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(render(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
