"""The name benchmark's suite tasks: registration, and top-1 / MRR@10 against a KB (issue 43)."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.data.benchmarks.name_benchmark import DOMAINS, NameTask
from phrasezoo.encoders import CharJaccardEncoder
from phrasezoo.evaluation.tasks import GROUPS, TASKS, TaskContext
from phrasezoo.evaluation.tasks.names import rank_of_gold


def test_every_domain_has_a_dev_and_a_test_task():
    for domain in DOMAINS:
        for split in ("dev", "test"):
            name = f"names_{domain.replace('-', '_')}_{split}"
            assert name in TASKS and name in GROUPS[f"names_{split}"]
            assert TASKS[name]().metrics() == ["accuracy", "mrr10"]


def test_rank_of_gold_counts_ties_against_the_gold():
    scores = np.array([[0.9, 0.5, 0.1], [0.5, 0.5, 0.1], [0.2, 0.3, 0.4]])
    assert rank_of_gold(scores, np.array([0, 0, 0])).tolist() == [1, 2, 3]


def test_score_on_a_small_task():
    task = NameTask("acronyms", "dev", queries=["Dikens", "Chas Darwin"], gold=["Dickens", "Charles Darwin"],
                    kb=["Dickens", "Charles Darwin", "Charles Dickens", "Darwin Awards"], kinds=["noisy", "noisy"],
                    sources=["t", "t"])  # fmt: skip
    cls = TASKS["names_acronyms_dev"]
    results = cls().score(CharJaccardEncoder(progress=False), task, TaskContext())
    by_metric = {r.metric: r for r in results}
    assert by_metric["accuracy"].n == 2
    assert 0.0 <= by_metric["accuracy"].value <= by_metric["mrr10"].value <= 1.0
    assert by_metric["accuracy"].value == pytest.approx(1.0)
