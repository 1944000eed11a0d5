"""Named, versioned checkpoint recipes (like timm's pretrained cfgs): one YAML per published model in hub_configs/.

A recipe says what a checkpoint is (repo id, method, backbone if any), what it is trained on (data), how
(training hyper-parameters) and how it is judged (eval tasks and baselines). This module only parses recipes; what
the ``model``/``data``/``training.method_args`` sections may hold is the method's argument schema
(:func:`phrasezoo.registry.validate_recipe`). ``train.py``, ``phrasezoo pipeline`` and the
model card all read the same file, so a published card always states the recipe that produced the weights.
"""

from __future__ import annotations

import copy
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from phrasezoo.files import shipped_folder

#: the recipes: ``hub_configs/`` of a checkout, or the copy an installed wheel ships (:func:`shipped_folder`)
RECIPES_DIR = shipped_folder("hub_configs")
RESULTS_DIR = Path("results")
OUTPUTS_DIR = Path("outputs")


def results_file_name(spec: str) -> str:
    """The one naming rule of results files: a recipe name, a model folder or a baseline spec -> file stem.

    ``pearl-mini`` -> ``pearl-mini``; ``outputs/pearl-mini/`` -> ``pearl-mini``; ``baseline:minilm-l6`` ->
    ``baseline-minilm-l6``; ``baseline:intfloat/e5-small-v2`` -> ``baseline-intfloat--e5-small-v2``.
    """
    name = spec.rstrip("/").split("/")[-1] if not spec.startswith("baseline:") else spec.replace(":", "-", 1)
    return re.sub(r"[^A-Za-z0-9._-]+", "--", name)


def results_path(spec: str) -> Path:
    """``results/<results_file_name(spec)>.json``: where the results of a recipe, model folder or baseline go."""
    return RESULTS_DIR / f"{results_file_name(spec)}.json"


@dataclass
class TrainingConfig:
    """Hyper-parameters shared by every method's training loop (method-specific ones live in ``method_args``)."""

    batch_size: int = 32
    epochs: int = 1
    max_steps: int | None = None
    learning_rate: float = 3e-5
    head_learning_rates: dict[str, float] | None = None  # {"type_head.": 1e-3}: faster rates for fresh modules
    weight_decay: float = 0.0
    optimizer: str = "adam"
    scheduler: str = "exponential"  # "exponential" (PEARL: decay every N steps), "linear" (warm-up + linear decay)
    decay_rate: float = 0.98
    decay_every: int = 2000
    warmup_ratio: float = 0.0
    max_grad_norm: float | None = 1.0
    mixed_precision: str = "no"  # "bf16": autocast the forward pass (fp32 master weights); ~2x on AVX-512 BF16 CPUs
    seed: int = 42  # seeds the fresh modules' initialisation, the data order, augmentations and dropout
    # torch CPU threads for the run (None: torch's default, i.e. the cores or OMP_NUM_THREADS). Float sums depend on
    # the thread count, so bitwise-identical reruns need the same count: recipes pin it.
    num_threads: int | None = None
    checkpoint_every: int = 200
    keep_checkpoints: int = 2
    log_every: int = 10
    weight_average: float = 0.0  # final = (1 - a) * fine-tuned + a * starting weights; PEARL uses 0.5
    # a model soup: one run per seed (outputs/<name>/ingredients/seed-<s>/), their pretrained-encoder weights
    # averaged into the exported model (phrasezoo.training.soup); ``seed`` is then unused
    soup_seeds: list[int] | None = None
    lora: dict[str, Any] | None = (
        None  # peft LoraConfig kwargs, e.g. {r: 8, lora_alpha: 16, target_modules: [query, value]}
    )
    # a safety stop only: max_steps/epochs decide a run. When the budget fires, the loop checkpoints and stops, the
    # log and the card say so ("stopped by time budget"), and rerunning the recipe resumes to the planned steps.
    time_budget_minutes: float | None = None
    method_args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recipe:
    """One published checkpoint recipe."""

    name: str
    method: str
    repo_id: str
    backbone: str | None = None  # embedded name or Hub id; only for methods built from a pretrained backbone
    version: str = "1.0"
    description: str = ""
    model: dict[str, Any] = field(default_factory=dict)  # kwargs of the method's config class
    data: dict[str, Any] = field(default_factory=dict)  # method-specific data-building options
    training: TrainingConfig = field(default_factory=TrainingConfig)
    eval: dict[str, Any] = field(default_factory=dict)  # {tasks: [...], baselines: [...]}
    source_path: str | None = None

    @property
    def output_dir(self) -> Path:
        return OUTPUTS_DIR / self.name

    @property
    def results_path(self) -> Path:
        return results_path(self.name)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("source_path")
        return out


def load_recipe(name_or_path: str | Path, overrides: list[str] | None = None) -> Recipe:
    """Read a recipe by name (``pearl-mini``) or path; ``overrides`` are ``dotted.key=value`` strings."""
    path = Path(name_or_path)
    if not path.suffix:
        path = RECIPES_DIR / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(list_recipes()) or "none"
        raise FileNotFoundError(f"No recipe '{name_or_path}' (looked for {path}). Known recipes: {known}.")
    raw = yaml.safe_load(path.read_text()) or {}
    for override in overrides or []:
        _apply_override(raw, override)
    return recipe_from_dict(raw, source_path=str(path))


def recipe_from_dict(raw: dict[str, Any], source_path: str | None = None) -> Recipe:
    raw = copy.deepcopy(raw)
    missing = [key for key in ("name", "method", "repo_id") if key not in raw]
    if missing:
        raise ValueError(f"Recipe {source_path or ''} lacks required keys: {', '.join(missing)}.")
    known_training = {f.name for f in fields(TrainingConfig)}
    training_raw = raw.pop("training", {}) or {}
    unknown = set(training_raw) - known_training
    if unknown:
        raise ValueError(
            f"Unknown training keys {sorted(unknown)} in {source_path or 'recipe'}; "
            f"known: {sorted(known_training)} (method-specific ones go under training.method_args)."
        )
    known_top = {f.name for f in fields(Recipe)}
    unknown_top = set(raw) - known_top
    if unknown_top:
        raise ValueError(
            f"Unknown keys {sorted(unknown_top)} in {source_path or 'recipe'}; known: {sorted(known_top)}."
        )
    return Recipe(training=TrainingConfig(**training_raw), source_path=source_path, **raw)


def list_recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES_DIR.glob("*.yaml"))


def _apply_override(raw: dict[str, Any], override: str) -> None:
    if "=" not in override:
        raise ValueError(f"Override '{override}' must look like dotted.key=value, e.g. training.max_steps=10.")
    key, value = override.split("=", 1)
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = yaml.safe_load(value)
