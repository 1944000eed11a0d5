"""Dev-suite scores of a codebook run's checkpoints ("Ours Emb", the mean encoder state) next to the GloVe average.

Answers "does training longer make the phrase model's Emb better than averaging its word vectors?" without
touching the benchmarks: the dev suite is disjoint from Turney, BiRD and the held-out reconstruction documents.
``--set`` overrides the recipe the checkpoints were trained with (e.g. a longer trial run of an older recipe).

    .venv/bin/python experiments/codebook/dev_curve.py codebook-phrase-mini RUN_DIR step-000500 step-001000 \
        --set data.extra_vocabulary=0 --set training.max_steps=1500 > results/codebook/experiments/codebook-phrase-dev-curve.jsonl
    .venv/bin/python experiments/codebook/dev_curve.py codebook-phrase-mini outputs/codebook-phrase-mini step-000200 \
        --no-reference >> results/codebook/experiments/codebook-phrase-dev-curve.jsonl       # the recipe's own run
"""

import argparse
import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from phrasezoo.core.recipes import load_recipe
from phrasezoo.evaluation.dev.suite import dev_scores_row, evaluate_dev
from phrasezoo.methods.codebook.tasks.phrases import glove_average
from phrasezoo.zoo.registry import create_model


class GloveAverage:
    """The baseline the phrase claims are measured against: unit mean of unit GloVe vectors (lowercased words)."""

    def encode(self, texts: list[str], **_) -> torch.Tensor:
        return torch.from_numpy(glove_average([t.lower() for t in texts]))


def row(label: dict, encoder) -> dict:
    with torch.no_grad():
        doc = evaluate_dev(encoder, progress=False)
    return {**label, **dev_scores_row(doc)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recipe")
    parser.add_argument("run_dir", help="a training output folder (its checkpoints/ are read)")
    parser.add_argument("checkpoints", nargs="+", help="checkpoint folder names, e.g. step-000500")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="recipe override")
    parser.add_argument("--no-reference", action="store_true", help="skip the GloVe-average row (when appending)")
    args = parser.parse_args()
    if not args.no_reference:
        print(json.dumps(row({"model": "glove-6b-50d average"}, GloveAverage())), flush=True)
    model = create_model(load_recipe(args.recipe, args.set))
    for checkpoint in args.checkpoints:
        state = load_file(f"{args.run_dir}/checkpoints/{checkpoint}/model.safetensors")
        model.load_state_dict(state)
        steps = json.loads(Path(args.run_dir, "checkpoints", checkpoint, "trainer_state.json").read_text()).get("step")
        label = {"model": args.recipe, "overrides": args.set, "checkpoint": checkpoint, "step": steps}
        print(json.dumps(row(label, model)), flush=True)


if __name__ == "__main__":
    main()
