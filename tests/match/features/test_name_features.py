"""The name features of the hybrid matcher and its acronym candidates (issue 43)."""

from __future__ import annotations

import numpy as np

from phrasezoo.match.features.name_features import (
    InitialsIndex,
    acronym_soft,
    cover,
    fuzzy_cover,
    head_match,
    initials_keys,
    name_feature_columns,
    short_form,
    token_sort,
)


def test_short_forms_of_people_and_not_of_siblings():
    assert short_form("Dickens", "Charles Dickens") == 1.0
    assert short_form("C. Dickens", "Charles John Huffam Dickens") == 1.0
    assert short_form("Charles John Huffam Dickens", "Charles Dickens") == 1.0  # either direction
    assert short_form("Dickens", "Dickens Prize for Fiction") == 0.0  # the last word must be kept
    assert short_form("M. Dickens", "Charles Dickens") == 0.0  # the initial must fit


def test_cover_sees_a_qualifier_the_query_lacks():
    assert cover("Titanic", "Titanic (1997 film)") == 1.0
    assert cover("Titanic (1997 film)", "Titanic") < 0.5
    assert cover("", "anything") == 1.0


def test_head_words_and_soft_acronyms():
    assert head_match("pulmonary fibrosis", "idiopathic fibrosis") == 1.0
    assert head_match("pulmonary fibrosis", "scarring of the lungs") == 0.0
    assert acronym_soft("MTTFF", "Mean Time To First Failure") == 1.0
    assert acronym_soft("BIOS", "Basic Input Output System") == 1.0
    assert acronym_soft("WHO", "World Trade Organization") == 0.0
    assert acronym_soft("Who", "World Health Organization") == 0.0  # not an acronym form


def test_initials_index_finds_what_an_acronym_spells():
    reference = ["World Trade Organization", "World Health Organization", "Bank of America", "Apple"]
    assert initials_keys("Bank of America") == ("boa", "ba")
    ids = InitialsIndex(reference).candidates(["WHO", "BoA", "apple", "BA"], k=3)
    assert ids[0].tolist() == [1, -1, -1]
    assert ids[1].tolist() == [2, -1, -1]
    assert (ids[2] == -1).all()  # not an acronym: no candidates from this channel
    assert ids[3].tolist() == [2, -1, -1]


def test_feature_columns_follow_the_pairs():
    columns = name_feature_columns({"short_form", "acronym_soft"}, ["Dickens", "BIOS"],
                                   ["Charles Dickens", "Basic Input Output System"],
                                   np.array([0, 0, 1]), np.array([0, 1, 1]))  # fmt: skip
    assert columns["short_form"].tolist() == [1.0, 0.0, 0.0]
    assert columns["acronym_soft"].tolist() == [0.0, 0.0, 1.0]
    assert set(columns) == {"short_form", "acronym_soft"}


def test_fuzzy_cover_forgives_one_typo_and_abbreviations_but_not_other_words():
    assert fuzzy_cover("Maon Information", "Main Information Packet") == 1.0  # one substitution
    assert fuzzy_cover("vioce mail", "voice mail") == 1.0  # a swap
    assert fuzzy_cover("Acme Intl Corp.", "Acme International Corporation") == 1.0  # abbreviations
    assert fuzzy_cover("Maon Information", "System Information") == 0.5
    assert fuzzy_cover("Single Intf.", "Single Sign On") == 0.5
    assert fuzzy_cover("cat", "bat") == 0.0  # short words need to be equal
    assert fuzzy_cover("", "anything") == 1.0 and fuzzy_cover("xy", "") == 0.0
    assert cover("Maon Information", "Main Information Packet") == 0.5  # the exact feature does not forgive


def test_token_sort_ignores_word_order_and_case_and_counts_edits():
    assert token_sort("Smith, John", "john smith") == 1.0  # reordered, punctuation and case dropped
    assert 0.85 < token_sort("Smith, John", "John Smtih") < 1.0  # one swap costs a little
    assert token_sort("WHO", "World Health Organization") < 0.3  # an acronym is not an edit away
    assert token_sort("", "") == 1.0 and token_sort("!!!", "a") == 0.0  # empty after normalising: defined


def test_token_sort_margin_is_the_gap_to_the_best_other_candidate():
    from phrasezoo.match.features.lexical import TfidfChannel
    from phrasezoo.match.features.pairs import PairFeatures

    reference = ["John Smith", "Jane Smith", "John Smithers"]
    char = TfidfChannel("char")
    char.fit(reference)
    pairs = PairFeatures(reference, char, None)
    out = pairs.compute(["token_sort", "token_sort_margin"], ["Smith John"], np.array([[0, 1, 2]]), None, None)
    ratio, margin = out[0, :, 0], out[0, :, 1]
    assert ratio[0] == 1.0 and ratio.argmax() == 0
    assert np.isclose(margin[0], ratio[0] - max(ratio[1], ratio[2]))
    assert np.allclose(margin[1:], ratio[1:] - ratio[0])
