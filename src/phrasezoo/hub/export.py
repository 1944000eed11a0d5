"""Write a trained model as a Hub-ready folder: weights, config with auto_map, code, tokenizer, card.

The folder loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)`` in a process where phrasezoo
is not importable: ``save_pretrained`` copies the self-contained model files next to the weights. Files are
written to a temporary folder first and moved into place one by one, so an interrupted export never leaves a
half-written weights file behind. Training state (``checkpoints/``, ``train_log.jsonl``) may live in the same
folder; :func:`phrasezoo.hub.push.push_folder` leaves it out of uploads.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from phrasezoo.files import readable_replace
from phrasezoo.hub.card import write_model_card
from phrasezoo.resources import backbone_hub_id
from phrasezoo.training.checkpoint import atomic_write_text

FACTS_FILE = "training_facts.json"


def export_model(
    model,
    output_dir: str | Path,
    hub_cfg,
    facts: dict[str, Any] | None = None,
    results: dict[str, Any] | None = None,
    baselines: list[dict[str, Any]] | None = None,
) -> Path:
    """Save ``model`` (with its tokenizer) into ``output_dir`` and write its model card.

    ``facts`` are training facts for the card (steps, time, data sizes); they are stored in
    ``training_facts.json`` so that :func:`refresh_card` can regenerate the card after evaluation.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    # the nested backbone config remembers where its weights were read from (a local site-packages path for the
    # embedded defaults); publish the public Hub id instead
    if hub_cfg.backbone and getattr(model.config, "backbone_config", None) is not None:
        model.config.backbone_config._name_or_path = backbone_hub_id(hub_cfg.backbone)
    model.config._name_or_path = hub_cfg.repo_id
    tmp = Path(tempfile.mkdtemp(dir=output_dir, prefix=".export-"))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        model.tokenizer.save_pretrained(tmp)
        for file in tmp.iterdir():
            readable_replace(file, output_dir / file.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    facts = {**_read_facts(output_dir), **(facts or {})}
    atomic_write_text(output_dir / FACTS_FILE, json.dumps(facts, indent=1, default=str))
    write_model_card(output_dir, hub_cfg, facts, results, baselines)
    return output_dir


def refresh_card(output_dir: str | Path, hub_cfg, results=None, baselines=None) -> Path:
    """Regenerate the card of an exported folder (e.g. with evaluation results that came after export)."""
    output_dir = Path(output_dir)
    return write_model_card(output_dir, hub_cfg, _read_facts(output_dir), results, baselines)


def _read_facts(output_dir: Path) -> dict[str, Any]:
    path = output_dir / FACTS_FILE
    return json.loads(path.read_text()) if path.exists() else {}
