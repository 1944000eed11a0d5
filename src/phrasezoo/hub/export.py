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

from phrasezoo.core.files import atomic_write_text, readable_replace
from phrasezoo.hub.card import CardResults, usage_id, write_model_card
from phrasezoo.resources import backbone_hub_id

FACTS_FILE = "training_facts.json"


def export_model(
    model,
    output_dir: str | Path,
    recipe,
    facts: dict[str, Any] | None = None,
    results: CardResults | None = None,
    card: bool = True,
) -> Path:
    """Save ``model`` (with its tokenizer) into ``output_dir`` and, with ``card``, write its model card.

    ``facts`` are training facts for the card (steps, time, data sizes); they are stored in
    ``training_facts.json`` so that :func:`refresh_card` can write the card later, e.g. once the exported folder
    has been evaluated (``card=False`` here then, so that the card is written once).
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    # the nested backbone config remembers where its weights were read from (a local site-packages path for the
    # embedded defaults); publish the public Hub id instead
    if recipe.backbone and getattr(model.config, "backbone_config", None) is not None:
        model.config.backbone_config._name_or_path = backbone_hub_id(recipe.backbone)
    model.config._name_or_path = usage_id(recipe, output_dir)
    write_model_files(model, output_dir)
    facts = portable_facts({**_read_facts(output_dir), **(facts or {})}, output_dir)
    atomic_write_text(output_dir / FACTS_FILE, json.dumps(facts, indent=1, default=str))
    if card:
        write_model_card(output_dir, recipe, facts, results)
    return output_dir


def portable_facts(facts: dict[str, Any], output_dir: Path) -> dict[str, Any]:
    """``facts`` without this machine's paths, since the folder is published: a path inside ``output_dir`` (a soup's
    ingredients) relative to it, any other absolute path (a local corpus file) by its name only. Other values, and
    relative paths outside the folder (``results/...`` of the repository), are kept."""
    root = Path(output_dir).resolve()

    def portable(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: portable(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [portable(item) for item in value]
        if not isinstance(value, str | Path) or not str(value).strip() or "\n" in str(value):
            return value
        path = Path(value)
        try:
            if not path.is_absolute() and not path.exists():
                return value
            return path.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):  # outside the folder, or no path at all (a name too long for one)
            return path.name if path.is_absolute() else value

    return portable(facts)


def write_model_files(model, output_dir: Path) -> None:
    """``model``'s weights (safetensors), config, code and tokenizer, written to a scratch folder inside
    ``output_dir`` and moved into place file by file."""
    tmp = Path(tempfile.mkdtemp(dir=output_dir, prefix=".export-"))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        model.tokenizer.save_pretrained(tmp)
        for file in tmp.iterdir():
            readable_replace(file, output_dir / file.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def refresh_card(output_dir: str | Path, recipe, results: CardResults | None = None) -> Path:
    """Write the card of an exported folder from its stored training facts (e.g. with results that came later)."""
    output_dir = Path(output_dir)
    return write_model_card(output_dir, recipe, _read_facts(output_dir), results)


def _read_facts(output_dir: Path) -> dict[str, Any]:
    path = output_dir / FACTS_FILE
    return json.loads(path.read_text()) if path.exists() else {}
