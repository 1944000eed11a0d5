"""The lexical channels and clues of phrasezoo.match: TF-IDF as scikit-learn computes it, numbers, acronyms, cores."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from phrasezoo.match.features.lexical import (
    TfidfChannel,
    acronym_expansions,
    acronym_match,
    core_name,
    normal_form,
    number_agreement,
    numbers_of,
    sparse_top_k,
)

NAMES = ["The New York Times", "New York Post", "Washington Post", "2012 Summer Olympics", "apple pie"]


def test_char_channel_is_polyfuzz_skrub_tfidf_and_survives_its_state():
    channel = TfidfChannel("char").fit(NAMES)
    reference = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit(NAMES)
    queries = ["NY Times", "Summer Olympics 2012"]
    np.testing.assert_allclose(channel.transform(queries).toarray(), reference.transform(queries).toarray(), atol=1e-6)
    again = TfidfChannel.from_state(channel.state())
    np.testing.assert_allclose(again.transform(queries).toarray(), channel.transform(queries).toarray(), atol=1e-7)


def test_word_channel_fits_a_table_without_any_word():
    channel = TfidfChannel("word").fit(["...", "!!"])
    assert channel.transform(["apple"]).nnz == 0


def test_sparse_top_k_matches_a_dense_search():
    channel = TfidfChannel("char").fit(NAMES)
    queries = channel.transform(["new york", "olympics", "zzz"])
    reference = channel.transform(NAMES)
    scores, ids = sparse_top_k(queries, reference, 3)
    dense = (queries @ reference.T).toarray()
    for row in range(2):
        expected = [i for i in np.argsort(-dense[row], kind="stable")[:3] if dense[row, i] > 0]
        assert ids[row].tolist() == expected + [-1] * (3 - len(expected))  # rows sharing no n-gram are not listed
        np.testing.assert_allclose(scores[row][: len(expected)], dense[row][expected], atol=1e-6)
    assert ids[2].tolist() == [-1, -1, -1]


def test_sparse_top_k_answers_do_not_depend_on_threads_or_chunks():
    names = NAMES + [f"{a} {b}" for a in ("New", "Old", "Great") for b in ("York", "Post", "Times", "pie")]
    channel = TfidfChannel("char").fit(names)
    reference = channel.transform(names)
    queries = channel.transform(["new york", "", "olympics 2012", "old pie", "zzz", "great times"])
    whole = sparse_top_k(queries, reference, 4, threads=1)
    assert whole[1][1].tolist() == [-1] * 4 and whole[1][4].tolist() == [-1] * 4  # empty, or no n-gram it knows
    for kwargs in ({"threads": 2}, {"chunk": 1, "threads": 1}, {"chunk": 2, "threads": 2}):
        for got, expected in zip(sparse_top_k(queries, reference, 4, **kwargs), whole):
            np.testing.assert_array_equal(got, expected)


def test_sparse_top_k_breaks_ties_past_the_margin_by_row_id():
    """Thirty identical names tie at the top: the product keeps k + TIE_MARGIN of them in an order of its own, and
    the answer must still be the lowest row ids, as a full sort gives."""
    from phrasezoo.match.features.lexical import TIE_MARGIN

    names = ["Acme Holdings"] * 30 + ["Acme Holding", "Zeta Corp"]
    channel = TfidfChannel("char").fit(names)
    reference = channel.transform(names)
    assert 3 + TIE_MARGIN < 30
    scores, ids = sparse_top_k(channel.transform(["Acme Holdings", "acme holding"]), reference, 3)
    assert ids[0].tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores[0], 1.0, atol=1e-6)
    assert ids[1].tolist()[0] == 30  # the exact string wins over the thirty near ties


@pytest.mark.parametrize(
    ("text", "numbers"),
    [("2012 Wisconsin Badgers football team", {2012}), ("Henry VIII of England", {8}), ("World War II", {2}),
     ("I am Legend", set()), ("1998–99 Serie A", {1998, 99}), ("CD Projekt", set()), ("Super Bowl XLV", {45})],
)  # fmt: skip
def test_numbers_of_names(text, numbers):
    assert numbers_of(text) == numbers


def test_number_agreement_reads_two_digit_years_and_flags_siblings():
    assert number_agreement(numbers_of("1998–99 Serie A"), numbers_of("1998–1999 Serie A")) == (1.0, 0.0)
    assert number_agreement(numbers_of("2012 Badgers"), numbers_of("2013 Badgers")) == (0.0, 1.0)
    assert number_agreement(numbers_of("2012 Badgers"), numbers_of("Badgers")) == (0.0, 0.0)


def test_acronyms():
    assert acronym_match("NYT", "The New York Times") == 1.0
    assert acronym_match("FBI", "Federal Bureau of Investigation") == 1.0
    assert acronym_match("U.S.A.", "United States of America") == 1.0
    assert acronym_match("JPM", "JPMorgan Chase") == 0.5  # the initials' prefix (J, P, M of "JPMorgan")
    assert acronym_match("NY Times", "New York Times") == 0.0
    assert acronym_expansions("NCAA v. Smith", "National Collegiate Athletic Association v. Smith") == 1.0
    assert acronym_expansions("Davis v. FEC", "Davis v. Federal Election Commission") == 1.0
    assert acronym_expansions("apple", "banana") == 0.0


def test_core_and_normal_forms():
    assert core_name("I Will (The Beatles song)") == core_name("I Will") == "i will"
    assert core_name("Paris, Texas") == "paris" and core_name("(song)") == "song"
    assert normal_form("New-York  Times!") == "new york times"
