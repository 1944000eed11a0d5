"""Held-out NNSC reconstruction: how well do predicted facets reconstruct the co-occurring words of unseen text?

Data: examples of the documents the model's recipe held out of training, up to 2,000 (seeded). They come from the
recipe's method: its ``data`` module (found through the registry, ``Method.load("data")``) provides
``heldout_examples(recipe, max_examples, seed) -> HeldOut`` (texts, their target words, and the most frequent target
words of the training split); tests pass ``ctx.options["heldout_examples"]`` directly. The recipe is the one named like the model (``encoder.name``). For
each example, ``Er(F, W) = mean_j ||F m_j - w_j||^2`` with ``m_j`` the NNSC coefficients in [0, 1] under the
model's L1 weight (the model's own solver), for its own targets (``er_pos``) and for the targets of another example
(``er_neg``: the sample rotated by one seeded shift, as in training); ``margin = er_neg - er_pos``. Lower ``er_pos``
and a larger margin are better; all-zero facets score 1 (unit targets).

Facets compared in one run:

* ``model``: the model's facets as it outputs them (the magnitudes the loss was trained with);
* ``input_words``: the unit vectors of the input's own content words (no learning: "the words are the facets");
* ``input_mean``: their unit mean as a single facet (a GloVe-average sentence vector);
* ``frequent_targets``: the K most frequent target words of the training split, the same for every input.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from phrasezoo.core.recipes import load_recipe
from phrasezoo.data.lexical.synonyms import STOP_WORDS
from phrasezoo.encoders import Encoder
from phrasezoo.evaluation.results import TaskResult
from phrasezoo.evaluation.tasks.base import TaskContext, register_task
from phrasezoo.methods.codebook.tasks.common import FacetsTask
from phrasezoo.zoo.registry import get_method

from .common import facets_model, model_raw_facets, solve_nnsc, text_words, unit, word_space

FACET_SOURCES = ("model", "input_words", "input_mean", "frequent_targets")
MAX_EXAMPLES = 2000


def heldout_examples(encoder: Encoder, ctx: TaskContext) -> Any:
    """Held-out examples for the model behind ``encoder`` (see the module docstring)."""
    if ctx.options.get("heldout_examples") is not None:
        return ctx.options["heldout_examples"]
    try:
        recipe = load_recipe(encoder.name)
    except FileNotFoundError as err:
        raise FileNotFoundError(
            f"No recipe named {encoder.name!r}: held-out reconstruction needs the recipe that trained the model "
            "(evaluate with --model outputs/<recipe name>)."
        ) from err
    data = get_method(recipe.method).load("data")
    if not hasattr(data, "heldout_examples"):
        raise FileNotFoundError(f"Method {recipe.method!r} provides no held-out examples (data.heldout_examples).")
    return data.heldout_examples(recipe, max_examples=MAX_EXAMPLES, seed=ctx.seed)


def padded(sets: list[np.ndarray], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Stack variable-size (m_i, dim) sets into (n, max m, dim) with a mask (at least one slot)."""
    width = max(1, max((len(s) for s in sets), default=1))
    out = np.zeros((len(sets), width, dim), dtype=np.float32)
    mask = np.zeros((len(sets), width), dtype=bool)
    for i, s in enumerate(sets):
        out[i, : len(s)] = s
        mask[i, : len(s)] = True
    return out, mask


@register_task
class FacetsReconstruction(FacetsTask):
    name = "facets_reconstruction"
    order = 43
    main_metric = "er_pos:model"
    description = "Held-out NNSC reconstruction error of co-occurring words: model facets vs non-learned facets"
    groups = ("facets_sentence", "facets_phrase")
    needs_benchmarks_dir = False

    def metrics(self) -> list[str]:
        return [f"{m}:{s}" for s in FACET_SOURCES for m in ("er_pos", "er_neg", "margin")]

    def load(self, ctx: TaskContext) -> None:
        return None  # the held-out data depends on the model's recipe: read in score()

    def score(self, encoder: Encoder, data: None, ctx: TaskContext) -> list[TaskResult]:
        model = facets_model(encoder)
        try:
            held = heldout_examples(encoder, ctx)
        except FileNotFoundError as err:
            return self.skipped(str(err))
        if len(held.texts) < 2:
            return self.skipped(f"only {len(held.texts)} held-out examples")
        space = word_space(held.word_vectors)
        texts = list(held.texts)
        targets = [space.rows([w for w in words if space.has(w)]) for words in held.targets]
        shift = random.Random(ctx.seed).randrange(1, len(texts))
        negatives = targets[shift:] + targets[:shift]
        dim = space.vectors.shape[1]
        pos, pos_mask = padded(targets, dim)
        neg, neg_mask = padded(negatives, dim)

        raw = model_raw_facets(model, texts)
        k = raw.shape[1]
        frequent = unit(space.rows([w for w in held.frequent_targets if space.has(w)][:k]))
        own = []
        for text in texts:
            words = text_words(text, space)
            content = [w for w in words if w not in STOP_WORDS] or words
            own.append(unit(space.rows(list(dict.fromkeys(content)))))
        own_facets, _ = padded(own, dim)  # zero rows reconstruct nothing, so padding needs no mask
        facet_sets = {
            "model": raw,
            "input_words": own_facets,
            "input_mean": unit(np.stack([o.mean(axis=0) if len(o) else np.zeros(dim) for o in own]))[:, None, :],
            "frequent_targets": np.broadcast_to(frequent, (len(texts), *frequent.shape)).copy(),
        }
        lam = float(model.config.nnsc_lambda)
        results = []
        for source, facets in facet_sets.items():
            er_pos = solve_nnsc(model, facets, pos, pos_mask, lam)
            er_neg = solve_nnsc(model, facets, neg, neg_mask, lam)
            notes = f"{len(texts)} held-out examples ({held.description}); facets: {source} (K={facets.shape[1]})"
            for metric, value in (
                ("er_pos", er_pos.mean()),
                ("er_neg", er_neg.mean()),
                ("margin", (er_neg - er_pos).mean()),
            ):
                results.append(self.result(f"{metric}:{source}", float(value), len(texts), notes))
        return results
