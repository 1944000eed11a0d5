"""SpanIndex: exact against brute force over every span, chunking, first stages, save/load, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.models.slice import span_index as span_index_module
from phrasezoo.models.slice.span_index import SpanIndex
from phrasezoo.models.slice.span_pooling import span_similarities

from .test_model import tiny_slice_model

LONG = " ".join(f"token{i % 17} word{i}" for i in range(45))  # ~90 words, several windows at 64 tokens
PASSAGES = [
    "Catching a glimpse of the ocean, I noticed a group of boys are playing soccer on the beach.",
    "The committee approved the new budget after a long debate about schools.",
    LONG,
    "Soccer.",
    "A blue and red airplane while in flight, soaring gracefully through the sky.",
]
QUERIES = ["boys playing soccer", "a plane in flight", "budget debate"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors (tests/conftest.py)


@pytest.fixture(scope="module")
def model():
    return tiny_slice_model()


@pytest.fixture(scope="module")
def index(model):
    return model.build_index(PASSAGES, max_words=6, batch_size=2)


def brute_force_spans(model, query_vector, passages, min_words, max_words, window_words=6):
    """Every (cosine, passage, word_start, word_end) from span_similarities over every window row.

    ``window_words``: the index's ``max_words``, which fixes its windows (and so the context of each token).
    """
    batch = model.passage_batch(passages, span_words=window_words)
    with torch.no_grad():
        out = model(**batch.model_inputs())
    query = torch.as_tensor(query_vector).expand(len(batch), -1)
    cos, valid = span_similarities(
        query, out.token_embeddings, batch.word_index, batch.word_mask, min_words, max_words, batch.start_mask
    )
    spans = []
    for row, start, k in valid.nonzero().tolist():
        first = int(batch.row_first_word[row])
        spans.append(
            (cos[row, start, k].item(), int(batch.row_passage[row]), first + start, first + start + min_words + k)
        )
    return sorted(spans, key=lambda s: -s[0])


def greedy(spans, top_k):
    chosen, taken = [], {}
    for value, passage, start, end in spans:
        if any(start < e and s < end for s, e in taken.get(passage, [])):
            continue
        chosen.append((value, passage, start, end))
        taken.setdefault(passage, []).append((start, end))
        if len(chosen) == top_k:
            break
    return chosen


def as_tuples(matches):
    return [(m.cosine, m.passage_index, m.word_start, m.word_end) for m in matches]


def assert_same(matches, expected):
    assert [(p, s, e) for _, p, s, e in as_tuples(matches)] == [(p, s, e) for _, p, s, e in expected]
    np.testing.assert_allclose([m.cosine for m in matches], [c for c, *_ in expected], atol=1e-5)


@pytest.mark.parametrize("min_words,max_words", [(1, 6), (2, 4), (1, 1)])
def test_search_without_nms_equals_brute_force(model, index, min_words, max_words):
    vectors = model.encode(QUERIES)
    results = index.search(vectors, top_k=15, min_words=min_words, max_words=max_words, nms=False)
    for q, matches in enumerate(results):
        expected = brute_force_spans(model, vectors[q], PASSAGES, min_words, max_words)[:15]
        assert_same(matches, expected)


def test_search_with_nms_equals_greedy_over_all_spans_even_in_tiny_chunks(model, index):
    vectors = model.encode(QUERIES)
    index.chunk_budget = 7  # one row per chunk: exercises the per-chunk cut-off and its refinement
    try:
        small_chunks = index.search(vectors, top_k=8)
    finally:
        index.chunk_budget = 2**23
    results = index.search(vectors, top_k=8)
    for q in range(len(QUERIES)):
        expected = greedy(brute_force_spans(model, vectors[q], PASSAGES, 1, 6), 8)
        assert_same(results[q], expected)
        assert_same(small_chunks[q], expected)
        spans_by_passage = {}
        for m in results[q]:
            for s, e in spans_by_passage.get(m.passage_index, []):
                assert m.word_end <= s or e <= m.word_start, "overlapping spans survived NMS"
            spans_by_passage.setdefault(m.passage_index, []).append((m.word_start, m.word_end))


def test_matches_carry_offsets_text_and_scores(index):
    for m in index.search("boys playing soccer", top_k=5):
        assert PASSAGES[m.passage_index][m.char_start : m.char_end] == m.text
        assert m.text.split() == PASSAGES[m.passage_index].split()[m.word_start : m.word_end]
        assert m.score01 == pytest.approx((1 + m.cosine) / 2)


def test_threshold_and_top_k(model, index):
    matches = index.search("boys playing soccer", top_k=50, nms=False)
    cut = matches[10].cosine
    above = index.search("boys playing soccer", top_k=50, threshold=cut, nms=False)
    assert len(above) >= 11 and all(m.cosine >= cut for m in above)
    assert len(index.search("boys playing soccer", top_k=3)) == 3
    assert index.search("boys playing soccer", threshold=1.01) == []


def test_windows_give_every_span_once(index):
    matches = index.search("token3 word20", top_k=10_000, nms=False)
    keys = [(m.passage_index, m.word_start, m.word_end) for m in matches]
    assert len(keys) == len(set(keys)) == index.n_spans()
    n_words = [len(p.split()) for p in PASSAGES]
    assert index.n_spans() == sum(sum(max(0, n - k + 1) for k in range(1, 7)) for n in n_words)
    assert (index.row_passage == 2).sum() > 1  # the long passage really is windowed


def test_passage_scores_are_the_best_span_per_passage(model, index):
    vectors = model.encode(QUERIES)
    scores = index.passage_scores(vectors, min_words=1, max_words=4)
    assert scores.shape == (len(QUERIES), len(PASSAGES))
    for q in range(len(QUERIES)):
        spans = brute_force_spans(model, vectors[q], PASSAGES, 1, 4)
        for p in range(len(PASSAGES)):
            assert scores[q, p] == pytest.approx(max(c for c, pp, *_ in spans if pp == p), abs=1e-5)


@pytest.mark.parametrize("first_stage", ["passage", "word"])
@pytest.mark.parametrize("use_faiss", [True, False])
def test_first_stage_with_all_candidates_is_exact(index, monkeypatch, first_stage, use_faiss):
    if use_faiss and span_index_module.faiss is None:
        pytest.skip("faiss is not installed")
    if not use_faiss:
        monkeypatch.setattr(span_index_module, "faiss", None)
    index._passage_faiss = index._word_faiss = None
    exact = index.search(QUERIES, top_k=5)
    staged = index.search(QUERIES, top_k=5, first_stage=first_stage, candidates=len(PASSAGES))
    for a, b in zip(exact, staged):
        assert_same(b, as_tuples(a))


def test_passage_first_stage_restricts_to_candidates(model, index):
    vector = model.encode("boys playing soccer")
    best_passage = int(np.argmax(index.passage_vectors @ vector))
    matches = index.search(vector, top_k=5, first_stage="passage", candidates=1)
    assert {m.passage_index for m in matches} == {best_passage}


def test_memory_is_words_not_spans(index):
    naive = index.naive_nbytes(index.n_spans(), index.dim)
    assert index.word_vectors.shape == (index.n_slots, index.dim)
    assert index.nbytes() < naive / 2


def test_save_load_round_trip_is_atomic_and_checked(model, index, tmp_path):
    folder = index.save(tmp_path / "idx")
    assert sorted(p.name for p in folder.iterdir()) == ["span_index.json", "span_index.npz"]  # no temp files left
    loaded = SpanIndex.load(folder, encoder=model.encode)
    for name in span_index_module.ARRAYS:
        np.testing.assert_array_equal(getattr(loaded, name), getattr(index, name))
    assert loaded.passages == PASSAGES and loaded.max_words == index.max_words
    assert as_tuples(loaded.search("a plane in flight", top_k=4)) == as_tuples(index.search("a plane in flight", 4))
    with pytest.raises(ValueError, match="no encoder"):
        SpanIndex.load(folder).search("a plane")
    other = model.build_index(PASSAGES[:2], max_words=3).save(tmp_path / "other")
    (folder / "span_index.json").write_bytes((other / "span_index.json").read_bytes())
    with pytest.raises(ValueError, match="different saves"):
        SpanIndex.load(folder)
    with pytest.raises(ValueError, match="no span index"):
        SpanIndex.load(tmp_path / "missing")


def test_float16_index_is_close(model, index):
    half = model.build_index(PASSAGES, max_words=6, dtype="float16")
    assert half.word_vectors.dtype == np.float16
    a, b = index.passage_scores(model.encode(QUERIES)), half.passage_scores(model.encode(QUERIES))
    np.testing.assert_allclose(a, b, atol=5e-3)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(queries="soccer", max_words=7), "exceeds the index"),
        (dict(queries="soccer", min_words=3, max_words=2), "min_words"),
        (dict(queries="soccer", max_words=0), "max_words"),
        (dict(queries="soccer", top_k=0), "top_k"),
        (dict(queries="   "), "empty"),
        (dict(queries=np.zeros(5, dtype=np.float32)), "d="),
        (dict(queries=[1, 2]), "Queries must be"),
        (dict(queries="soccer", first_stage="tokens"), "first_stage"),
    ],
)
def test_bad_search_input_raises(index, kwargs, message):
    with pytest.raises(ValueError, match=message):
        index.search(**kwargs)
