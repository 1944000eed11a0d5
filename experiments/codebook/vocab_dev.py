"""Dev-suite scores of a codebook run's checkpoint read with a larger input vocabulary (``data.extra_vocabulary``).

Words that the small training corpus leaves out of a min-count vocabulary are ``<unk>`` to the model. Adding the
most frequent word-vector words changes nothing for the words the model was trained on (their ids and rows stay);
the added rows start from their word vectors, as they would in training, where they never occur. So one checkpoint
scores every candidate size on the dev suite (never on the benchmarks), and the recipe keeps the best:

    .venv/bin/python experiments/codebook/vocab_dev.py codebook-phrase-mini outputs/codebook-phrase-mini step-000500 \
        0 50000 100000 200000 > results/codebook/experiments/codebook-phrase-vocabulary-dev.jsonl
"""

import json
import sys

import torch
from safetensors.torch import load_file

from phrasezoo.core.recipes import load_recipe
from phrasezoo.evaluation.dev.suite import dev_scores_row, evaluate_dev
from phrasezoo.zoo.registry import create_model

recipe, outdir, checkpoint, *sizes = sys.argv[1:]
trained = load_file(f"{outdir}/checkpoints/{checkpoint}/model.safetensors")
n_trained = trained["word_embeddings.weight"].shape[0]
for size in sizes:
    model = create_model(load_recipe(recipe, [f"data.extra_vocabulary={size}"]))
    own, state = model.state_dict(), dict(trained)
    for key in ("word_embeddings.weight", "target_vectors", "word_probs"):
        rows = own[key].clone()  # the larger model's own rows: word vectors, targets, p(w)
        if key == "word_embeddings.weight":
            rows[:n_trained] = trained[key]  # the trained words keep their trained rows (same ids)
        state[key] = rows
    model.load_state_dict(state)
    with torch.no_grad():
        doc = evaluate_dev(model, progress=False)
    row = {
        "run": outdir,
        "checkpoint": checkpoint,
        "extra_vocabulary": int(size),
        "vocabulary": model.config.vocab_size,
    }
    print(json.dumps({**row, **dev_scores_row(doc)}), flush=True)
