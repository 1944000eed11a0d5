"""Model cards generated from data: the hub config (recipe), training facts and the results file.

The text lives in ``phrasezoo/methods/<method>/card.md`` (a Jinja template with a YAML header that huggingface_hub fills in
from :class:`~huggingface_hub.ModelCardData`); every number comes from the files, none is typed by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from phrasezoo.registry import get_method
from phrasezoo.resources import backbone_hub_id


def build_card(hub_cfg, facts: dict[str, Any], results: dict | None = None, baselines: list[dict] | None = None):
    """A :class:`huggingface_hub.ModelCard` for a trained model."""
    from huggingface_hub import ModelCard, ModelCardData

    template = get_method(hub_cfg.method).card_template
    if not template.exists():
        raise FileNotFoundError(f"No model card template for method '{hub_cfg.method}' at {template}.")
    eval_results, table = None, None
    if results is not None:
        from phrasezoo.evaluation import format_report, to_model_index

        eval_results = to_model_index(results, hub_cfg.name) or None
        table = format_report([results, *(baselines or [])], include_reference=True)
    card_data = ModelCardData(
        language="en",
        license="apache-2.0",
        library_name="transformers",
        pipeline_tag="feature-extraction",
        tags=["phrasezoo", hub_cfg.method, "phrase-embeddings", "custom_code"],
        base_model=backbone_hub_id(hub_cfg.backbone) if hub_cfg.backbone else None,
        model_name=hub_cfg.name,
        eval_results=eval_results,
    )
    return ModelCard.from_template(
        card_data,
        template_path=str(template),
        repo_id=hub_cfg.repo_id,
        name=hub_cfg.name,
        description=hub_cfg.description,
        backbone=backbone_hub_id(hub_cfg.backbone) if hub_cfg.backbone else None,
        recipe=yaml.safe_dump(hub_cfg.to_dict(), sort_keys=False).strip(),
        facts=facts,
        results_table=table,
        results_model=(results or {}).get("model"),
        results_created=(results or {}).get("created"),
    )


def write_model_card(output_dir: Path, hub_cfg, facts, results=None, baselines=None) -> Path:
    path = Path(output_dir) / "README.md"
    card = build_card(hub_cfg, facts, results, baselines)
    tmp = path.with_suffix(".md.tmp")
    card.save(str(tmp))
    tmp.replace(path)
    return path
