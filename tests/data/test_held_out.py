"""What training leaves out: the dev suite's strings, the name benchmark's scored strings and training entities."""

from __future__ import annotations

import pytest

from phrasezoo.data import dev_sets, held_out
from phrasezoo.data import name_benchmark as nb
from phrasezoo.data import name_sources as ns
from phrasezoo.resources.splits import normalize


def test_dev_set_strings_are_the_normal_forms_of_every_dev_string(monkeypatch):
    fake = {
        "alias": {"queries": ["I-20"], "candidates": ["Interstate 20 in Alabama"], "gold": [[0]]},
        "wordsim": {"simlex": {"pairs": [["Old  Car", "vehicle", 3.5]]}},
    }
    monkeypatch.setattr(dev_sets, "load_dev_set", lambda source, **_: fake[source])
    strings = held_out.dev_set_strings(("alias", "wordsim"))
    assert strings == {"i 20", "interstate 20 in alabama", "old car", "vehicle"}


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
def test_training_entities_hold_no_dev_or_test_string(built, train_strings):
    scored = {normalize(s) for task in built.values() for s in task.queries + task.gold}
    assert held_out.scored_strings() == scored
    assert train_strings and not scored & train_strings
