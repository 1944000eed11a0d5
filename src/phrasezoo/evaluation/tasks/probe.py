"""Paraphrase classification (PPDB, PPDB-filtered): an MLP probe on frozen, concatenated pair embeddings.

Protocol (Phrase-BERT / PEARL): shuffle the pairs with a fixed seed, split 70/15/15, train an MLP with one hidden
layer of 256 ReLU units on ``[e1; e2]`` with Adam (batch 200, binary cross-entropy), stop early when dev accuracy
has not improved for 5 epochs (at most 100), and report test accuracy of the best-on-dev weights.

One deliberate difference from the PEARL script: its learning rate is 1e-4 on raw mean-pooled vectors (norm ~6 for
MiniLM), while the suite's encoders return unit vectors, ~6x smaller inputs; with lr 1e-4 the probe is still
under-fitted after 100 epochs (raw MiniLM: PPDB 0.949, PPDB-filtered 0.619). lr 1e-3 converges in 20-50 epochs
(0.961 / 0.712 with seed 0; seeds 0-2 average 0.962 / 0.700).

The probe is deterministic: its seeds are fixed (``ctx.seed`` .. ``ctx.seed + 4``, 0..4 by default, whatever model
seed is evaluated) and it trains on :data:`PROBE_THREADS` torch thread (the caller's thread count is restored
afterwards), so two runs on the same vectors give bit-identical scores and a spread over model seeds is the models'
variance, not the probe's. One thread is also the fast choice: the probe is tiny, and two OpenMP threads on a busy
2-core machine run ~15x slower. Every result records its seeds and thread count in ``details``.

One split is a noisy measurement: PPDB-filtered's test part is 2,330 pairs (a standard error of ~1 point), and a
different split or initialisation moves raw MiniLM's accuracy by about as much as the margins models are compared
on. The task therefore repeats the protocol for :data:`PROBE_SEEDS` seeds (``ctx.seed`` ... ``ctx.seed + 4``: split and
initialisation both change) and reports the mean test accuracy; every seed's test and dev accuracy is in the result's
``details``. Each repetition is the published protocol unchanged.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from phrasezoo.encoders import VECTORS, Encoder

from ..hub_dataset import HUB_DATASET, binary, text
from ..metrics import compute
from ..results import TaskResult
from .base import Task, TaskContext, register_task


@dataclass
class PairLabelData:
    """Phrase pairs with a binary label (1 = paraphrase)."""

    left: list[str]
    right: list[str]
    labels: list[int]


#: repetitions of the probe protocol (seeds ``ctx.seed`` .. ``ctx.seed + PROBE_SEEDS - 1``) averaged per result
PROBE_SEEDS = 5
#: torch threads the probe trains on (one: reductions keep one order, so a seed gives bit-identical scores)
PROBE_THREADS = 1


@dataclass
class ProbeConfig:
    hidden: int = 256
    lr: float = 1e-3
    batch_size: int = 200
    max_epochs: int = 100
    min_epochs: int = 3
    patience: int = 5


def read_ppdb(path) -> PairLabelData:
    """JSON list of ``[phrase1, phrase2, "pos"|"neg", (score)]``."""
    with open(path, encoding="utf8") as handle:
        rows = json.load(handle)
    return PairLabelData([r[0] for r in rows], [r[1] for r in rows], [1 if r[2] == "pos" else 0 for r in rows])


def split_indices(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shuffled 70/15/15 train/dev/test index arrays (boundaries rounded up, as in the reference code)."""
    order = np.random.default_rng(seed).permutation(n)
    a, b = math.ceil(n * 0.70), math.ceil(n * 0.85)
    return order[:a], order[a:b], order[b:]


def train_probe(
    features: np.ndarray, labels: np.ndarray, seed: int = 0, config: ProbeConfig | None = None
) -> tuple[float, float, int]:
    """Train the MLP probe on :data:`PROBE_THREADS` thread(s), restoring the caller's count afterwards; returns
    ``(test accuracy, best dev accuracy, epochs run)``, bit-identical for a seed."""
    config = config or ProbeConfig()
    threads = torch.get_num_threads()
    torch.set_num_threads(PROBE_THREADS)
    try:
        return _train(features, labels, seed, config)
    finally:
        torch.set_num_threads(threads)


def _train(features: np.ndarray, labels: np.ndarray, seed: int, config: ProbeConfig) -> tuple[float, float, int]:
    train, dev, test = split_indices(len(labels), seed)
    x = torch.as_tensor(features, dtype=torch.float32)
    y = torch.as_tensor(labels, dtype=torch.float32)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        probe = nn.Sequential(nn.Linear(x.shape[1], config.hidden), nn.ReLU(), nn.Linear(config.hidden, 1))
    optimizer = torch.optim.Adam(probe.parameters(), lr=config.lr)
    loss_fn = nn.BCEWithLogitsLoss()
    generator = torch.Generator().manual_seed(seed)
    train_idx = torch.as_tensor(train)

    def predict(idx: np.ndarray) -> torch.Tensor:
        probe.eval()
        with torch.inference_mode():
            logits = probe(x[idx]).squeeze(-1)
        probe.train()
        return (logits >= 0).float()

    def accuracy(idx: np.ndarray) -> float:  # the early-stopping signal on dev, part of training
        return float((predict(idx) == y[idx]).float().mean())

    best_dev, best_state, bad_epochs, epoch = -1.0, copy.deepcopy(probe.state_dict()), 0, 0
    for epoch in range(1, config.max_epochs + 1):
        for batch in train_idx[torch.randperm(len(train_idx), generator=generator)].split(config.batch_size):
            optimizer.zero_grad()
            loss_fn(probe(x[batch]).squeeze(-1), y[batch]).backward()
            optimizer.step()
        dev_acc = accuracy(dev)
        if dev_acc > best_dev:
            best_dev, best_state, bad_epochs = dev_acc, copy.deepcopy(probe.state_dict()), 0
        else:
            bad_epochs += 1
            if bad_epochs >= config.patience and epoch >= config.min_epochs:
                break
    probe.load_state_dict(best_state)
    predicted, gold = predict(test).int().tolist(), y[test].int().tolist()
    # the score: the `accuracy` metric module, in float32 as the probe's torch mean always gave it
    return compute("accuracy", predictions=predicted, references=gold, dtype="float32")["accuracy"], best_dev, epoch


class _Paraphrase(Task):
    main_metric = "accuracy"
    requires = frozenset({VECTORS})
    groups = ("all", "pearl")
    file_name: str

    @classmethod
    def from_hub_rows(cls, rows: list[dict]) -> PairLabelData:
        return PairLabelData(
            [text(r["phrase_1"]) for r in rows], [text(r["phrase_2"]) for r in rows], [binary(r["label"]) for r in rows]
        )

    def load_local(self, ctx: TaskContext) -> PairLabelData:
        return read_ppdb(ctx.path("ppdb", self.file_name))

    def score(self, encoder: Encoder, data: PairLabelData, ctx: TaskContext) -> list[TaskResult]:
        features = np.concatenate([encoder.encode(data.left), encoder.encode(data.right)], axis=1)
        labels = np.asarray(data.labels)
        seeds = [ctx.seed + i for i in range(PROBE_SEEDS)]
        runs = [train_probe(features, labels, seed=seed) for seed in seeds]
        tests = [acc for acc, _, _ in runs]
        details = {
            "per_seed": [
                {"seed": seed, "test": round(acc, 6), "dev": round(dev, 6), "epochs": epochs}
                for seed, (acc, dev, epochs) in zip(seeds, runs)
            ],
            "test_std": round(float(np.std(tests)), 6),
            "probe_seeds": seeds,
            "probe_threads": PROBE_THREADS,
        }
        notes = (
            f"MLP probe (256 ReLU) on [e1;e2], 70/15/15 split; mean test accuracy over {len(seeds)} fixed seeds "
            f"({seeds[0]}..{seeds[-1]}: split and initialisation), {PROBE_THREADS} thread, std {np.std(tests):.4f}"
        )
        n_test = len(data.labels) - math.ceil(len(data.labels) * 0.85)
        mean = compute("average", predictions=tests)["average"]
        return [self.result("accuracy", mean, n_test, notes, details=details)]


@register_task
class Ppdb(_Paraphrase):
    name = "ppdb"
    order = 3
    description = "PPDB 2.0 paraphrase classification (MLP probe accuracy)"
    hub_config = "ppdb"
    file_name = "ppdb.json"
    columns = (("accuracy", "PPDB"),)
    model_index = ("text-classification", "Paraphrase classification", HUB_DATASET, "ppdb", "PPDB (PEARL benchmark)")


@register_task
class PpdbFiltered(_Paraphrase):
    name = "ppdb_filtered"
    order = 4
    description = "PPDB-filtered paraphrase classification, lexical-overlap cues removed (MLP probe accuracy)"
    hub_config = "ppdb_filtered"
    file_name = "ppdb_filtered.json"
    columns = (("accuracy", "PPDB-f"),)
    model_index = (
        "text-classification", "Paraphrase classification", HUB_DATASET, "ppdb_filtered",
        "PPDB filtered (PEARL benchmark)",
    )  # fmt: skip
