"""The dev splits of the clustering benchmarks (``conll2003/dev.jsonl``, ``bc5cdr/dev.jsonl`` beside the test files),
read as they are for the dev suite's benchmark-dev tasks: the official splits are disjoint from the reported test
items, so a choice that must track CoNLL/BC5CDR clustering is made there instead of on a proxy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from phrasezoo.data.benchmark_filter import default_benchmarks_dir

from ..tasks.clustering import read_ner_jsonl
from ..tasks.context_clustering import read_ner_mentions

#: benchmark folder, its types (the test task's), for the dev-split tasks
BENCHMARK_DEV_SETS = {"conll2003": ["PER", "LOC", "ORG"], "bc5cdr": ["Chemical", "Disease"]}


def load_benchmark_dev(benchmarks_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """The dev splits of the clustering benchmarks: ``{"<folder>_mentions": MentionClusteringData, "<folder>":
    ClusteringData}`` per folder of :data:`BENCHMARK_DEV_SETS` (``FileNotFoundError`` names the folder to set)."""
    bench = Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    out: dict[str, Any] = {}
    for folder, types in BENCHMARK_DEV_SETS.items():
        path = bench / folder / "dev.jsonl"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: the benchmark-dev tasks read the benchmarks' dev splits; point benchmarks_dir "
                "or $PHRASEZOO_BENCHMARKS at the folder holding conll2003/ and bc5cdr/ (e.g. ../shared/benchmarks)."
            )
        out[f"{folder}_mentions"] = read_ner_mentions(path, types)
        out[folder] = read_ner_jsonl(path, types)
    return out
