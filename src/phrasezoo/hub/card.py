"""Model cards generated from data: the recipe, training facts and evaluation results.

The text lives in ``model_cards/<method>.md`` (a Jinja template with a YAML header that huggingface_hub
fills in from :class:`~huggingface_hub.ModelCardData`); every number comes from files, none is typed by hand. The
caller prepares the results part (:class:`CardResults`: the comparison table and the model-index entries), so this
module needs nothing from the evaluation workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from phrasezoo.core.files import atomic_write_text
from phrasezoo.resources import backbone_hub_id
from phrasezoo.zoo.registry import get_method


@dataclass
class CardResults:
    """Evaluation results as a card shows them.

    Attributes:
        table: the markdown comparison table (model, baselines, the papers' reference rows).
        model_index: ``huggingface_hub.EvalResult`` entries for the card's ``model-index``.
        model / created: what was evaluated and when (from the results file).
    """

    table: str | None = None
    model_index: list | None = None
    model: str | None = None
    created: str | None = None


def usage_id(recipe, output_dir: str | Path) -> str:
    """What the card's usage snippet (and the config's ``_name_or_path``) loads: the recipe's repo id, unless this run
    renamed its recipe (``--set name=...``) without giving it a repo id of its own: the recipe's repo id is then
    another model's (``phrasezoo/pearl-mini`` is the release, not a variant trained from its recipe), and the snippet
    loads the exported folder (relative to the working directory when under it, else by its name)."""
    written = _recipe_file(recipe)
    renamed = written.get("name", recipe.name) != recipe.name
    own_repo = written.get("repo_id", recipe.repo_id) != recipe.repo_id
    if not renamed or own_repo:
        return recipe.repo_id
    folder = Path(output_dir).absolute()
    try:
        return folder.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return folder.name


def _recipe_file(recipe) -> dict[str, Any]:
    """The name and repo id that the recipe's file states (before ``--set`` overrides); empty without a file."""
    if not recipe.source_path:
        return {}
    try:
        written = yaml.safe_load(Path(recipe.source_path).read_text(encoding="utf8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    return {k: written[k] for k in ("name", "repo_id") if isinstance(written, dict) and k in written}


def build_card(recipe, facts: dict[str, Any], results: CardResults | None = None, usage: str | None = None):
    """A :class:`huggingface_hub.ModelCard` for a trained model; ``usage``: what its usage snippet loads (default
    the recipe's repo id; :func:`usage_id` for an export)."""
    from huggingface_hub import ModelCard, ModelCardData  # lazy: ~1 s, off 'phrasezoo --help'

    template = get_method(recipe.method).card_template
    if not template.exists():
        raise FileNotFoundError(f"No model card template for method '{recipe.method}' at {template}.")
    results = results or CardResults()
    backbone = backbone_hub_id(recipe.backbone) if recipe.backbone else None
    card_data = ModelCardData(
        language="en",
        license="apache-2.0",
        library_name="transformers",
        pipeline_tag="feature-extraction",
        tags=["phrasezoo", recipe.method, "phrase-embeddings", "custom_code"],
        base_model=backbone,
        model_name=recipe.name,
        eval_results=results.model_index or None,
    )
    return ModelCard.from_template(
        card_data,
        template_path=str(template),
        repo_id=usage or recipe.repo_id,
        name=recipe.name,
        description=recipe.description,
        backbone=backbone,
        recipe=yaml.safe_dump(recipe.to_dict(), sort_keys=False).strip(),
        facts=facts,
        results_table=results.table,
        results_model=results.model,
        results_created=results.created,
    )


def write_model_card(output_dir: Path, recipe, facts, results: CardResults | None = None) -> Path:
    """``output_dir/README.md``: the card of the model exported there (:func:`build_card`, :func:`usage_id`)."""
    path = Path(output_dir) / "README.md"
    atomic_write_text(path, str(build_card(recipe, facts, results, usage_id(recipe, output_dir))))
    return path
