"""Aliases stated in wiki-lead first sentences: acronyms that match the title, names after "known as"."""

from __future__ import annotations

import pytest

from phrasezoo.methods.pearl.aliases.lead_aliases import initials, lead_alias_pairs, lead_aliases
from phrasezoo.resources.corpora import WikiLead
from phrasezoo.resources.splits import is_dev_title

pytestmark = pytest.mark.usefixtures("fresh_cache")  # a fresh cache per test, as in tests/data/


def test_acronyms_must_spell_the_title():
    assert initials("Light-emitting diode") == "LED"
    assert initials("Occupational safety and health", skip_function_words=True) == "OSH"
    lead = "Occupational safety and health (OSH) or occupational health and safety (OHS) is a field. More."
    assert lead_aliases("Occupational safety and health", lead) == ["OSH"]
    assert lead_aliases("Skepticism", "Skepticism (US) is doubt about knowledge.") == []  # not its initials


def test_names_after_known_as_are_cut_at_the_list():
    lead = "Sulawesi, also known as Celebes, is an island in Indonesia. It is big."
    assert lead_aliases("Sulawesi", lead) == ["Celebes"]
    lead = "Parvati, also called Uma and Gauri, is a goddess."
    assert lead_aliases("Parvati", lead) == ["Uma"]
    assert lead_aliases("Tomato", "The tomato is a plant called Tomato.") == []  # the title itself is no alias
    assert lead_aliases("Hat", "A hat is a head covering. It is known as Lid in one town.") == []  # first sentence only


def test_only_training_articles_give_pairs():
    titles = ["Light-emitting diode", "Mid-ocean ridge", "Unmanned aerial vehicle", "High-speed rail", "Sulawesi"]
    leads = [WikiLead(t, f"{t} ({initials(t)}) is a thing.", "", "") for t in titles[:4]]
    leads.append(WikiLead("Sulawesi", "Sulawesi, also known as Celebes, is an island.", "", ""))
    pairs = list(lead_alias_pairs(leads))
    assert {title for _, title in pairs} == {t for t in titles if not is_dev_title(t)}
    assert all(alias != title for alias, title in pairs)
