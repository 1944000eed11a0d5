"""Results document -> ``huggingface_hub.EvalResult`` entries for the ``model-index`` of a model card (what each
entry says about its benchmark comes from the task class: ``Task.model_index``, ``Task.gold_name_kb``)."""

from __future__ import annotations

from typing import Any

from huggingface_hub import EvalResult

from .tasks import TASKS

METRIC_TYPES = {"accuracy": "accuracy", "pearson": "pearsonr", "spearman": "spearmanr", "nmi": "nmi"}
GOLD_KB_SUFFIX = " (gold-name KB: not comparable with full-KB results)"


def to_model_index(doc: dict[str, Any], model_name: str) -> list:
    """One :class:`huggingface_hub.EvalResult` per non-skipped result entry (values as percentages, like the papers).

    ``model_name`` is the card's model name (``ModelCardData.model_name``); it is not stored in the entries but
    must be set on the card for the Hub to accept a model-index.
    """
    if not model_name:
        raise ValueError("A model-index needs the model name of the card.")
    out = []
    for entry in doc.get("results", []):
        if entry.get("value") is None:
            continue
        task, metric = entry["task"], entry["metric"]
        task_class = TASKS.get(task)
        info = task_class.model_index if task_class is not None else None
        task_type, task_name, dataset_type, config, dataset_name = info or (
            "feature-extraction",
            task,
            task,
            None,
            task,
        )
        gold_name_kb = task_class is not None and task_class.gold_name_kb
        kind = metric.split("_", 1)[0]
        metric_name = metric.replace("_", " ")
        if gold_name_kb:
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
                metric_config="gold-name-kb" if gold_name_kb else None,
            )
        )
    return out
