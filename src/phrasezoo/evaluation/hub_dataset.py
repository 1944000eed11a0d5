"""Loader for the Hub dataset ``Lihuchen/pearl_benchmark`` (the PEARL authors' copy of the nine tasks).

For users with a network: ``evaluate(..., source="hub")`` reads the PEARL tasks with ``datasets.load_dataset`` and
converts rows to the tasks' internal formats, so the scoring code is the same as for the local files.

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

HUB_DATASET = "Lihuchen/pearl_benchmark"
CONFIGS = ("bird", "turney", "conll", "bc5cdr", "autofj", "ppdb", "ppdb_filtered", "yago", "umls", "kb")
DEFAULT_SPLITS = {"umls": "umls"}
CLUSTER_TYPES = {"conll": ["PER", "LOC", "ORG"], "bc5cdr": ["Chemical", "Disease"]}


def load_hub_rows(config: str, split: str | None = None, path: str = HUB_DATASET, **load_kwargs: Any):
    """The raw ``datasets.Dataset`` of one config and split."""
    from datasets import load_dataset

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


def load_hub_benchmark(config: str, split: str | None = None, path: str = HUB_DATASET, **load_kwargs: Any) -> Any:
    """Load one config of the Hub dataset and convert it to the internal format of the matching task.

    Returns: ``bird`` -> ``PairScoreData``; ``turney`` -> ``MultipleChoiceData``; ``ppdb``/``ppdb_filtered`` ->
    ``PairLabelData``; ``yago``/``umls`` -> ``RetrievalData`` (gold-name KB); ``conll``/``bc5cdr`` ->
    ``ClusteringData``; ``autofj`` -> list of ``JoinTable``; ``kb`` -> list of names.
    """
    rows = load_hub_rows(config, split=split, path=path, **load_kwargs)
    return convert_rows(config, rows)


def convert_rows(config: str, rows) -> Any:
    """Hub rows (a ``datasets.Dataset`` or list of dicts) -> the task's internal format."""
    from .tasks.clustering import ClusteringData
    from .tasks.fuzzy_join import read_autofj
    from .tasks.probe import PairLabelData
    from .tasks.retrieval import RetrievalData
    from .tasks.similarity import MultipleChoiceData, PairScoreData

    rows = list(rows)
    if config == "bird":
        return PairScoreData(
            [_text(r["term1"]) for r in rows],
            [_text(r["term2"]) for r in rows],
            [float(r["relatedness score"]) for r in rows],
        )
    if config == "turney":
        keys = ["label", "candidate_1", "candidate_2", "candidate_3", "candidate_4"]
        return MultipleChoiceData([_text(r["query"]) for r in rows], [[_text(r[k]) for k in keys] for r in rows])
    if config in ("ppdb", "ppdb_filtered"):
        return PairLabelData(
            [_text(r["phrase_1"]) for r in rows],
            [_text(r["phrase_2"]) for r in rows],
            [_binary(r["label"]) for r in rows],
        )
    if config in ("yago", "umls"):
        return RetrievalData([_text(r["query"]) for r in rows], [_text(r["label"]) for r in rows])
    if config in CLUSTER_TYPES:
        types = CLUSTER_TYPES[config]
        pairs = [(_text(r["entity"]), _cluster_label(r["label"], types)) for r in rows]
        pairs = [(p, t) for p, t in pairs if t in types]  # CoNLL: PER/LOC/ORG only, as in PEARL
        return ClusteringData([p for p, _ in pairs], [t for _, t in pairs], types)
    if config == "autofj":
        return read_autofj([_text(r["Dataset"]).strip() for r in rows])
    if config == "kb":
        return [_text(r["entity_name"]) for r in rows if r["entity_name"] is not None]
    raise ValueError(f"Unknown config {config!r}.")


def _text(value: Any) -> str:
    return "NA" if value is None else str(value)


def _binary(value: Any) -> int:
    if isinstance(value, str):
        return 1 if value.strip().lower() in ("pos", "1", "true") else 0
    return int(bool(value))


def _cluster_label(value: Any, types: list[str]) -> str:
    """Type names stay; integer ids map in the authors' order (CoNLL PER/LOC/ORG, BC5CDR Chemical/Disease)."""
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        index = int(value)
        return types[index] if 0 <= index < len(types) else str(value)
    return _text(value)
