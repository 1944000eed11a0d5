"""Property tests of ``join`` and ``link`` on bad input (issue 34/36): arbitrary unicode, empty and whitespace strings,
None/NaN, numbers, very long strings, duplicate keys and mismatched columns.

The rule: a clear ``ValueError`` that names the bad row or argument, or a documented result in which every input row
is accounted for (rows in = rows out + reported skips). Never a crash deep in torch, faiss or pandas.
"""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phrasezoo.match import Matcher, join, link
from phrasezoo.match.scoring.hybrid import HybridScorer
from tests.properties import SETTINGS
from tests.properties import cells as shared_cells


class HashVectors:
    """A deterministic embedding (hash-seeded random unit vectors): a model stand-in that is fast on any string."""

    def encode(self, texts, **kwargs):
        rows = [np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=16) for t in texts]
        return np.asarray(rows, dtype=np.float32)


texts = st.text(min_size=0, max_size=30)  # every unicode category, surrogates excluded by hypothesis
cells = st.one_of(
    shared_cells,  # the suite's user cells (issue 34): odd unicode incl. unpaired surrogates, bytes, long text
    texts,
    st.sampled_from(
        [
            "",
            "   ",
            "\t\n",
            "2012 Wisconsin Badgers",
            "NYT",
            "Henry VIII",
            "1998–99",
            "?!…—",
            "Москва Moscow 東京 Tōkyō",
            "C. Dickens",
            "I.B.M.",
            "x" * 10_000,
        ]
    ),
    st.none(),
    st.just(float("nan")),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(min_size=3000, max_size=3000, alphabet="ab xyz09"),
)
tables = st.lists(cells, min_size=0, max_size=8)
MODELS = ["rapidfuzz:WRatio", "tfidf:char", "tfidf:word", "vectors", "hybrid"]
#: the suite's settings (derandomised, few examples); no deadline: the first call imports faiss and scikit-learn
SETTINGS = settings(SETTINGS, deadline=None)


def model_for(name: str):
    if name == "vectors":
        return HashVectors()
    if name == "hybrid":
        return HybridScorer(HashVectors(), progress=False)
    return name


def is_missing(value) -> bool:
    if isinstance(value, bytes) and not unreadable(value):
        value = value.decode("utf-8")
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def unreadable(value) -> bool:
    """Bytes that are not UTF-8: the one kind of text cell that is an error naming its row (never skipped)."""
    if not isinstance(value, bytes):
        return False
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def named_row_is_bad(message: str, side: str, values: list) -> bool:
    """``message`` names a row of ``side`` ("The right row 3 holds ...") whose value no matcher can read."""
    found = re.search(rf"{side} row (-?\d+)", message)
    return found is not None and (unreadable(values[int(found.group(1))]) or "not a string" in message)


def accounted(frame, labels, label_column: str, skipped_key: str) -> None:
    """Every input label is in the result (rank 1 or an unmatched row) or reported as skipped, exactly once."""
    firsts = frame[(frame["rank"] == 1) | frame["rank"].isna()][label_column].tolist()
    skipped = frame.attrs["skipped"].get(skipped_key, [])
    assert sorted(map(repr, firsts + skipped)) == sorted(map(repr, labels))
    assert set(map(repr, frame.attrs["unmatched"])) <= set(map(repr, labels))


@SETTINGS
@given(left=tables, right=tables, model=st.sampled_from(MODELS), top_k=st.integers(1, 3),
       threshold=st.sampled_from([None, 0.3]))  # fmt: skip
def test_join_accounts_for_every_right_row_or_raises_a_clear_error(left, right, model, top_k, threshold):
    try:
        out = join(left, right, model=model_for(model), top_k=top_k, threshold=threshold, on_missing="skip",
                   keep_unmatched=True, progress=False)  # fmt: skip
    except ValueError as err:
        message = str(err)
        if named_row_is_bad(message, "right", right):  # a right cell that is not text: named, not skipped
            return
        assert "left" in message  # otherwise only the reference table can make a join impossible
        assert all(is_missing(v) for v in left) or named_row_is_bad(message, "left", left)
        return
    accounted(out, list(range(len(right))), "right_index", "right")
    assert out["score"].dropna().between(-1.0001, 1.0001).all()
    matched = out.dropna(subset=["left_index"])
    assert (matched.groupby("right_index")["rank"].max() <= top_k).all()
    for _, row in matched.iterrows():
        assert left[row["left_index"]] is row["left"] or left[row["left_index"]] == row["left"]


@SETTINGS
@given(left=tables, right=tables)
def test_join_on_missing_raise_names_the_rows(left, right):
    missing_right = [i for i, v in enumerate(right) if is_missing(v)]
    try:
        out = join(left, right, model="rapidfuzz:ratio", progress=False)
    except ValueError as err:
        assert "missing or empty" in str(err) or "no values" in str(err) or "left" in str(err)
        if missing_right and "right" in str(err):
            assert str(missing_right[0]) in str(err)
        return
    assert not missing_right
    assert out["right_index"].tolist() == list(range(len(right)))


@SETTINGS
@given(
    kb=st.dictionaries(
        st.one_of(st.text(max_size=5), st.integers()), st.one_of(texts, st.lists(texts, max_size=3)), max_size=6
    ),  # fmt: skip
    mentions=tables,
    model=st.sampled_from(MODELS),
)
def test_link_accounts_for_every_mention_and_lists_each_entity_once(kb, mentions, model):
    try:
        out = link(mentions, kb, model=model_for(model), top_k=2, on_missing="skip", keep_unmatched=True,
                   progress=False)  # fmt: skip
    except ValueError as err:
        if named_row_is_bad(str(err), "mentions", mentions):  # a mention that is not text: named, not skipped
            return
        assert "kb" in str(err).lower()
        return
    accounted(out, list(range(len(mentions))), "mention_index", "mentions")
    linked = out.dropna(subset=["entity"])
    assert not linked.duplicated(["mention_index", "entity_id"]).any()
    for _, row in linked.iterrows():
        names = kb[row["entity_id"]]
        assert row["entity"] == names or row["entity"] in names


@SETTINGS
@given(labels=st.lists(st.sampled_from(["a", "b", 1]), min_size=1, max_size=6), data=st.data())
def test_duplicate_index_labels_are_kept_as_given(labels, data):
    values = data.draw(st.lists(st.sampled_from(["apple pie", "banana bread", "apple"]), min_size=len(labels),
                                max_size=len(labels)))  # fmt: skip
    right = pd.Series(values, index=labels)
    out = join(["apple pie", "banana bread", "apple pie"], right, model="tfidf:char", progress=False)
    assert out["right_index"].tolist() == labels
    assert out["left"].isin(["apple pie", "banana bread"]).all()


@pytest.mark.parametrize(
    ("left", "right", "kwargs", "message"),
    [
        (pd.DataFrame({"a": ["x"], "b": ["y"]}), ["x"], {}, "name the one to match"),
        (pd.DataFrame({"a": ["x"]}), ["x"], {"left_column": "title"}, "no column 'title'"),
        (pd.DataFrame([["x", "y"]], columns=["t", "t"]), ["x"], {"left_column": "t"}, "2 columns named 't'"),
        (["x"], ["x"], {"right_column": "title"}, "list has no columns"),
        (pd.DataFrame({"a": []}), ["x"], {}, "no values"),
        ([["x"], "y"], ["x"], {}, "row 0 holds a list"),
        (["x", True], ["x"], {}, "row 1 holds a bool"),
        ([b"\xff\xfe"], ["x"], {}, "not UTF-8"),
        (["x"], ["x"], {"threshold": "high"}, "threshold must be"),
        (["x"], ["x"], {"threshold": float("nan")}, "threshold must be"),
        (["x"], ["x"], {"top_k": 1.5}, "top_k"),
        (["x"], ["x"], {"top_k": True}, "top_k"),
        (["x"], ["x"], {"model": "tfidf:bigram"}, "Unknown TF-IDF channel"),
        (["x"], ["x"], {"threshold": "auto", "model": "tfidf:char"}, "needs a calibrated matcher"),
    ],
)
def test_bad_arguments_are_clear_value_errors(left, right, kwargs, message):
    kwargs.setdefault("model", "rapidfuzz:ratio")
    with pytest.raises(ValueError, match=message):
        join(left, right, progress=False, **kwargs)


def test_empty_right_table_gives_an_empty_result_with_the_columns():
    out = join(["apple pie"], [], model="tfidf:char", progress=False)
    assert out.empty and list(out.columns) == ["right_index", "right", "left_index", "left", "score", "rank"]
    assert out.attrs["unmatched"] == [] and out.attrs["skipped"] == {}


def test_numbers_are_matched_as_their_text_and_long_strings_by_their_start():
    long = "apple pie " + "x" * 100_000
    out = join([2012, "apple pie", 3.5, 7.0], ["2012", long, "3.5", "7"], model="rapidfuzz:ratio", progress=False)
    assert out["left"].tolist() == [2012, "apple pie", 3.5, 7.0]
    assert out["right"].tolist()[1] == long  # the whole value is shown


def test_skipped_rows_are_reported_and_warned_about():
    with pytest.warns(UserWarning, match="Skipped 2 right row"):
        out = join(["apple pie"], pd.Series(["apple", None, "  "], index=["a", "b", "c"]), model="tfidf:char",
                   on_missing="skip", progress=False)  # fmt: skip
    assert out["right_index"].tolist() == ["a"] and out.attrs["skipped"] == {"right": ["b", "c"]}


def test_unmatched_rows_are_listed_when_not_kept():
    out = join(["apple pie"], ["apple pie", "zzz"], model="tfidf:char", threshold=0.5, progress=False)
    assert out["right"].tolist() == ["apple pie"] and out.attrs["unmatched"] == [1]


def test_a_fitted_matcher_rejects_another_table():
    matcher = Matcher("tfidf:char", progress=False).fit(["a b", "c d"])
    with pytest.raises(ValueError, match="fitted on another left table"):
        join(["x y"], ["a b"], matcher=matcher)


@pytest.fixture(scope="module")
def default_matcher():
    return Matcher(progress=False).fit(["2012 Summer Olympics", "The New York Times", "FBI", "apple pie", "東京"])


@SETTINGS
@given(queries=tables)
def test_the_default_matcher_on_arbitrary_queries(default_matcher, queries):
    """The real default (MiniLM tokenizer and model, TF-IDF, features) on generated queries: a result for every
    usable query, skipped missing ones, or a clear error for a non-text cell."""
    try:
        out = default_matcher.transform(pd.Series(queries, dtype=object), threshold="auto", keep_unmatched=True)
    except ValueError as err:
        message = str(err)
        assert named_row_is_bad(message, "queries", queries) or "missing or empty" in message
        return
    assert out["right_index"].tolist() == list(range(len(queries)))
    assert out["score"].dropna().between(0, 1).all()
