"""methods/pearl/matcher.json: the hybrid matcher's combination for pearl-mini, found by the matcher through the
registry's method folder."""

from __future__ import annotations

import hashlib
import json

from phrasezoo.match.model.learned import (
    DEFAULT_ENCODER,
    default_combination,
    read_learned,
    shipped_learned,
    zoo_learned,
)
from phrasezoo.zoo.registry import get_method

#: sha256 of ``json.dumps(LEARNED, sort_keys=True)`` for the ``LEARNED`` literal that matcher.json replaced (the
#: generated block of methods/pearl/matcher.py at 8ac19a8): equal digests, the same numbers to the last bit
LITERAL_DIGEST = "e4765fddaec71ee88a7f67b22bcdfabaa30de4948b6cd8ba6c70c8a89c1e9116"


def test_the_data_file_holds_the_numbers_of_the_literal_it_replaces():
    learned = read_learned(get_method("pearl").folder / "matcher.json")
    assert hashlib.sha256(json.dumps(learned, sort_keys=True).encode()).hexdigest() == LITERAL_DIGEST
    assert learned["pearl-mini"]["weights"][0] == 1.7093850148385277
    assert learned["pearl-mini"]["probability"] == [0.6214170437209631, 0.5642192771333031, -3.105147123280995]


def test_pearl_minis_combination_is_found_by_its_encoder_name_and_is_calibrated():
    assert (get_method("pearl").folder / "matcher.json").is_file()
    assert "pearl-mini" in zoo_learned() and "pearl-mini" not in shipped_learned()
    combination = default_combination("pearl-mini")
    assert combination.meta["encoder"] == "pearl-mini" and combination.meta["encoder_revision"].startswith("sha256:")
    # fitted on the default's features of its day (round 2); round 4 added token_sort to the default, not refitted here
    assert combination.meta["feature_set"] == "+hub +static +name words +fuzzy"
    assert set(combination.features) <= set(shipped_learned()[DEFAULT_ENCODER]["features"])
    assert 0.0 < combination.threshold_for(0.9) < 1.0
    assert default_combination("another-export").meta["encoder"] == DEFAULT_ENCODER  # no combination of its own
