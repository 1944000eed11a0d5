"""Refit PEARL's type head on the final phrase encoder: a multinomial logistic regression over the table's typed
phrases (not in the paper).

The paper trains the type head jointly, for about 15k steps. The CPU recipe's 300 steps leave it near the class
prior: every CoNLL-2003 dev name, bare, came out NP-OTHER (``experiments/pearl/type_head_dev.py``). A soup also pairs
the averaged encoder with the first run's head. So after training and the dev-suite selection, the head is fitted
again, on the frozen features it reads (the normalised phrase vector and the weighted character vector, the part of
``joint_embeddings`` before any lexical channel), from the silver labels of the phrase table: every phrase whose
entity type is not OTHER (up to three quarters of the rows) and a seeded sample of the OTHER ones, so that names are
not drowned by the ordinary phrases that make up most of the table. Classes the sample lacks keep a bias far below the rest (never predicted).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from phrasezoo.zoo.assembly import Context, Stage, build_dataset

from .assembly import ASSEMBLY

#: the head's training rows (a seeded sample of the table's typed phrases)
DEFAULT_MAX_ROWS = 30_000
#: the share of those rows whose entity type is OTHER (the table's commonest: most phrases are not names)
OTHER_SHARE = 0.25
#: inverse regularisation strength of the logistic regression
DEFAULT_C = 1.0


def head_features(model, phrases: Sequence[str], batch_size: int = 256) -> np.ndarray:
    """The type head's inputs for ``phrases``: ``joint_embeddings`` without the lexical channel, float32 (batched by
    length, as :meth:`encode` does)."""
    if not len(phrases):
        return np.zeros((0, model.type_head.in_features), dtype=np.float32)
    joint = model.encode(list(phrases), batch_size=batch_size, normalize=False, show_progress_bar=False)
    return np.ascontiguousarray(joint[:, : model.type_head.in_features], dtype=np.float32)


def training_rows(labels: Sequence[str], max_rows: int, seed: int = 0, other_share: float = OTHER_SHARE) -> list[int]:
    """Indices of the head's training rows, at most ``max_rows``: OTHER rows (entity type OTHER) fill
    ``other_share`` of them, phrases of a named-entity type the rest (a seeded sample of each when there are more;
    either part takes what the other leaves)."""
    entities = [i for i, label in enumerate(labels) if label and not label.endswith("-OTHER")]
    other = [i for i, label in enumerate(labels) if label and label.endswith("-OTHER")]
    other_room = min(len(other), max(int(max_rows * other_share), max_rows - len(entities)))
    entity_room = min(len(entities), max_rows - other_room)
    rng = random.Random(seed)
    return sorted(rng.sample(entities, entity_room) + rng.sample(other, other_room))


def fit_type_head(
    model,
    phrases: Sequence[str],
    labels: Sequence[str],
    max_rows: int = DEFAULT_MAX_ROWS,
    c: float = DEFAULT_C,
    seed: int = 0,
) -> dict[str, Any]:
    """Fit ``model.type_head`` on ``phrases`` with their type ``labels`` (names of ``model.config.type_labels``;
    unknown or empty labels are left out); returns facts for the model card."""
    from sklearn.linear_model import LogisticRegression  # lazy: keeps scikit-learn off the registry's scan

    known = {name: i for i, name in enumerate(model.config.type_labels)}
    usable = [i for i, label in enumerate(labels) if label in known]
    chosen = [usable[j] for j in training_rows([labels[i] for i in usable], max_rows, seed)]
    if len({labels[i] for i in chosen}) < 2:
        raise ValueError("Refitting the type head needs phrases of at least two types.")
    x = head_features(model, [phrases[i] for i in chosen])
    y = np.array([known[labels[i]] for i in chosen])
    regression = LogisticRegression(C=c, max_iter=500, random_state=seed).fit(x, y)
    weight = np.zeros((len(known), x.shape[1]), dtype=np.float32)
    bias = np.full(len(known), -1e4, dtype=np.float32)  # classes without a training row: never predicted
    weight[regression.classes_] = regression.coef_
    bias[regression.classes_] = regression.intercept_
    with torch.no_grad():
        model.type_head.weight.copy_(torch.from_numpy(weight))
        model.type_head.bias.copy_(torch.from_numpy(bias))
    entity_rows = sum(not labels[i].endswith("-OTHER") for i in chosen)
    return {
        "type head": (
            f"refitted on the final encoder: logistic regression (C={c}) over {len(chosen)} typed table phrases "
            f"({entity_rows} of a named-entity type, {len(chosen) - entity_rows} OTHER; seeded samples), "
            f"{len(regression.classes_)} types"
        )
    }


def refit_after_training(model, recipe) -> dict[str, Any]:
    """PEARL's :attr:`~phrasezoo.zoo.registry.Method.finalize`: with ``training.method_args.type_head_refit`` (``true``
    or ``{max_rows, c}``), refit the type head on the recipe's phrase table (built as training built it, the benchmark
    filter included; cached) and return the card facts; without it, nothing."""
    options = recipe.training.method_args.get("type_head_refit")
    if not options:
        return {}
    options = {} if options is True else dict(options)
    phrases, labels = typed_table(recipe)
    return fit_type_head(model, phrases, labels, **options)


def typed_table(recipe) -> tuple[list[str], list[str]]:
    """The recipe's phrase table after its benchmark filter: ``(phrases, type labels)`` (alias rows are untyped and
    added later, so they are not here)."""
    dataset = build_dataset(ASSEMBLY, recipe)
    context = Context(recipe, None, None, {})
    for part in ASSEMBLY.parts:
        if part.stage == Stage.FILTER:
            dataset, _ = part.apply(dataset, recipe, context)
    return list(dataset["phrase"]), list(dataset["type_label"])
