"""SLICE's training task: the paper's span loss over (query, positive passage, negative passage) triplets.

Per batch, the queries are encoded on their own (mean of content-token vectors, ``SliceOutput.query_embedding``)
and all positive and negative passages in ONE forward pass (one row per passage, truncated at a word boundary to
``config.max_seq_length`` tokens). For each passage the best cosine between the query and any span of
1..``config.train_max_span_words`` words is taken from per-word prefix sums
(:func:`phrasezoo.models.slice.span_pooling.best_span_similarity`: all spans gathered at once, hard max), and the loss
is the paper's ``softplus(lambda * (sim_false - sim_true))`` with ``sim = (1 + cos) / 2``, ``lambda =
config.similarity_scale`` (30).

``passage_loss: true`` is the **control** of the CPU recipe: identical data, steps and lambda, but the passage side
is the mean of all its content tokens (SBERT-style whole-passage similarity), so any difference from SLICE comes
from the span max alone.

Validation: the held-out documents' triplets are scored before training (``prepare``) and after it (``facts``):
loss, accuracy (``cos_true > cos_false``) and the mean length of the chosen spans; both end up in the model card.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import torch
import torch.nn.functional as F

from phrasezoo.models.slice.span_pooling import best_span_similarity, masked_mean, slice_loss
from phrasezoo.objectives.distributed import unwrap_parallel

logger = logging.getLogger(__name__)


class _ArgDocs(dict):
    """``training.method_args`` of a SLICE recipe: name -> doc, with ``defaults`` (name -> default)."""

    def __init__(self, entries: dict[str, tuple[Any, str]]):
        super().__init__({name: doc for name, (_, doc) in entries.items()})
        self.defaults = {name: default for name, (default, _) in entries.items()}


METHOD_ARGS_DOCS = _ArgDocs(
    {
        "passage_loss": (False, "the control: whole-passage mean instead of the best span (same data and lambda)"),
        "valid_max_triplets": (400, "held-out triplets scored before and after training (0: none)"),
        "valid_batch_size": (32, "batch size of the validation pass"),
    }
)


class SliceTask:
    """Batches and loss of SLICE training (see the module docstring)."""

    averaged_prefixes = ("backbone.",)
    lora_modules_to_save: list[str] = []

    def __init__(
        self,
        model,
        triplets: list[tuple[str, str, str]],
        valid_triplets: list[tuple[str, str, str]] | None = None,
        passage_loss: bool = False,
        valid_max_triplets: int = 400,
        valid_batch_size: int = 32,
        facts: dict[str, Any] | None = None,
    ):
        if not triplets:
            raise ValueError("SLICE training needs (query, positive, negative) triplets; the training split is empty.")
        self.model = model
        self.triplets = list(triplets)
        self.valid = list(valid_triplets or [])[: max(0, valid_max_triplets)]
        self.passage_loss = passage_loss
        self.valid_batch_size = valid_batch_size
        self._facts = facts or {}
        self.valid_before: dict[str, float] | None = None

    # -------------------------------------------------------------------------------------------- the protocol
    def num_examples(self) -> int:
        return len(self.triplets)

    def prepare(self, model, accelerator) -> None:
        """Score the validation triplets with the starting weights (reported next to the final ones)."""
        if self.valid and accelerator.is_main_process:
            self.valid_before = self.validate(model)
            accelerator.print(f">> validation before training: {_fmt(self.valid_before)}")

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        """Queries tokenized alone; positives then negatives as one passage batch (word boundaries included)."""
        return self._batch([self.triplets[i] for i in indices])

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        cos_true, cos_false, span_words = self.similarities(model, batch)
        scale = _config(model).similarity_scale
        loss = slice_loss(cos_true, cos_false, scale)
        with torch.no_grad():
            logs = {
                "accuracy": float((cos_true > cos_false).float().mean()),
                "cos_true": float(cos_true.mean()),
                "cos_false": float(cos_false.mean()),
            }
            if span_words is not None:
                logs["span_words"] = float(span_words.float().mean())
        return loss, logs

    def facts(self) -> dict[str, Any]:
        facts = {
            "training triplets": len(self.triplets),
            "loss": "control: whole-passage mean (passage_loss)" if self.passage_loss else "SLICE best-span loss",
            **self._facts,
        }
        if self.valid:
            after = self.validate(self.model)
            logger.info("validation after training: %s", _fmt(after))
            print(f">> validation after training: {_fmt(after)}", flush=True)
            facts["validation triplets"] = len(self.valid)
            if self.valid_before is not None:
                facts.update({f"validation {k} (start)": round(v, 4) for k, v in self.valid_before.items()})
            facts.update({f"validation {k} (end)": round(v, 4) for k, v in after.items()})
        return facts

    # ------------------------------------------------------------------------------------------------- helpers
    def _batch(self, triplets: list[tuple[str, str, str]]) -> dict[str, Any]:
        config = self.model.config
        queries = self.model.tokenize([t[0] for t in triplets], max_length=config.query_max_length)
        passages = self.model.passage_batch([t[1] for t in triplets] + [t[2] for t in triplets], span_words=None)
        return {"queries": queries, "passages": passages, "size": len(triplets)}

    def similarities(self, model, batch: dict[str, Any]):
        """``(cos_true, cos_false, chosen span lengths or None)`` of a batch, differentiable."""
        device = next(model.parameters()).device
        config = _config(model)
        query = model(**{k: v.to(device) for k, v in batch["queries"].items()}).query_embedding.float()
        passages = batch["passages"]
        out = model(**passages.model_inputs(device))
        tokens = out.token_embeddings.float()  # prefix sums in fp32 even under bf16 autocast
        word_index = passages.word_index.to(device)
        size = batch["size"]
        both = torch.cat([query, query])
        with torch.autocast(device_type=device.type, enabled=False):  # similarities in fp32 even under autocast
            return self._score(both, tokens, word_index, passages.word_mask.to(device), config, size)

    def _score(self, both, tokens, word_index, word_mask, config, size):
        if self.passage_loss:
            content = word_index >= 0
            passage_vectors = masked_mean(tokens, content)
            cos = F.cosine_similarity(both, passage_vectors, dim=-1)
            span_words = None
        else:
            cos, span = best_span_similarity(
                both, tokens, word_index, word_mask, min_words=1, max_words=config.train_max_span_words
            )
            span_words = (span[:, 1] - span[:, 0]).detach()
        return cos[:size], cos[size:], span_words

    @torch.no_grad()
    def validate(self, model) -> dict[str, float]:
        """Loss, accuracy and mean chosen-span length on the validation triplets (eval mode, no gradients)."""
        was_training = model.training
        model.eval()
        scale = _config(model).similarity_scale
        trues, falses, lengths = [], [], []
        for start in range(0, len(self.valid), self.valid_batch_size):
            batch = self._batch(self.valid[start : start + self.valid_batch_size])
            cos_true, cos_false, span_words = self.similarities(model, batch)
            trues.append(cos_true)
            falses.append(cos_false)
            if span_words is not None:
                lengths.append(span_words.float())
        if was_training:
            model.train()
        cos_true, cos_false = torch.cat(trues), torch.cat(falses)
        result = {
            "loss": float(slice_loss(cos_true, cos_false, scale)),
            "accuracy": float((cos_true > cos_false).float().mean()),
        }
        if lengths:
            result["span words"] = float(torch.cat(lengths).mean())
        return result


def _config(model):
    """The SliceConfig of a model, also through DDP/peft wrappers."""
    return unwrap_parallel(model).config


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.4f}" for k, v in values.items())
