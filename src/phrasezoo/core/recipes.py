"""Named, versioned checkpoint recipes (like timm's pretrained cfgs): one YAML per published model in hub_configs/.

A recipe says what a checkpoint is (repo id, method, backbone if any), what it is trained on (data), how
(training hyper-parameters) and how it is judged (eval tasks and baselines). This module only parses recipes; what
the ``model``/``data``/``training.method_args`` sections may hold is the method's argument schema
(:func:`phrasezoo.zoo.registry.validate_recipe`). ``train.py``, ``phrasezoo pipeline`` and the
model card all read the same file, so a published card always states the recipe that produced the weights.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from phrasezoo.core.errors import InputError
from phrasezoo.core.files import read_user_text, shipped_folder

#: the recipes: ``hub_configs/`` of a checkout, or the copy an installed wheel ships (:func:`shipped_folder`)
RECIPES_DIR = shipped_folder("hub_configs")
RESULTS_DIR = Path("results")
BASELINES_DIR = RESULTS_DIR / "baselines"
OUTPUTS_DIR = Path("outputs")


def results_file_name(spec: str) -> str:
    """The one naming rule of results files: a recipe name, a model folder or a baseline spec -> file stem.

    ``pearl-mini`` -> ``pearl-mini``; ``outputs/pearl-mini/`` -> ``pearl-mini``; ``baseline:minilm-l6`` ->
    ``baseline-minilm-l6``; ``baseline:intfloat/e5-small-v2`` -> ``baseline-intfloat--e5-small-v2``.
    """
    name = spec.rstrip("/").split("/")[-1] if not spec.startswith("baseline:") else spec.replace(":", "-", 1)
    return re.sub(r"[^A-Za-z0-9._-]+", "--", name)


def results_path(spec: str, method: str | None = None) -> Path:
    """Where the results of a recipe, model folder or baseline go (results/README.md): a baseline's in
    ``results/baselines/``, a model's in its method's folder, ``results/<method>/<results_file_name(spec)>.json``
    (``phrase_bert`` -> ``phrase-bert/``). ``method`` defaults to the recipe's of that name or the folder's
    ``config.json`` ``model_type``; a spec that names neither goes to ``results/`` itself."""
    folder = BASELINES_DIR if spec.startswith("baseline:") else RESULTS_DIR / (method or _method_of(spec) or "")
    return folder / f"{results_file_name(spec)}.json"


def _method_of(spec: str) -> str | None:
    """The method of a recipe name or a model folder, as its results folder spells it (``-`` for ``_``)."""
    recipe = RECIPES_DIR / f"{results_file_name(spec)}.yaml"
    config = Path(spec) / "config.json"
    try:
        if recipe.is_file():
            method = (yaml.safe_load(recipe.read_text()) or {}).get("method")
        elif (
            config.is_file()
        ):  # an exported model: every zoo model_type is "phrasezoo-<method>" or "phrasezoo_<method>"
            model_type = str(json.loads(config.read_text()).get("model_type", ""))
            method = model_type[len("phrasezoo") + 1 :] if model_type.startswith("phrasezoo") else None
        else:
            return None
    except (OSError, ValueError, yaml.YAMLError, AttributeError):
        return None
    return str(method).replace("_", "-") if method else None


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
    # micro-batches per optimizer step (accelerator.accumulate): batch_size is the step's global batch, split into
    # this many micro-batches per process. In-batch negatives then come from one micro-batch only.
    gradient_accumulation_steps: int = 1
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
    # peak resident memory of one run in GB, measured: a soup trains no more seeds at once than the free memory holds
    # (phrasezoo.training.recipe.runs_in_memory); None: only the cores decide
    run_memory_gb: float | None = None
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
        return results_path(self.name, self.method.replace("_", "-"))

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
        known = list_recipes()
        close = difflib.get_close_matches(Path(name_or_path).stem, known, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise FileNotFoundError(
            f"No recipe '{name_or_path}' (looked for {path}).{hint} Known recipes: {', '.join(known) or 'none'}."
        )
    try:
        raw = yaml.safe_load(read_user_text(path, "recipe")) or {}
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not valid YAML ({str(err).splitlines()[0]}; {_yaml_place(err)}).") from None
    for override in overrides or []:
        _apply_override(raw, override, path)
    return recipe_from_dict(raw, source_path=str(path))


def recipe_from_dict(raw: dict[str, Any], source_path: str | None = None) -> Recipe:
    """A :class:`Recipe` from a parsed recipe; :class:`InputError` (a ``ValueError``) names a missing, unknown or
    mistyped key."""
    where = source_path or "recipe"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: a recipe is a YAML mapping (name: ..., method: ...), got {type(raw).__name__}.")
    raw = copy.deepcopy(raw)
    missing = [key for key in ("name", "method", "repo_id") if key not in raw]
    if missing:
        raise InputError(f"Recipe {source_path or ''} lacks required keys: {', '.join(missing)}.")
    known_training = {f.name for f in fields(TrainingConfig)}
    training_raw = raw.pop("training", {}) or {}
    if not isinstance(training_raw, dict):
        raise InputError(f"{where}: 'training' must be a mapping of hyper-parameters, got {training_raw!r}.")
    unknown = set(training_raw) - known_training
    if unknown:
        raise InputError(
            f"Unknown training keys {sorted(unknown, key=str)} in {where}; "
            f"known: {sorted(known_training)} (method-specific ones go under training.method_args)."
        )
    known_top = {f.name for f in fields(Recipe)}
    unknown_top = set(raw) - known_top
    if unknown_top:
        raise InputError(f"Unknown keys {sorted(unknown_top, key=str)} in {where}; known: {sorted(known_top)}.")
    for cls, values, prefix in ((Recipe, raw, ""), (TrainingConfig, training_raw, "training.")):
        for f in fields(cls):
            if f.name in values and not _has_type(values[f.name], f.type):
                raise InputError(f"{where}: '{prefix}{f.name}' must be {f.type}, got {values[f.name]!r}.")
    _check_accumulation(training_raw, where)
    return Recipe(training=TrainingConfig(**training_raw), source_path=source_path, **raw)


def _check_accumulation(training: dict[str, Any], where: str) -> None:
    """``training.gradient_accumulation_steps``: at least 1, and a divisor of the global ``batch_size``."""
    steps = training.get("gradient_accumulation_steps", 1)
    batch = training.get("batch_size", TrainingConfig.batch_size)
    if steps < 1:
        raise InputError(f"{where}: 'training.gradient_accumulation_steps' must be at least 1, got {steps}.")
    if isinstance(batch, int) and batch % steps:
        raise InputError(
            f"{where}: 'training.batch_size' ({batch}) is the global batch of one optimizer step and must be "
            f"divisible by 'training.gradient_accumulation_steps' ({steps}), which splits it into micro-batches."
        )


def _has_type(value: Any, annotation: str) -> bool:
    """Whether a YAML value fits a field annotation of this module (``int``, ``float | None``, ``dict[str, Any]``,
    ``list[int] | None``, ...): YAML gives ints, floats, strings, lists and mappings."""
    for option in (part.strip() for part in str(annotation).split(" | ")):
        base = option.split("[", 1)[0]
        if base == "None" and value is None or base == "Any":
            return True
        if base == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if base == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if (base, type(value)) in (("str", str), ("dict", dict), ("list", list), ("bool", bool)):
            return True
    return False


def _yaml_place(err: Exception) -> str:
    mark = getattr(err, "problem_mark", None)
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "see the file"


def list_recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES_DIR.glob("*.yaml"))


def _apply_override(raw: dict[str, Any], override: str, source: Path | None = None) -> None:
    if "=" not in override:
        raise InputError(f"Override '{override}' must look like dotted.key=value, e.g. training.max_steps=10.")
    key, value = override.split("=", 1)
    parts = key.split(".")
    if not all(part.strip() for part in parts):
        raise InputError(f"Override '{override}': the key '{key}' has an empty part; e.g. training.max_steps=10.")
    if not isinstance(raw, dict):
        raise InputError(f"Override '{override}': {source or 'the recipe'} is not a YAML mapping.")
    node = raw
    for depth, part in enumerate(parts[:-1]):
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise InputError(
                f"Override '{override}': '{'.'.join(parts[: depth + 1])}' is {node!r}, not a mapping, so it has no "
                f"key '{parts[depth + 1]}'."
            )
    try:
        node[parts[-1]] = yaml.safe_load(value)
    except yaml.YAMLError as err:
        raise InputError(f"Override '{override}': the value is not valid YAML ({str(err).splitlines()[0]}).") from None
