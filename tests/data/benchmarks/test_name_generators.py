"""The generated forms of names: noisy variants, corrupted titles and look-alike siblings."""

from __future__ import annotations

import random

from phrasezoo.data.benchmarks import name_generators as ng
from phrasezoo.resources.splits import normalize


def test_noisy_variant_changes_the_name_and_keeps_it_recognisable():
    rng = random.Random(3)
    for name in ["International Business Machines Corporation", "University of Chicago", "Leonardo da Vinci"]:
        variant = ng.noisy_variant(name, random.Random(rng.random()))
        assert variant is not None and normalize(variant) != normalize(name)
    assert ng.noisy_variant("Bo", random.Random(0)) is None  # nothing to corrupt
    assert ng.ABBREVIATIONS["international"] == "Intl"


def test_sibling_mining_does_not_depend_on_the_hash_seed():
    """Equally rare words once went in set order, so two processes could mine different siblings (and builds of
    the benchmark differed by a few KB names)."""
    import subprocess
    import sys

    code = (
        "from phrasezoo.data.benchmarks.name_generators import SiblingMiner\n"
        "pool = ['amber birch', 'amber cedar', 'birch delta', 'cedar ember', 'delta fjord', 'ember fjord']\n"
        "print(SiblingMiner(pool).sharing_words('amber birch cedar delta ember fjord', 2))"  # six words, all tied
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2", "3", "4", "5")
    }  # fmt: skip
    assert len(outputs) == 1
