"""Dev-mention clustering of UCTopic checkpoints and baselines: which training step to keep, decided without labels
of any benchmark.

The dev mentions (:mod:`phrasezoo.methods.uctopic.dev_mentions`: spaCy PERSON/GPE+LOC/ORG mentions in wiki-leads
dev-split articles, silver types) are embedded in context and clustered with KMeans (k = number of types), the same
scoring as the CoNLL/BC5CDR context-clustering tasks (:func:`cluster_scores`). One JSON line per model:

    .venv/bin/python experiments/uctopic/dev_checkpoints.py --recipe uctopic-mini --run outputs/uctopic-mini \\
        --checkpoints step-000100 step-000200 step-000300 --baselines baseline:minilm-l6 \\
        > results/uctopic/experiments/uctopic-mini-dev-checkpoints.jsonl
    .venv/bin/python experiments/uctopic/dev_checkpoints.py --render results/uctopic/experiments/uctopic-mini-dev-checkpoints.jsonl \
        --readme README.md --block uctopic-mini-dev
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def render(rows: list[dict]) -> str:
    """Markdown: one line per scored model, NMI and accuracy x 100."""
    lines = ["| model | dev mentions | NMI | ACC |", "|---|:---:|:---:|:---:|"]
    for row in rows:
        lines.append(f"| {row['model']} | {row['n']} | {100 * row['dev_nmi']:.1f} | {100 * row['dev_acc']:.1f} |")
    lines += [
        "",
        "- KMeans (k = the number of silver types) on mentions embedded in context, as in the CoNLL/BC5CDR context-clustering "
        "tasks; the mentions are spaCy PERSON/GPE+LOC/ORG spans of wiki-leads dev-split articles, not a benchmark.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", help="recipe of the run (builds the model the checkpoints load into)")
    parser.add_argument("--run", help="training output folder with checkpoints/<step>/model.safetensors")
    parser.add_argument("--checkpoints", nargs="*", default=[], help="checkpoint folder names under <run>/checkpoints")
    parser.add_argument("--baselines", nargs="*", default=[], help="encoder specs scored as they are")
    parser.add_argument("--max-mentions", type=int, default=3000)
    parser.add_argument("--render", help="print (or with --readme, write) the markdown table of this JSONL output")
    parser.add_argument("--readme", help="README whose block --block gets the rendered table")
    parser.add_argument("--block", default="uctopic-mini-dev", help="README block name (<!-- NAME:start -->)")
    args = parser.parse_args(argv)
    if args.render:
        from phrasezoo.core.files import write_readme_table

        table = render([json.loads(line) for line in Path(args.render).read_text().splitlines() if line.strip()])
        if args.readme:
            write_readme_table(args.readme, table, args.block)
        print(table)
        return
    if args.checkpoints and not (args.recipe and args.run):
        parser.error("--checkpoints needs --recipe and --run.")

    import torch
    from safetensors.torch import load_file

    from phrasezoo.encoders import load_encoder
    from phrasezoo.evaluation.tasks.context_clustering import cluster_scores
    from phrasezoo.methods.uctopic.dev_mentions import load_dev_mentions

    raw = load_dev_mentions(max_mentions=args.max_mentions, progress=False)
    mentions = [(sentence, tuple(span)) for sentence, span in raw["mentions"]]
    gold, k = raw["labels"], len(raw["types"])

    def score(name: str, encoder) -> None:
        started = time.perf_counter()
        with torch.no_grad():
            vectors = encoder.encode_mentions(mentions)
        scores = cluster_scores(vectors, gold, k)
        row = {"model": name, "n": len(mentions), "k": k, **{f"dev_{m}": round(v, 6) for m, v in scores.items()}}
        print(json.dumps({**row, "seconds": round(time.perf_counter() - started, 1)}), flush=True)

    for spec in args.baselines:
        score(spec, load_encoder(spec, progress=False))
    if args.checkpoints:
        from phrasezoo.core.recipes import load_recipe
        from phrasezoo.zoo.registry import create_model

        model = create_model(load_recipe(args.recipe)).eval()
        for checkpoint in args.checkpoints:
            model.load_state_dict(load_file(f"{args.run}/checkpoints/{checkpoint}/model.safetensors"))
            score(f"{args.run}@{checkpoint}", load_encoder(model, name=checkpoint, progress=False))


if __name__ == "__main__":
    main()
