"""Score distillation teachers on the dev suite: single encoders and blends ``{encoder: weight}``.

A blend's vector of a phrase joins its encoders' unit vectors as ``[sqrt(w1) a, sqrt(w2) b]`` (weights summing to
1), which is exactly what :func:`phrasezoo.objectives.teacher.teacher_embeddings` gives the teacher term: its cosines are the
weighted mean of the encoders' cosines. So the dev score of a blend is the dev score of the teacher a recipe would
distil from. Each encoder embeds a string once per run (the encoders' caches are shared by every blend). It reads
no test benchmark.

    .venv/bin/python experiments/common/teacher_blend_dev.py --encoders mpnet-base minilm-l6 --weights 1 0.75 0.5 0.25 0 \\
        --tasks dev_paraphrase,dev_description,dev_topics,dev_fuzzy,dev_wordsim,dev_compound,dev_alias,dev_conll,dev_bc5cdr \\
        --output results/experiments/teacher-blend-dev.jsonl
    .venv/bin/python experiments/common/dev_compare.py --render results/experiments/teacher-blend-dev.jsonl --readme README.md \
        --block teacher-blend-dev
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from phrasezoo.core.files import atomic_write_text
from phrasezoo.encoders import load_encoder
from phrasezoo.encoders.base import Encoder
from phrasezoo.evaluation.dev.suite import evaluate_dev
from phrasezoo.objectives.teacher import blend_weights, teacher_label


class BlendEncoder(Encoder):
    """The teacher-term geometry of a blend: encoders' unit rows joined with sqrt(weight) factors."""

    def __init__(self, parts: dict[str, Encoder], weights: dict[str, float]) -> None:
        super().__init__(teacher_label(weights), revision="blend", progress=False)
        self.parts, self.weights = parts, blend_weights(weights)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.concatenate([np.sqrt(w) * self.parts[name].encode(texts) for name, w in self.weights.items()], 1)


def blend_rows(encoders: list[str], first_weights: list[float], tasks: list[str]) -> list[dict]:
    """One row per weight ``w`` of the first encoder (the second gets ``1 - w``; 1 and 0 are the encoders alone)."""
    if len(encoders) != 2:
        raise SystemExit("--encoders takes two encoders: the teacher and the encoder blended into it.")
    parts = {name: load_encoder(f"baseline:{name}", progress=False) for name in encoders}
    rows = []
    for w in first_weights:
        if not 0.0 <= w <= 1.0:
            raise SystemExit(f"--weights are the first encoder's share, between 0 and 1; got {w}.")
        spec = {name: share for name, share in zip(encoders, (w, 1.0 - w), strict=True) if share > 0}
        doc = evaluate_dev(BlendEncoder(parts, spec), tasks, progress=False)
        label = teacher_label(spec) if len(spec) > 1 else next(iter(spec))
        rows.append(
            {
                "run": " + ".join(f"baseline:{name}" for name in spec),  # dev_compare.py --render's columns
                "variant": f"teacher {label}",
                "teacher": label,
                "weights": blend_weights(spec),
                "dev_tasks": doc["dev_avg_tasks"],
                "dev_avg": doc["dev_avg"],
                **{name: entry["score"] for name, entry in doc["tasks"].items()},
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoders", nargs=2, required=True, metavar="NAME", help="teacher, then the blended-in one")
    parser.add_argument("--weights", nargs="+", type=float, required=True, help="the first encoder's shares")
    parser.add_argument("--tasks", required=True, help="comma-separated dev tasks (a recipe's select_on_dev.tasks)")
    parser.add_argument("--output", type=Path, help="write the rows here as JSON lines")
    args = parser.parse_args(argv)
    rows = blend_rows(args.encoders, args.weights, [t.strip() for t in args.tasks.split(",") if t.strip()])
    if args.output:
        atomic_write_text(args.output, "".join(json.dumps(row) + "\n" for row in rows))


if __name__ == "__main__":
    main()
