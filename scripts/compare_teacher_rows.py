"""Do two teacher caches hold the same bits for the strings they share? Checks that lazily embedded teacher rows are the
rows an eager pass gave (phrasezoo.objectives.teacher_rows), e.g. a cache filled by the main job before and after the change:

    .venv/bin/python scripts/compare_teacher_rows.py ~/.cache/phrasezoo/teacher /tmp/fresh-cache/teacher

Reads every ``*.npy`` matrix with its ``*.strings.json`` sidecar in both folders, per teacher (and precision), and
compares every string the two hold, bit for bit. Exits 0 when all shared rows are identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def read_rows(folder: Path) -> dict[str, dict[str, np.ndarray]]:
    """``{teacher tag: {string: row}}`` of a cache folder (a string in several files keeps its first row)."""
    rows: dict[str, dict[str, np.ndarray]] = {}
    for sidecar in sorted(folder.glob("*.strings.json")):
        matrix_path = sidecar.with_name(sidecar.name.removesuffix(".strings.json") + ".npy")
        if not matrix_path.exists():
            continue
        meta = json.loads(sidecar.read_text())
        matrix = np.load(matrix_path, mmap_mode="r")
        if matrix.shape[0] != len(meta["strings"]):
            continue
        found = rows.setdefault(meta["teacher"], {})
        for i, text in enumerate(meta["strings"]):
            if text not in found:
                found[text] = np.array(matrix[i])
    return rows


def compare(first: Path, second: Path) -> list[str]:
    """One line per teacher: strings in each cache, shared, identical; the largest difference where not."""
    a, b = read_rows(first), read_rows(second)
    lines = []
    for tag in sorted(set(a) | set(b)):
        left, right = a.get(tag, {}), b.get(tag, {})
        shared = sorted(set(left) & set(right))
        same = sum(np.array_equal(left[t], right[t]) for t in shared)
        worst = max((float(np.abs(left[t] - right[t]).max()) for t in shared), default=0.0)
        lines.append(
            f"{tag}: {len(left):,} rows in the first, {len(right):,} in the second, {len(shared):,} shared, "
            f"{same:,} identical" + ("" if same == len(shared) else f" (largest difference {worst:.3g})")
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path, help="a teacher cache folder, e.g. ~/.cache/phrasezoo/teacher")
    parser.add_argument("second", type=Path)
    args = parser.parse_args()
    lines = compare(args.first, args.second)
    print("\n".join(lines) or "no teacher rows in either folder")
    if any("largest difference" in line for line in lines):
        sys.exit(1)


if __name__ == "__main__":
    main()
