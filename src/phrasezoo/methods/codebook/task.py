"""Training task of the codebook model: batches of texts with their co-occurring words, the NNSC loss (eq. 1-2).

The loop (:mod:`phrasezoo.training.loop`) asks for batches by example index; a batch is the texts tokenized by
the model's word-level tokenizer (``<eos>`` appended, right padding) and the target words as rows of the model's
frozen target matrix, padded with a mask. The loss itself (E-step NNSC solve with the facets detached, M-step
reconstruction error of the own targets minus that of a random other example's targets, with the code's guard) is
the model's: ``model(..., target_ids=..., target_mask=...)`` returns it. This task adds nothing to the objective.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # the GPU job rebuilds this task where datasets is not installed
    from datasets import Dataset


class CodebookTask:
    """Batches and loss of codebook training over ``(text, targets)`` examples (see module docstring)."""

    averaged_prefixes: tuple[str, ...] = ()  # no pretrained backbone to blend back in
    lora_modules_to_save: list[str] = []

    def __init__(self, model, examples: Dataset, facts: dict[str, Any] | None = None):
        if len(examples) == 0:
            raise ValueError("Codebook training needs examples; the training split is empty (check data.corpus).")
        self.model = model
        columns = examples.select_columns(["text", "targets"])[:]  # plain lists: per-row column access is slow
        self.texts: list[str] = columns["text"]
        self.targets: list[list[str]] = columns["targets"]
        self.target_index: dict[str, int] = model.target_word_index()
        self._facts = facts or {}

    def num_examples(self) -> int:
        return len(self.texts)

    def facts(self) -> dict[str, Any]:
        return {"training examples": len(self.texts), "n_facets": self.model.config.n_facets, **self._facts}

    def prepare(self, model, accelerator) -> None:
        """Nothing to pretrain: the word embeddings start from the word vectors (done when the model is built)."""

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        """Tokenized texts and padded target rows; examples are fixed at build time, so ``rng`` is unused."""
        features = self.model.tokenize([self.texts[i] for i in indices])  # <eos> appended, right padding
        rows = [[self.target_index[w] for w in self.targets[i] if w in self.target_index] for i in indices]
        width = max(1, max(len(r) for r in rows))
        target_ids = torch.zeros((len(rows), width), dtype=torch.long)
        target_mask = torch.zeros((len(rows), width), dtype=torch.bool)
        for b, row in enumerate(rows):
            target_ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
            target_mask[b, : len(row)] = True
        return {**features, "target_ids": target_ids, "target_mask": target_mask}

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        device = next(model.parameters()).device
        out = model(**{k: v.to(device) for k, v in batch.items()})
        logs = {}
        for name in ("loss_pos", "loss_neg"):
            value = getattr(out, name, None)
            if value is not None:
                logs[name] = float(value.detach())
        return out.loss, logs
