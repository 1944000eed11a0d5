"""Phrase-BERT's training task: triplet batches and loss (the registry entry is in ``__init__``).

Training follows the paper (section 3.1) and its released code (sentence-transformers ``TripletLoss``):

* two sets of triples, mixed in one shuffled epoch: (phrase, lexically diverse paraphrase, paraphrase of a corrupted
  phrase) and (phrase, a context where the phrase is masked, a random other context), built by
  :func:`phrasezoo.methods.phrase_bert.data.build_phrase_bert_data`;
* every text is embedded by mean pooling; the loss is ``max(0, |a - p| - |a - n| + margin)`` with Euclidean
  distance and margin 1, averaged over the batch's triples;
* the ablations Phrase-BERT-phrase and Phrase-BERT-context are ``data.objectives: [paraphrase]`` / ``[context]``;
* optionally (``distill_weight > 0``, not in the paper), a teacher's similarities: the cosine matrix of the batch's
  phrases (not the contexts) is pulled towards all-mpnet-base-v2's
  (:func:`phrasezoo.objectives.losses.similarity_distillation`; the teacher embeds the phrases a run draws before its
  first step, see :mod:`phrasezoo.objectives.teacher`);
* optionally (``lexicon_weight > 0``, not in the paper), the lexicon term: each step also draws WordNet words and
  their teacher neighbours, and the encoder's ranking of them is pulled towards the teacher's
  (:mod:`phrasezoo.objectives.lexicon_distillation`).

Short texts (phrases) and long ones (contexts) are tokenized and encoded as two padded groups, so a batch never pads
a two-word phrase to the length of a 120-word context.
"""

from __future__ import annotations

import random
from typing import Any

import torch

from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.objectives.losses import triplet_loss
from phrasezoo.objectives.terms import TeacherTerms


class PhraseBertTask:
    """Batches and loss of Phrase-BERT training over paraphrase and context triples (see module docstring)."""

    averaged_prefixes = ("backbone.",)
    lora_modules_to_save: list[str] = []

    def __init__(
        self,
        model: PhraseBertModel,
        paraphrase_triples: list[tuple[str, str, str]],
        context_triples: list[tuple[str, str, str]],
        margin: float = 1.0,
        normalize: bool = False,
        terms: TeacherTerms | None = None,
        facts: dict[str, Any] | None = None,
    ):
        if not paraphrase_triples and not context_triples:
            raise ValueError("Phrase-BERT training needs paraphrase or context triples; both sets are empty.")
        self.model = model
        self.triples = list(paraphrase_triples) + list(context_triples)
        self.n_paraphrase = len(paraphrase_triples)
        self.margin = margin
        self.normalize = normalize
        self.terms = terms or TeacherTerms()
        self._facts = facts or {}

    def num_examples(self) -> int:
        return len(self.triples)

    def facts(self) -> dict[str, Any]:
        return {
            "paraphrase triples": self.n_paraphrase,
            "context triples": len(self.triples) - self.n_paraphrase,
            "triplet margin": self.margin,
            "distance on": "L2-normalised embeddings" if self.normalize else "raw mean-pooled embeddings",
            **self._facts,
            **self.terms.facts(),
        }

    def prepare(self, model, accelerator) -> None:
        """Nothing to pretrain: Phrase-BERT fine-tunes the backbone directly."""

    def prefetch(self, steps) -> None:
        """Embed the teacher rows of the coming steps' phrases (group 0 of :meth:`make_batch`) before the first step,
        in large batches, instead of a few in every step."""
        self.terms.prefetch(
            text
            for indices, _rng in steps
            for i in indices
            for position, text in enumerate(self.triples[i])
            if not (i >= self.n_paraphrase and position > 0)
        )

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        """Tokenize a batch of triples as two padded groups: phrases (group 0) and contexts (group 1).

        ``slots`` holds, per triple, the (group, row) of its anchor, positive and negative. Triples are fixed at
        dataset-build time, so ``rng`` only draws the lexicon batch (when the lexicon term is on).
        """
        groups: tuple[list[str], list[str]] = ([], [])
        slots, is_context = [], []
        for i in indices:
            context = i >= self.n_paraphrase
            triple = []
            for position, text in enumerate(self.triples[i]):
                group = 1 if context and position > 0 else 0
                triple.append((group, len(groups[group])))
                groups[group].append(text)
            slots.append(triple)
            is_context.append(context)
        features = [self.model.tokenize(texts) if texts else None for texts in groups]
        batch = {
            "features": features,
            "slots": torch.tensor(slots),
            "is_context": torch.tensor(is_context),
            "phrases": groups[0],
        }
        lexicon = self.terms.sample_lexicon(rng)
        if lexicon is not None:
            ids, words = lexicon
            batch["lexicon_ids"], batch["lexicon_features"] = ids, self.model.tokenize(words)
        return batch

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        device = next(model.parameters()).device
        vectors = []
        for features in batch["features"]:
            if features is None:
                vectors.append(None)
                continue
            out = model(**{k: v.to(device) for k, v in features.items()})
            vectors.append(out.embeddings if self.normalize else out.pooled_embeddings)
        dim = next(v for v in vectors if v is not None).shape[-1]
        stacked = torch.cat([v if v is not None else torch.zeros((0, dim), device=device) for v in vectors])
        offsets = torch.tensor([0, 0 if vectors[0] is None else vectors[0].shape[0]], device=device)
        slots = batch["slots"].to(device)
        rows = offsets[slots[..., 0]] + slots[..., 1]  # (n_triples, 3) rows of `stacked`
        anchor, positive, negative = stacked[rows[:, 0]], stacked[rows[:, 1]], stacked[rows[:, 2]]
        loss = triplet_loss(anchor.float(), positive.float(), negative.float(), self.margin)
        logs = {}
        is_context = batch["is_context"].to(device)
        for name, mask in (("triplet_paraphrase", ~is_context), ("triplet_context", is_context)):
            if mask.any():
                with torch.no_grad():
                    logs[name] = float(
                        triplet_loss(anchor[mask].float(), positive[mask].float(), negative[mask].float(), self.margin)
                    )
        if vectors[0] is not None:
            loss = self.terms.add_distillation(loss, logs, vectors[0], batch["phrases"])
        if self.terms.lexicon is not None:
            out = model(**{k: v.to(device) for k, v in batch["lexicon_features"].items()})
            loss = self.terms.add_lexicon(loss, logs, out.pooled_embeddings, batch["lexicon_ids"])
        return loss, logs
