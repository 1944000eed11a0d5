"""``phrasezoo device pack|table|call|run|unpack`` (also ``python -m phrasezoo.gpu_job ...``, which needs no install:
the GPU machine runs it from the source tree with ``PYTHONPATH=src``): the GPU job's commands.

Light on purpose: the ``phrasezoo`` parser imports this module for every command, and ``run --forbid-imports``
must make the data libraries unimportable before torch, transformers or the training code load. So each step's
module is imported when that step runs, and only then.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from phrasezoo import gpu_job
from phrasezoo.gpu_job.travel import DEFAULT_DEVICE_MINUTES, DEFAULT_MAX_MIB, DEFAULT_TIMEOUT_S

PACKS_RECORD = Path("results") / "gpu-job" / "device-packs.json"
#: libraries the machine lacks; ``--forbid-imports`` makes them unimportable here too, to prove a pack needs none
DATA_LIBRARIES = ("datasets", "spacy", "faiss")

EPILOG = """examples:
  phrasezoo device pack codebook-phrase-gpu              pack into .devicepack/codebook-phrase-gpu/, self-test, print the call
  phrasezoo device call .devicepack/codebook-phrase-gpu  print the run tool call of an existing pack again
  PYTHONPATH=src python3 -m phrasezoo.gpu_job run .devicepack/codebook-phrase-gpu --out $OUT   (on the GPU machine)
  phrasezoo device unpack <files_at> --recipe codebook-phrase-gpu   reassemble, select, compare on dev, evaluate, card
"""


def forbid_imports(names: tuple[str, ...] = DATA_LIBRARIES) -> None:
    """Make ``names`` unimportable in this process, as on a machine without them (``import`` fails,
    ``importlib.util.find_spec`` returns None). Refuses when one is already imported."""
    loaded = [n for n in names if sys.modules.get(n) is not None]
    if loaded:
        raise RuntimeError(f"{loaded} already imported: forbid them before anything else is imported.")
    for name in names:
        sys.modules[name] = None  # type: ignore[assignment]


# ------------------------------------------------------------------------------------------- the steps, lazily
def _pack(args: argparse.Namespace) -> int:
    """``pack``: :func:`phrasezoo.gpu_job.pack.pack_command`."""
    from phrasezoo.gpu_job.pack import pack_command  # lazy: torch, the training code; not before `run` blocks

    return pack_command(args)


def _table(args: argparse.Namespace) -> int:
    """``table``: :func:`phrasezoo.gpu_job.table.table_command`."""
    from phrasezoo.gpu_job.table import table_command  # lazy: the evaluation workflow, for the table only

    return table_command(args)


def _call(args: argparse.Namespace) -> int:
    """``call``: :func:`phrasezoo.gpu_job.calls.call_command`."""
    from phrasezoo.gpu_job.calls import call_command  # lazy: torch, the training code; not before `run` blocks

    return call_command(args)


def _run(args: argparse.Namespace) -> int:
    """``run``: :func:`phrasezoo.gpu_job.on_device.run_command`."""
    from phrasezoo.gpu_job.on_device import run_command  # lazy: torch and transformers, after --forbid-imports

    return run_command(args)


def _unpack(args: argparse.Namespace) -> int:
    """``unpack``: :func:`phrasezoo.gpu_job.unpack.unpack_command`."""
    from phrasezoo.gpu_job.unpack import unpack_command  # lazy: the main job and the evaluation workflow

    return unpack_command(args)


# --------------------------------------------------------------------------------------------------- parser
def register(subparsers) -> None:
    """Add ``device`` with its ``pack``, ``table``, ``call``, ``run`` and ``unpack`` steps to the ``phrasezoo`` CLI."""
    device = subparsers.add_parser(
        "device",
        help="the GPU job: pack a recipe here, run it on a lent GPU, unpack the weights here",
        description=gpu_job.__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(device)
    device.set_defaults(func=dispatch)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The steps as subcommands of ``parser``."""
    sub = parser.add_subparsers(dest="device_command", required=True, metavar="STEP")
    for add in (_add_pack, _add_table, _add_call, _add_run, _add_unpack):
        add(sub)


def _add_pack(sub) -> None:
    """``pack``: here, before the lease."""
    pack = sub.add_parser("pack", help="pack a recipe into .devicepack/<name>/, self-test it, print the run call")
    pack.add_argument("config", help="recipe name or path, e.g. codebook-phrase-gpu")
    pack.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                      help="override a recipe value (recorded in the pack and reapplied by unpack)")  # fmt: skip
    pack.add_argument("--to", help="pack folder (default .devicepack/<name>; .devicepack/ is git-ignored)")
    pack.add_argument("--row-cut", choices=["auto", "on", "off"], default="auto",
                      help="ship only the vocabulary rows the run reads: auto = only when needed to fit")  # fmt: skip
    pack.add_argument("--max-mib", type=float, default=DEFAULT_MAX_MIB, help="size limit of the pack (default 55 MiB)")
    pack.add_argument("--device-minutes", type=float, default=DEFAULT_DEVICE_MINUTES,
                      help="safety budget of the GPU run's training, all seeds together (default 6.5 min)")  # fmt: skip
    pack.add_argument("--timeout-s", type=int, default=DEFAULT_TIMEOUT_S, help="timeout_s of the printed call")
    pack.add_argument("--no-selftest", action="store_true", help="skip the two-step CPU run from the pack alone")
    pack.add_argument("--no-progress", action="store_true", help="no progress bars")
    pack.add_argument("--record", default=str(PACKS_RECORD),
                      help="add the pack's facts and call to this record (default results/gpu-job/device-packs.json; '' for none)")  # fmt: skip
    pack.set_defaults(step=_pack)


def _add_table(sub) -> None:
    """``table``: the docs' table of packs."""
    table = sub.add_parser("table", help="the docs' table of packs and their run calls, from the packs record")
    table.add_argument("--record", default=str(PACKS_RECORD))
    table.add_argument(
        "--readme", help="rewrite the <!-- gpu-job-packs:start --> block of this file instead of printing"
    )
    table.set_defaults(step=_table)


def _add_call(sub) -> None:
    """``call``: check an existing pack."""
    call = sub.add_parser("call", help="check an existing pack (files, size, recipe, one CPU step), print its call")
    call.add_argument("pack", help="pack folder, e.g. .devicepack/codebook-phrase-gpu")
    call.add_argument("--max-mib", type=float, default=DEFAULT_MAX_MIB)
    call.add_argument("--timeout-s", type=int, default=DEFAULT_TIMEOUT_S)
    call.add_argument("--no-selftest", action="store_true", help="skip the one-step CPU run from the pack alone")
    call.set_defaults(step=_call)


def _add_run(sub) -> None:
    """``run``: on the GPU machine."""
    run = sub.add_parser("run", help="train a pack (on the GPU machine) and write what comes back to --out")
    run.add_argument("pack", help="pack folder")
    run.add_argument("--out", required=True, help="folder for the shards, loss log and manifest ($OUT there)")
    run.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    run.add_argument("--max-steps", type=int, help="fewer steps per seed than planned (a check, not the recipe)")
    run.add_argument("--budget-minutes", type=float,
                     help="safety stop for all seeds' training (default: the pack's; 0: none)")  # fmt: skip
    run.add_argument("--forbid-imports", action="store_true",
                     help="make datasets, spaCy and faiss unimportable first, as on the GPU machine")  # fmt: skip
    run.add_argument("--progress", action="store_true", help="the loop's progress bar (else a line every 10%%)")
    run.set_defaults(step=_run)


def _add_unpack(sub) -> None:
    """``unpack``: here, after the lease."""
    unpack = sub.add_parser("unpack", help="reassemble a run's shards here; select, compare on dev, evaluate, card")
    unpack.add_argument("source", help="folder holding the run's returned files (the run tool's files_at)")
    unpack.add_argument("--recipe", help="the recipe you expect (checked against the run's)")
    unpack.add_argument(
        "--benchmarks-dir", help="benchmark data (default $PHRASEZOO_BENCHMARKS or ../shared/benchmarks)"
    )
    unpack.add_argument("--reuse-baselines", action="store_true", help="read baselines from results/ where present")
    unpack.add_argument("--no-eval", action="store_true", help="export and card only: no dev selection or evaluation")
    unpack.add_argument(
        "--as-packed", action="store_true", help="unpack under the packed recipe though the file changed"
    )
    unpack.add_argument("--no-progress", action="store_true")
    unpack.set_defaults(step=_unpack)


def dispatch(args: argparse.Namespace) -> int:
    """Run the step ``args`` names (after ``--forbid-imports`` and ``--no-progress`` took effect)."""
    if getattr(args, "forbid_imports", False):
        forbid_imports()
    if getattr(args, "no_progress", False):
        os.environ["TQDM_DISABLE"] = "1"
    return args.step(args)


def main(argv: list[str] | None = None) -> int:
    """``python -m phrasezoo.gpu_job``."""
    parser = argparse.ArgumentParser(
        prog="python -m phrasezoo.gpu_job", description=gpu_job.__doc__, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    add_arguments(parser)
    return dispatch(parser.parse_args(argv))
