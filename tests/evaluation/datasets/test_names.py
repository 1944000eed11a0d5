"""The name benchmark as the evaluation reads it: the ``calib`` split and the tasks by domain and split."""

from __future__ import annotations

import pytest

from phrasezoo.data import held_out
from phrasezoo.data import name_benchmark as nb
from phrasezoo.data import name_sources as ns
from phrasezoo.evaluation.datasets import names
from phrasezoo.resources.splits import normalize


@pytest.fixture(scope="module")
def built():
    try:
        return nb.load_benchmark()
    except ns.SourceMissing as err:  # the Debian dictionaries (bootstrap installs them as root)
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def train_entities(built) -> list:
    """The train entities (reading the sources takes ~20 s: once per module)."""
    return held_out.training_entities()


@pytest.fixture(scope="module")
def train_strings(train_entities) -> set[str]:
    return {s for e in train_entities for s in nb.entity_strings(e)}


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
