"""Give an exported PEARL model the lexical channel (issue 36's model-level option) and save it as a new folder.

The channel (``PearlModel.set_lexical_channel``) appends a hashed character n-gram TF-IDF vector to ``encode``; its
IDF comes from a corpus of names that are neither benchmark nor study items (``matching_dev.lexical_corpus``: the
wiki-leads titles and the embedded Wikipedia dump's link titles and anchors). Bucket count and weight default to the
values chosen on AutoFJ's dev datasets (``benchmarks/matching_dev.py embedded``). The new folder loads like any export
(``AutoModel.from_pretrained(folder, trust_remote_code=True)``), so the matcher comparison measures it as a plain
cosine:

    .venv/bin/python benchmarks/pearl_lexical_channel.py --model /path/to/pearl-mini --output /tmp/pearl-mini-lexical
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="an exported PEARL folder")
    parser.add_argument("--output", required=True, help="where to save the model with the lexical channel")
    parser.add_argument("--dim", type=int, default=2048, help="hash buckets (default 2048)")
    parser.add_argument("--weight", type=float, default=0.7, help="weight of the channel (default 0.7)")
    args = parser.parse_args()

    from matching_dev import lexical_corpus

    from phrasezoo.models.pearl.modeling_pearl import PearlModel

    # this repository's model code (an older export's copied code may predate the option); save_pretrained copies it
    model = PearlModel.from_pretrained(args.model).eval()
    corpus = lexical_corpus()
    model.set_lexical_channel(corpus, dim=args.dim, weight=args.weight)
    output = Path(args.output)
    model.save_pretrained(output)
    model.tokenizer.save_pretrained(output)
    for extra in Path(args.model).iterdir():  # model card, results files: copied as they are
        if extra.is_file() and not (output / extra.name).exists():
            shutil.copy(extra, output / extra.name)
    print(f"saved {output} (lexical channel: {args.dim} buckets, weight {args.weight}, IDF over {len(corpus)} names)")


if __name__ == "__main__":
    main()
