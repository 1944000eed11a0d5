"""methods/pearl/matcher.json: the hybrid matcher's combination for pearl-mini, found by the matcher through the
registry's method folder."""

from __future__ import annotations

from phrasezoo.match.model.learned import DEFAULT_ENCODER, default_combination, shipped_learned, zoo_learned
from phrasezoo.zoo.registry import get_method


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
