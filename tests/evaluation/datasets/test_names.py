"""The name benchmark as the evaluation reads it: the ``calib`` split and the tasks by domain and split."""

from __future__ import annotations

import pytest

from phrasezoo.data.benchmarks import held_out
from phrasezoo.data.benchmarks import name_benchmark as nb
from phrasezoo.evaluation.datasets import names
from phrasezoo.resources.splits import normalize


@pytest.mark.slow
def test_calibration_split_holds_only_train_entities_and_no_scored_string(built, train_entities, train_strings):
    scored = held_out.scored_strings()
    train = train_strings
    tasks = names.build_calibration(train_entities)  # what load_name_task(domain, "calib") caches
    for domain in nb.DOMAINS:
        task = tasks[f"names-{domain}-{nb.CALIB}"]
        strings = {normalize(s) for s in task.queries + task.gold}
        assert not strings & scored, domain  # no dev or test query or gold
        assert {normalize(g) for g in task.gold} <= train, domain  # golds are train entities' names
        assert set(task.gold) <= set(task.kb) and len(task.queries) >= 1000, domain
    with pytest.raises(ValueError, match="dev, test, calib"):
        names.load_name_task("acronyms", "train")
