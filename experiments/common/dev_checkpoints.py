"""Dev-suite scores of a run's training checkpoints, blended with the starting weights (``WA``, comma-separated);
``TASKS`` names the dev tasks or groups (default: the suite's five; e.g. ``TASKS=benchmark-dev`` for the
benchmarks' own dev splits).

For choices that need a training run per value (e.g. the teacher's ``distill_weight``): train each value, then
score its checkpoints on the dev suite (never on the benchmarks) and keep the best.

    WA=0,0.25 .venv/bin/python experiments/common/dev_checkpoints.py pearl-mini outputs/pearl-mini-d3000 step-000250 \
        > results/pearl/experiments/pearl-mini-distill-weight-3000-dev.jsonl
"""

import json
import os
import sys

import torch
from safetensors.torch import load_file

from phrasezoo.core.recipes import load_recipe
from phrasezoo.evaluation.dev.suite import dev_scores_row, evaluate_dev
from phrasezoo.training.checkpoint import blend_with_initial
from phrasezoo.zoo.registry import create_model

recipe, outdir, *ckpts = sys.argv[1:]
was = [float(x) for x in os.environ.get("WA", "0").split(",")]
tasks = os.environ.get("TASKS") or None
cfg = load_recipe(recipe)
model = create_model(cfg)
initial = load_file(f"{outdir}/checkpoints/initial.safetensors")
for ck in ckpts:
    state = load_file(f"{outdir}/checkpoints/{ck}/model.safetensors")
    for w in was:
        model.load_state_dict(blend_with_initial(state, initial, w))
        with torch.no_grad():
            doc = evaluate_dev(model, tasks=tasks, progress=False)
        print(json.dumps({"run": outdir, "checkpoint": ck, "weight_average": w, **dev_scores_row(doc)}), flush=True)
