"""Are two safetensors files bitwise identical? Checks that a recipe and seed reproduce their weights.

    .venv/bin/python scripts/compare_weights.py outputs/phrase-bert-mini/checkpoints/step-000400/model.safetensors \
        /tmp/rerun/checkpoints/step-000400/model.safetensors

Exits 0 when every tensor is equal (same names, shapes, dtypes and values), 1 otherwise, listing what differs.
"""

import argparse
import sys

import torch
from safetensors.torch import load_file


def compare(first: str, second: str) -> list[str]:
    """Names of the tensors that differ (or exist in only one file); empty when the files hold the same weights."""
    a, b = load_file(first), load_file(second)
    differ = sorted(set(a) ^ set(b))
    differ += [k for k in sorted(set(a) & set(b)) if a[k].dtype != b[k].dtype or not torch.equal(a[k], b[k])]
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    args = parser.parse_args()
    differ = compare(args.first, args.second)
    total = sum(t.numel() for t in load_file(args.first).values())
    if differ:
        print(f"DIFFERENT: {len(differ)} tensor(s), e.g. {', '.join(differ[:5])}")
        sys.exit(1)
    print(f"identical: every tensor of {args.first} equals {args.second} ({total:,} values)")


if __name__ == "__main__":
    main()
