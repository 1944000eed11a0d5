"""phrasezoo.match: join/link on real encoders (MiniLM, rapidfuzz), faiss indexes, pandas in and out."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from phrasezoo.match import Matcher, join, link
from phrasezoo.match.engine.blocking import BlockIndex, char3, first_token, tokens
from phrasezoo.match.scoring.index import top_k_rows

LEFT = ["The New York Times", "Washington Post", "apple pie", "banana bread", "Los Angeles Times"]
RIGHT = ["NY Times", "banana bred", "apple pies", "Washington Post (newspaper)"]


@pytest.fixture(scope="module")
def minilm():
    return Matcher("baseline:minilm-l6", progress=False).scorer  # one loaded model for the module


class HashVectors:
    """A deterministic embedding (hash-seeded random unit vectors): index tests need many distinct vectors fast."""

    def encode(self, texts, **kwargs):
        rows = [np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=48) for t in texts]
        return np.asarray(rows, dtype=np.float32)


def test_join_and_link_take_the_same_matching_options():
    """link's signature repeats join's matching options (marked ``# Copied from`` in phrasezoo.match.api): same names,
    order, kinds, defaults and annotations, so that an option added to one is added to both."""
    import inspect

    def options(function) -> list[inspect.Parameter]:
        parameters = list(inspect.signature(function).parameters.values())
        positional = [p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD][2:]  # after the two inputs
        columns = {"left_column", "right_column", "mention_column", "kb_name_column", "kb_id_column"}
        keywords = [p for p in parameters if p.kind is p.KEYWORD_ONLY and p.name not in columns]
        return positional + keywords

    assert [p.name for p in options(join)][:4] == ["model", "top_k", "threshold", "blocking"]
    assert [p.name for p in options(join)][-2:] == ["matcher", "calibration"]
    assert options(link) == options(join)


def test_join_matches_each_right_value_to_its_left_value(minilm):
    out = join(LEFT, RIGHT, model=minilm)
    assert list(out.columns) == ["right_index", "right", "left_index", "left", "score", "rank"]
    assert out["left"].tolist() == ["The New York Times", "banana bread", "apple pie", "Washington Post"]
    assert out["rank"].tolist() == [1, 1, 1, 1]
    assert ((out["score"] > 0) & (out["score"] <= 1.0001)).all()


def test_join_dataframes_keeps_index_labels_and_orders_top_k(minilm):
    left = pd.DataFrame({"id": [10, 11, 12, 13, 14], "name": LEFT}, index=list("abcde"))
    right = pd.DataFrame({"vendor": RIGHT}, index=[100, 101, 102, 103])
    out = join(left, right, model=minilm, left_column="name", right_column="vendor", top_k=3)
    assert len(out) == 12
    first = out[out["right_index"] == 100]
    assert first["rank"].tolist() == [1, 2, 3]
    assert first["score"].is_monotonic_decreasing
    assert first.iloc[0]["left_index"] == "a"


def test_threshold_drops_weak_matches_and_keep_unmatched_keeps_the_row(minilm):
    out = join(LEFT, ["zebra crossing"], model=minilm, threshold=0.9)
    assert out.empty
    kept = join(LEFT, ["zebra crossing"], model=minilm, threshold=0.9, keep_unmatched=True)
    assert len(kept) == 1 and kept["left"].isna().all() and kept["score"].isna().all()


def test_rapidfuzz_join_scores_in_unit_range():
    out = join(LEFT, RIGHT, model="rapidfuzz:token_sort_ratio", top_k=2)
    assert out.groupby("right_index").size().tolist() == [2, 2, 2, 2]
    assert out["score"].between(0, 1).all()
    assert out[out["rank"] == 1]["left"].tolist()[1:3] == ["banana bread", "apple pie"]


def test_link_collapses_aliases_and_returns_entity_ids(minilm):
    kb = {"Q9684": ["The New York Times", "NYT", "New York Times"], "Q166032": "Washington Post", "Q1": "apple pie"}
    out = link(["NY Times", "apple pies"], kb, model=minilm, top_k=2)
    assert list(out.columns) == ["mention_index", "mention", "entity_id", "entity", "score", "rank"]
    nyt = out[out["mention"] == "NY Times"]
    assert nyt["entity_id"].tolist()[0] == "Q9684"
    assert nyt["entity_id"].is_unique  # one row per entity even though three aliases match
    assert out[out["mention"] == "apple pies"]["entity_id"].tolist()[0] == "Q1"


def test_link_dataframe_kb_with_id_column(minilm):
    kb = pd.DataFrame({"qid": ["A", "B", "B"], "label": ["apple pie", "banana bread", "banana loaf"]})
    out = link(pd.Series(["banana loaf recipe"]), kb, model=minilm, kb_name_column="label", kb_id_column="qid")
    assert out.iloc[0]["entity_id"] == "B" and out.iloc[0]["entity"] == "banana loaf"


def test_blocking_keys():
    assert first_token("The New-York Times") == ["the"]
    assert tokens("Times, The New York") == ["new", "times", "york"]
    assert "nyt" in char3("NY Times")
    blocks = BlockIndex(LEFT, "first_token")
    assert blocks.candidates("apple tart").tolist() == [2]
    assert blocks.candidates("zebra").size == 0


def test_blocked_join_agrees_with_exhaustive_join_when_blocks_hold_the_match(minilm):
    full = join(LEFT, RIGHT, model=minilm)
    blocked = join(LEFT, RIGHT, model=minilm, blocking="tokens")
    assert blocked["left"].tolist() == full["left"].tolist()
    assert np.allclose(blocked["score"], full["score"], atol=1e-5)


def test_blocking_fallback_none_leaves_rows_without_candidates_unmatched(minilm):
    out = join(LEFT, ["zebra crossing", "apple tart"], model=minilm, blocking="first_token", blocking_fallback="none")
    assert out["right"].tolist() == ["apple tart"]
    out_all = join(LEFT, ["zebra crossing"], model=minilm, blocking="first_token")
    assert len(out_all) == 1  # searched against the whole table instead


def test_blocked_rapidfuzz_join():
    out = join(LEFT, RIGHT, model="rapidfuzz:WRatio", blocking="char3")
    assert out["left"].tolist()[1:3] == ["banana bread", "apple pie"]


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_indexes_find_the_exact_neighbours(kind):
    reference = [f"entity number {i}" for i in range(3000)]
    queries = reference[::97]
    exact = Matcher(HashVectors(), index="flat", progress=False).fit(reference).search(queries, top_k=3)
    approx = Matcher(HashVectors(), index=kind, progress=False, nprobe=64).fit(reference).search(queries, top_k=3)
    assert (approx[1][:, 0] == exact[1][:, 0]).mean() >= 0.95
    assert np.allclose(approx[0][:, 0], 1.0, atol=1e-4)  # each query is in the table: cosine 1 with itself


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_fit_and_load_index_the_rows_in_chunks_and_report_them(kind, monkeypatch):
    """Fit (and load) build the faiss index, so the first search does not pause for it (minutes for HNSW at a
    million rows); rows go in by chunks and a bar counts them all, and chunked answers are the exact ones."""
    from phrasezoo.match.scoring import index as index_module
    from phrasezoo.match.scoring import scorers

    counted = []

    class Bar:
        def update(self, n):
            counted.append(n)

    monkeypatch.setattr(index_module, "ADD_CHUNK", 700)
    vectors = HashVectors().encode([f"entity number {i}" for i in range(3000)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    built = index_module.build_index(vectors, kind, progress=Bar(), nprobe=64)
    assert counted == [700] * 4 + [200] and built.ntotal == 3000
    scores, ids = index_module.search(built, vectors[::97], 1)
    assert (ids[:, 0] == np.arange(3000)[::97]).mean() >= 0.95 and np.allclose(scores[:, 0], 1.0, atol=1e-4)

    monkeypatch.setattr(scorers, "INDEX_BAR_ROWS", 10)  # the bar shows from 10 rows (progress=True below)
    matcher = Matcher(HashVectors(), index=kind, nprobe=64).fit([f"entity number {i}" for i in range(300)])
    assert matcher.scorer._index is not None and matcher.scorer._index.ntotal == 300
    restored = scorers.VectorScorer(HashVectors(), index=kind, index_options={"nprobe": 64}, progress=False)
    restored.restore({"vectors": vectors[:300]})  # what Matcher.load calls
    assert restored._index is not None and restored._index.ntotal == 300


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_a_vector_scorer_holds_its_rows_once(kind, monkeypatch):
    """Fitted in chunks outside the encoder's cache, then read from the index's own copy where it keeps one: at a
    million rows each extra copy is 1.5 GB (issue 47). The answers are those of one whole-table encoding."""
    import gc

    from phrasezoo.match.scoring import scorers

    monkeypatch.setattr(scorers, "FIT_CHUNK", 7)
    reference = [f"entity number {i}" for i in range(300)]
    scorer = scorers.VectorScorer(HashVectors(), index=kind, progress=False)
    scorer.fit(reference)
    whole = scorer.encoder.encode(reference, cache=False)
    np.testing.assert_allclose(scorer.vectors, whole, atol=1e-6)
    assert scorer.encoder._cache == {}  # the reference rows live in the scorer only
    index = scorer.index
    held_by_index = type(scorer.vectors.base).__name__ == "_IndexRows"  # a view of the index's memory
    assert held_by_index is (kind != "ivf")  # IVF keeps no whole rows: the scorer keeps its own
    if kind == "ivf":
        return
    del index
    gc.collect()
    np.testing.assert_allclose(scorer.vectors, whole, atol=1e-6)  # the view keeps the index alive
    rows = scorer.vectors
    scorer.fit(reference[:10])  # a new fit drops the index; a view taken before still reads valid memory
    gc.collect()
    np.testing.assert_allclose(rows, whole, atol=1e-6)
    assert scorer.search(reference[:5], 1)[1][:, 0].tolist() == [0, 1, 2, 3, 4]


def test_top_k_rows_orders_and_pads():
    scores, ids = top_k_rows(np.array([[0.1, 0.9, 0.5]], dtype=np.float32), 5)
    assert ids.tolist() == [[1, 2, 0, -1, -1]]
    assert scores[0, 0] == pytest.approx(0.9)


def test_same_accuracy_as_the_benchmark_suite_on_an_autofj_table(minilm):
    from phrasezoo.evaluation.tasks.autofj import join_accuracy, read_autofj

    table = read_autofj(["ShoppingMall"])[0]
    queries = table.queries()
    out = join(table.left, queries, model=minilm)
    ours = np.mean([p == table.gold[q] for p, q in zip(out["left"], queries)])
    suite, n = join_accuracy(minilm.encoder, table)
    assert n == len(queries) and ours == pytest.approx(suite)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: join(pd.DataFrame({"a": ["x"], "b": ["y"]}), ["x"], model=m), "name the one to match"),
        (lambda m: join(pd.DataFrame({"a": ["x"]}), ["x"], model=m, left_column="title"), "no column 'title'"),
        (lambda m: join(["x", None, float("nan")], ["x"], model=m), "2 missing or empty"),
        (lambda m: join([], ["x"], model=m), "no values"),
        (lambda m: join("abc", ["x"], model=m), "list of strings"),
        (lambda m: join(["x"], ["x"], model=m, threshold=5), "threshold"),
        (lambda m: join(["x"], ["x"], model=m, top_k=0), "top_k"),
        (lambda m: join(["x"], ["x"], model=m, blocking="soundex"), "Unknown blocking"),
        (lambda m: join(["x"], ["x"], model="rapidfuzz:nope"), "Unknown rapidfuzz scorer"),
        (lambda m: join(["x"], ["x"], model=m, index="lsh"), "index must be"),
        (lambda m: link(["x"], pd.DataFrame({"a": ["x"], "b": ["y"]}), model=m), "kb_name_column"),
    ],
)
def test_bad_input_raises_a_clear_value_error(minilm, call, message):
    with pytest.raises(ValueError, match=message):
        call(minilm)


def test_on_missing_skip_drops_empty_rows(minilm):
    out = join(LEFT, ["apple pies", "", None], model=minilm, on_missing="skip")
    assert out["right"].tolist() == ["apple pies"]
