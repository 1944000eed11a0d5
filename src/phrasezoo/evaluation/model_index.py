"""Results document -> ``huggingface_hub.EvalResult`` entries for the ``model-index`` of a model card."""

from __future__ import annotations

from typing import Any

from .hub_dataset import HUB_DATASET

#: task -> (task_type, task_name, dataset_type, dataset_config, dataset_name)
TASK_INFO: dict[str, tuple[str, str, str, str | None, str]] = {
    "turney": ("sentence-similarity", "Phrase similarity", HUB_DATASET, "turney", "Turney (PEARL benchmark)"),
    "bird": ("sentence-similarity", "Phrase similarity", HUB_DATASET, "bird", "BiRD (PEARL benchmark)"),
    "ppdb": ("text-classification", "Paraphrase classification", HUB_DATASET, "ppdb", "PPDB (PEARL benchmark)"),
    "ppdb_filtered": (
        "text-classification", "Paraphrase classification", HUB_DATASET, "ppdb_filtered",
        "PPDB filtered (PEARL benchmark)",
    ),
    "yago": ("text-retrieval", "Entity retrieval", HUB_DATASET, "yago", "YAGO (PEARL benchmark, gold-name KB)"),
    "umls": ("text-retrieval", "Entity retrieval", HUB_DATASET, "umls", "UMLS (PEARL benchmark, gold-name KB)"),
    "conll2003": ("clustering", "Entity clustering", HUB_DATASET, "conll", "CoNLL-2003 (PEARL benchmark)"),
    "bc5cdr": ("clustering", "Entity clustering", HUB_DATASET, "bc5cdr", "BC5CDR (PEARL benchmark)"),
    "autofj": ("text-retrieval", "Fuzzy join", HUB_DATASET, "autofj", "AutoFJ, 50 datasets (PEARL benchmark)"),
    "stsb_context": (
        "sentence-similarity", "Phrase similarity in context", "stsb_context", None, "STS-B-Context (SLICE)",
    ),
}  # fmt: skip

METRIC_TYPES = {"accuracy": "accuracy", "pearson": "pearsonr", "spearman": "spearmanr", "nmi": "nmi"}
GOLD_KB_SUFFIX = " (gold-name KB: not comparable with full-KB results)"


def to_model_index(doc: dict[str, Any], model_name: str) -> list:
    """One :class:`huggingface_hub.EvalResult` per non-skipped result entry (values as percentages, like the papers).

    ``model_name`` is the card's model name (``ModelCardData.model_name``); it is not stored in the entries but
    must be set on the card for the Hub to accept a model-index.
    """
    from huggingface_hub import EvalResult

    if not model_name:
        raise ValueError("A model-index needs the model name of the card.")
    out = []
    for entry in doc.get("results", []):
        if entry.get("value") is None:
            continue
        task, metric = entry["task"], entry["metric"]
        task_type, task_name, dataset_type, config, dataset_name = TASK_INFO.get(
            task, ("feature-extraction", task, task, None, task)
        )
        kind = metric.split("_", 1)[0]
        metric_name = metric.replace("_", " ")
        if task in ("yago", "umls"):
            metric_name = f"top-1 {metric_name}{GOLD_KB_SUFFIX}"
        out.append(
            EvalResult(
                task_type=task_type,
                task_name=task_name,
                dataset_type=dataset_type,
                dataset_name=dataset_name,
                dataset_config=config,
                dataset_split="test",
                metric_type=METRIC_TYPES.get(kind, kind),
                metric_name=metric_name,
                metric_value=round(100 * float(entry["value"]), 2),
                metric_config="gold-name-kb" if task in ("yago", "umls") else None,
            )
        )
    return out
