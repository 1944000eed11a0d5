"""methods/pearl/matcher.py: the hybrid matcher's combination for pearl-mini, found by the matcher through the
registry."""

from __future__ import annotations

from phrasezoo.match.combinations import LEARNED, default_combination, zoo_learned
from phrasezoo.match.scorers import DEFAULT_ENCODER


def test_pearl_minis_combination_is_found_by_its_encoder_name_and_is_calibrated():
    assert "pearl-mini" in zoo_learned() and "pearl-mini" not in LEARNED
    combination = default_combination("pearl-mini")
    assert combination.meta["encoder"] == "pearl-mini" and combination.meta["encoder_revision"].startswith("sha256:")
    # fitted on the default's features of its day (round 2); round 4 added token_sort to the default, not refitted here
    assert combination.meta["feature_set"] == "+hub +static +name words +fuzzy"
    assert set(combination.features) <= set(LEARNED[DEFAULT_ENCODER]["features"])
    assert 0.0 < combination.threshold_for(0.9) < 1.0
    assert default_combination("another-export").meta["encoder"] == DEFAULT_ENCODER  # no combination of its own
