"""What training leaves out: the dev suite's strings, the name benchmark's scored strings and training entities."""

from __future__ import annotations

import pytest

from phrasezoo.data.benchmarks import dev_sets, held_out
from phrasezoo.resources.splits import normalize


def test_dev_set_strings_are_the_normal_forms_of_every_dev_string(monkeypatch):
    fake = {
        "alias": {"queries": ["I-20"], "candidates": ["Interstate 20 in Alabama"], "gold": [[0]]},
        "wordsim": {"simlex": {"pairs": [["Old  Car", "vehicle", 3.5]]}},
    }
    monkeypatch.setattr(dev_sets, "load_dev_set", lambda source, **_: fake[source])
    strings = held_out.dev_set_strings(("alias", "wordsim"))
    assert strings == {"i 20", "interstate 20 in alabama", "old car", "vehicle"}


@pytest.mark.slow
def test_training_entities_hold_no_dev_or_test_string(built, train_strings):
    scored = {normalize(s) for task in built.values() for s in task.queries + task.gold}
    assert held_out.scored_strings() == scored
    assert train_strings and not scored & train_strings
