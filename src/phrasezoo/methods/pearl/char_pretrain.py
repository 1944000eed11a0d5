"""PEARL's character-encoder pretraining (LOVE): words and their typos learn to land on the words' vectors.

Runs once before the main contrastive loop (:meth:`PearlTask.prepare`). The paper's character encoder mimics word
vectors from characters and word pieces; GloVe 50-d is the embedded default.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.resources import load_word_vectors

#: ``training.method_args.char_pretrain`` keys of a PEARL recipe and their defaults.
CHAR_PRETRAIN_DEFAULTS = {
    "steps": 600,
    "batch_size": 256,
    "learning_rate": 2e-3,
    "temperature": 0.1,
    "vocabulary_size": 40000,
    "typo_probability": 0.5,
    "word_vectors": "glove-6b-50d",
}


def pretrain_char_encoder(
    model: PearlModel,
    word_noise: Callable[[str, random.Random], str],
    options: dict[str, Any],
    progress: bool = True,
) -> dict[str, Any]:
    """Pretrain ``model.char_encoder`` with ``options`` (see :data:`CHAR_PRETRAIN_DEFAULTS`); returns card facts."""
    options = {**CHAR_PRETRAIN_DEFAULTS, **options}
    if model.char_encoder is None or not options["steps"]:
        return {}
    table = load_word_vectors(options["word_vectors"])
    if table.dim != model.config.char_word_dim:
        raise ValueError(
            f"char_word_dim={model.config.char_word_dim} but {options['word_vectors']} has {table.dim}-d vectors; "
            "set model.char_word_dim to the word-vector size in the recipe."
        )
    words, targets = _mimic_vocabulary(table, options["vocabulary_size"])
    targets = torch.from_numpy(targets)
    encoder = model.char_encoder
    optimizer = torch.optim.Adam(encoder.parameters(), lr=options["learning_rate"])
    rng = random.Random(0)
    encoder.train()
    bar = tqdm(range(options["steps"]), desc="char encoder (LOVE mimic)", disable=not progress)
    for _ in bar:
        idx = rng.sample(range(len(words)), options["batch_size"])
        batch_words = [words[i] for i in idx]
        noisy = [
            word_noise(w, rng) if rng.random() < options["typo_probability"] else w.capitalize() for w in batch_words
        ]
        feats = model.word_features(batch_words + noisy)
        predicted = encoder.encode_words(feats["char_ids"], feats["piece_ids"])
        target = targets[idx]
        both = torch.cat([target, target])
        loss = _mimic_loss(predicted, both, options["temperature"])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        bar.set_postfix(loss=f"{float(loss.detach()):.3f}")
    return {"char_pretrain_steps": options["steps"], "char_pretrain_vocabulary": len(words)}


def _mimic_loss(predicted: torch.Tensor, targets: torch.Tensor, temperature: float) -> torch.Tensor:
    """LOVE's objective: each predicted vector is closest to its own word's target among the batch's targets."""
    unique_targets = targets[: targets.shape[0] // 2]
    n = unique_targets.shape[0]
    logits = predicted @ unique_targets.T / temperature
    labels = torch.arange(n, device=predicted.device).repeat(2)
    return F.cross_entropy(logits, labels) + (1 - (predicted * targets).sum(-1)).mean()


def _mimic_vocabulary(table, size: int) -> tuple[list[str], np.ndarray]:
    """The ``size`` most frequent alphabetic words of the table and their L2-normalised vectors."""
    chosen = [i for i, w in enumerate(table.words[: size * 3]) if w.isalpha()][:size]
    vectors = table.vectors[chosen]
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)
    return [table.words[i] for i in chosen], vectors.astype(np.float32)
