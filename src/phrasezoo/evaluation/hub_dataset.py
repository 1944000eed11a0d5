"""Loader for the Hub dataset ``Lihuchen/pearl_benchmark`` (the PEARL authors' copy of the nine tasks).

For users with a network: ``evaluate(..., source="hub")`` reads the PEARL tasks with ``datasets.load_dataset``; each
task converts its rows to its internal format (``Task.from_hub_rows``), so the scoring code is the same as for the
local files. This module reads rows and holds the small converters the tasks share.

Layout of the Hub dataset (configs from its README; columns as read by the authors' own evaluation script):

=============== ============ ===============================================================
config          split        columns
=============== ============ ===============================================================
bird            test         term1, term2, relatedness score (+ the other BiRD columns)
turney          test         query, label (the answer), candidate_1 .. candidate_4
ppdb            test         phrase_1, phrase_2, label ("pos"/"neg")
ppdb_filtered   test         phrase_1, phrase_2, label
yago            test         query (mention), label (canonical name)
umls            umls         query, label
conll, bc5cdr   test         entity (mention string), label (type)
autofj          test         Dataset (names of the 50 AutoFJ datasets; tables come from PyPI ``autofj``)
kb              yago, umls   entity_name (the full knowledge bases)
=============== ============ ===============================================================

Files are TSV read by ``datasets``' csv builder; ``keep_default_na=False`` keeps strings such as "NA" or "null"
as text (pandas would turn them into missing values); a missing value that still comes through becomes "NA",
as in the authors' script. ``path`` may point to a local folder with the same layout (used by the tests).
"""

from __future__ import annotations

from typing import Any

from datasets import load_dataset

HUB_DATASET = "Lihuchen/pearl_benchmark"
CONFIGS = ("bird", "turney", "conll", "bc5cdr", "autofj", "ppdb", "ppdb_filtered", "yago", "umls", "kb")
DEFAULT_SPLITS = {"umls": "umls"}


def load_hub_rows(config: str, split: str | None = None, path: str = HUB_DATASET, **load_kwargs: Any):
    """The raw ``datasets.Dataset`` of one config and split."""
    if config not in CONFIGS:
        raise ValueError(f"Unknown config {config!r} of {path}; known: {', '.join(CONFIGS)}.")
    if config == "kb" and split not in ("yago", "umls"):
        raise ValueError("The 'kb' config needs split='yago' or split='umls'.")
    split = split or DEFAULT_SPLITS.get(config, "test")
    kwargs = {"keep_default_na": False, **load_kwargs}
    try:
        return load_dataset(path, config, split=split, **kwargs)
    except (TypeError, ValueError) as err:
        if "keep_default_na" not in str(err) or "keep_default_na" in load_kwargs:
            raise
        kwargs.pop("keep_default_na")  # a non-csv builder (e.g. parquet) does not take csv options
        return load_dataset(path, config, split=split, **kwargs)


def kb_names(rows) -> list[str]:
    """The names of a ``kb`` split (the full YAGO/UMLS knowledge bases)."""
    return [text(r["entity_name"]) for r in rows if r["entity_name"] is not None]


def text(value: Any) -> str:
    return "NA" if value is None else str(value)


def binary(value: Any) -> int:
    if isinstance(value, str):
        return 1 if value.strip().lower() in ("pos", "1", "true") else 0
    return int(bool(value))


def cluster_label(value: Any, types: list[str]) -> str:
    """Type names stay; integer ids map in the authors' order (CoNLL PER/LOC/ORG, BC5CDR Chemical/Disease)."""
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        index = int(value)
        return types[index] if 0 <= index < len(types) else str(value)
    return text(value)
