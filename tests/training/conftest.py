"""A tiny PEARL training task on a hand-made phrase table (no spaCy, no mining), for fast trainer tests."""

from __future__ import annotations

import random

import pytest

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.methods.pearl.task import PearlTask
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("pearl").tiny_model

PHRASES = [
    "the new york times", "new york post", "united states", "united kingdom", "machine learning", "deep learning",
    "political philosophy", "free association", "social anarchism", "voluntary institutions", "very difficult",
    "in the morning", "quickly enough", "the european union", "world war", "civil war",
]  # fmt: skip


def _noise(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    return word[:i] + word[i + 1 :] if len(word) > 1 else word + "x"


def make_task(model) -> PearlTask:
    dataset = {
        "phrase": PHRASES,
        "type_id": [i % 95 for i in range(len(PHRASES))],
        "hard_negatives": [
            [PHRASES[(i + 1) % len(PHRASES)], PHRASES[(i + 2) % len(PHRASES)]] for i in range(len(PHRASES))
        ],
    }
    return PearlTask(
        model,
        dataset,
        augment=lambda phrase, rng: rng.choice([phrase.upper(), _noise(phrase, rng)]),
        word_noise=_noise,
        char_pretrain={"steps": 3, "batch_size": 8, "vocabulary_size": 200},
    )


def tiny_training(**overrides) -> TrainingConfig:
    base = {"batch_size": 4, "max_steps": 6, "checkpoint_every": 2, "learning_rate": 1e-3, "log_every": 1, "seed": 3}
    return TrainingConfig(**{**base, **overrides})


@pytest.fixture
def tiny_setup():
    model = tiny_model()
    return model, make_task(model)


@pytest.fixture
def pearl_task():
    """Factory: ``pearl_task(model) -> PearlTask`` over the hand-made phrase table."""
    return make_task


@pytest.fixture
def training_config():
    """Factory: ``training_config(**overrides) -> TrainingConfig`` for a 6-step tiny run."""
    return tiny_training
