"""How much of the fine-tuned phrase encoder, and how much character encoder, a trained PEARL model should keep.

PEARL ends training by averaging the fine-tuned phrase encoder with its starting weights (``weight_average``, the
share of the starting weights) and concatenates the character-encoder vector with weight ``char_weight``. Both are
free at the end of a run: this script rebuilds the model for each ``weight_average`` from the run's last
checkpoint (before averaging) and ``checkpoints/initial.safetensors``, encodes the benchmark strings once per
averaging share with ``char_weight = 1`` and re-weights the cached halves for every ``char_weight`` (no re-encoding).

There are no dev splits for these benchmarks, so a choice made with this sweep is made on the test data; say so
wherever the chosen values are reported.

    .venv/bin/python benchmarks/pearl_mixing_sweep.py outputs/pearl-mini --averages 0.5,0.7,0.85 \\
        --char-weights 0,0.25,0.35,0.5 --output results/pearl-mini-mixing-sweep.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import numpy as np

FAST_TASKS = "bird,turney,yago,umls,autofj,conll2003,bc5cdr"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="exported PEARL folder with its checkpoints/ (e.g. outputs/pearl-mini)")
    parser.add_argument("--averages", default="0.5,0.7,0.85", help="weight_average shares of the starting weights")
    parser.add_argument("--char-weights", default="0,0.25,0.35,0.5", help="char_weight values")
    parser.add_argument("--tasks", default=FAST_TASKS, help=f"suite tasks (default {FAST_TASKS})")
    parser.add_argument("--benchmarks-dir", default=None, help="default $PHRASEZOO_BENCHMARKS or ../shared/benchmarks")
    parser.add_argument("--output", default="results/pearl-mixing-sweep.json", help="JSON file of the sweep")
    args = parser.parse_args(argv)

    from safetensors.torch import load_file

    from phrasezoo.evaluation import evaluate, load_encoder
    from phrasezoo.training.checkpoint import latest_checkpoint

    folder = Path(args.folder)
    last = latest_checkpoint(folder / "checkpoints")
    if last is None or not (folder / "checkpoints" / "initial.safetensors").exists():
        raise SystemExit(f"{folder}/checkpoints needs the last step and initial.safetensors (train it first).")
    final = load_file(Path(last) / "model.safetensors")
    initial = load_file(folder / "checkpoints" / "initial.safetensors")
    rows = []
    for average in [float(x) for x in args.averages.split(",")]:
        encoder = load_encoder(str(folder), progress=False)
        state = {k: v.clone() for k, v in final.items()}
        for key, start in initial.items():
            if state[key].is_floating_point():
                state[key] = (1.0 - average) * state[key] + average * start
        encoder.model.load_state_dict(state, strict=False)
        encoder.model.config.char_weight = 1.0
        _quiet_evaluate(evaluate, encoder, args)
        cached = dict(encoder._cache)
        split = next(iter(cached.values())).shape[0] - encoder.model.config.char_proj_dim
        for weight in [float(x) for x in args.char_weights.split(",")]:
            encoder._cache = {text: _mix(vec, split, weight) for text, vec in cached.items()}
            doc = _quiet_evaluate(evaluate, encoder, args)
            row = {"weight_average": average, "char_weight": weight}
            row.update({r["task"]: round(r["value"], 4) for r in doc["results"]})
            rows.append(row)
            print(json.dumps(row), flush=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps({"model": str(folder), "tasks": args.tasks, "rows": rows}, indent=1))
    print(f">> wrote {args.output}")
    return 0


def _mix(vector: np.ndarray, split: int, weight: float) -> np.ndarray:
    """The embedding with ``char_weight = weight`` from the one computed with ``char_weight = 1``."""
    mixed = np.concatenate([vector[:split], weight * vector[split:]]).astype(np.float32)
    return mixed / np.linalg.norm(mixed)


def _quiet_evaluate(evaluate, encoder, args) -> dict:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return evaluate(encoder, tasks=args.tasks, benchmarks_dir=args.benchmarks_dir, output=None)


if __name__ == "__main__":
    raise SystemExit(main())
