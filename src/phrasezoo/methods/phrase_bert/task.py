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
from phrasezoo.objectives.losses import similarity_distillation, triplet_loss


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
        distill_weight: float = 0.0,
        teacher=None,
        lexicon_weight: float = 0.0,
        lexicon=None,
        facts: dict[str, Any] | None = None,
    ):
        if not paraphrase_triples and not context_triples:
            raise ValueError("Phrase-BERT training needs paraphrase or context triples; both sets are empty.")
        if distill_weight and teacher is None:
            raise ValueError(
                "distill_weight > 0 needs teacher embeddings (phrasezoo.objectives.teacher.teacher_embeddings)."
            )
        if lexicon_weight and lexicon is None:
            raise ValueError("lexicon_weight > 0 needs the lexicon term (phrasezoo.objectives.lexicon_distillation).")
        self.model = model
        self.triples = list(paraphrase_triples) + list(context_triples)
        self.n_paraphrase = len(paraphrase_triples)
        self.margin = margin
        self.normalize = normalize
        self.distill_weight = distill_weight
        self.teacher = teacher
        self.lexicon_weight = lexicon_weight
        self.lexicon = lexicon if lexicon_weight else None
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
            **(self.lexicon.facts() if self.lexicon is not None else {}),
        }

    def prepare(self, model, accelerator) -> None:
        """Nothing to pretrain: Phrase-BERT fine-tunes the backbone directly."""

    def prefetch(self, steps) -> None:
        """Embed the teacher rows of the coming steps' phrases (group 0 of :meth:`make_batch`) before the first step,
        in large batches, instead of a few in every step."""
        if self.distill_weight and hasattr(self.teacher, "prefetch"):
            self.teacher.prefetch(
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
        if self.lexicon is not None:
            ids, words = self.lexicon.sample(rng)
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
        if self.distill_weight and vectors[0] is not None:
            rows, found = self.teacher.lookup(batch["phrases"])
            distill = similarity_distillation(vectors[0], rows.to(device), found.to(device))
            loss = loss + self.distill_weight * distill
            logs["distill"] = float(distill.detach())
        if self.lexicon is not None:
            out = model(**{k: v.to(device) for k, v in batch["lexicon_features"].items()})
            lexicon = self.lexicon.loss(out.pooled_embeddings, batch["lexicon_ids"])
            loss = loss + self.lexicon_weight * lexicon
            logs["lexicon"] = float(lexicon.detach())
        return loss, logs


def drop_benchmark_triples(paraphrase_triples: list, context_triples: list, mode: str) -> tuple[list, list, str]:
    """Both triple lists without the triples that touch a test-benchmark item in ``mode`` of
    :mod:`phrasezoo.data.benchmark_filter` (a paraphrase triple's three phrases and their pairs; a context triple's
    phrase and contexts, by equality and by containment of benchmark sentences), and how many went from each."""
    from phrasezoo.data.benchmark_filter import load_blocklist, remove_benchmark_items

    blocklist = load_blocklist()
    paraphrase, p_report = remove_benchmark_items(paraphrase_triples, blocklist=blocklist, mode=mode, log=False)
    context, c_report = remove_benchmark_items(context_triples, blocklist=blocklist, mode=mode, log=False)
    return (
        paraphrase,
        context,
        f"paraphrase {p_report.dropped} of {p_report.total}, context {c_report.dropped} of {c_report.total}",
    )


def build_task(recipe, model: PhraseBertModel, accelerator) -> PhraseBertTask:
    """Build both training sets (cached; the main process first) and the task around them.

    ``recipe.data`` holds the arguments of :func:`phrasezoo.methods.phrase_bert.data.build_phrase_bert_data`; the
    mask token defaults to the model tokenizer's. ``recipe.training.method_args``: see ``METHOD.args["task"]``.
    """
    from phrasezoo.registry import get_method, resolve_args

    from .data import build_phrase_bert_data

    data = dict(recipe.data)
    data.setdefault("mask_token", model.mask_token)
    filter_mode = data.pop("benchmark_filter", None)
    args = resolve_args(get_method("phrase_bert"), "task", recipe.training.method_args)
    with accelerator.main_process_first():
        built = build_phrase_bert_data(**data, progress=accelerator.is_main_process)
    facts = {f"data: {k}": v for k, v in built.stats.items()}
    facts["objectives"] = ", ".join(data.get("objectives", ("paraphrase", "context")))
    paraphrase_triples, context_triples = built.paraphrase_triples(), built.context_triples()
    if filter_mode:
        paraphrase_triples, context_triples, dropped = drop_benchmark_triples(
            paraphrase_triples, context_triples, filter_mode
        )
        facts[f"triples dropped by the benchmark filter ({filter_mode})"] = dropped
    teacher = None
    if args["distill_weight"]:
        from phrasezoo.objectives.teacher import teacher_embeddings

        phrases = {t for triple in paraphrase_triples for t in triple} | {t[0] for t in context_triples}
        with accelerator.main_process_first():
            teacher = teacher_embeddings(
                sorted(p for p in phrases if p.strip()), args["teacher"], progress=accelerator.is_main_process
            )
        facts["teacher"] = f"{teacher.teacher} ({len(teacher)} phrases)"
    lexicon = None
    if args["lexicon_weight"]:
        from phrasezoo.objectives.lexicon_distillation import build_lexicon_distillation

        with accelerator.main_process_first():
            lexicon = build_lexicon_distillation(
                args["lexicon"], args["teacher"], filter_mode, progress=accelerator.is_main_process
            )
    return PhraseBertTask(
        model,
        paraphrase_triples,
        context_triples,
        margin=args["margin"],
        normalize=args["normalize"],
        distill_weight=args["distill_weight"],
        teacher=teacher,
        lexicon_weight=args["lexicon_weight"],
        lexicon=lexicon,
        facts=facts,
    )
