"""The teacher cache (a real encoder: the embedded MiniLM) and the similarity-distillation loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.objectives.losses import similarity_distillation
from phrasezoo.objectives.teacher import teacher_embeddings


def test_similarity_distillation_is_zero_for_the_same_geometry_and_width_free():
    torch.manual_seed(0)
    x = torch.randn(6, 8)
    rotation, _ = torch.linalg.qr(torch.randn(8, 8))
    # the same similarities in another basis and another width: nothing to learn
    wider = torch.cat([x @ rotation, torch.zeros(6, 4)], dim=1)
    assert similarity_distillation(x, wider).item() == pytest.approx(0.0, abs=1e-6)
    assert similarity_distillation(x, torch.randn(6, 5)).item() > 0.01


def test_similarity_distillation_mask_and_gradient():
    torch.manual_seed(0)
    student = torch.randn(5, 4, requires_grad=True)
    teacher = torch.randn(5, 9)
    mask = torch.tensor([True, True, False, True, False])
    loss = similarity_distillation(student, teacher, mask)
    loss.backward()
    assert student.grad[2].abs().sum() == 0 and student.grad[0].abs().sum() > 0
    # fewer than two rows with a teacher: nothing to compare, a zero loss that still backpropagates
    assert similarity_distillation(student, teacher, torch.tensor([True, False, False, False, False])).item() == 0.0
    with pytest.raises(ValueError, match="same rows"):
        similarity_distillation(student, teacher[:3])


def test_teacher_embeddings_are_cached_and_looked_up(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    texts = ["new york times", "machine learning", "new york times", "deep learning"]
    first = teacher_embeddings(texts, teacher="minilm-l6", progress=False)
    assert len(first) == 3 and first.vectors.shape == (3, 384)
    assert torch.allclose(first.vectors.norm(dim=1), torch.ones(3), atol=1e-5)
    cached = list((tmp_path / "teacher").glob("*.npy"))
    assert len(cached) == 1
    again = teacher_embeddings(list(reversed(texts)), teacher="minilm-l6", progress=False)
    assert torch.equal(again.vectors, first.vectors)  # same strings -> the cached matrix
    rows, found = first.lookup(["deep learning", "unknown phrase"])
    assert found.tolist() == [True, False] and rows[1].abs().sum() == 0
    assert torch.equal(rows[0], first.vectors[first.index["deep learning"]])
    with pytest.raises(ValueError, match="non-empty"):
        teacher_embeddings(["ok", "  "], teacher="minilm-l6")


def test_teacher_precision_is_part_of_the_cache_key(tmp_path, monkeypatch):
    from phrasezoo.objectives import teacher as teacher_module

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    texts = ["new york times", "deep learning"]
    exact = teacher_embeddings(texts, teacher="minilm-l6", progress=False, precision="fp32")
    monkeypatch.setattr(teacher_module, "has_fast_bf16", lambda device: True)
    fast = teacher_embeddings(texts, teacher="minilm-l6", progress=False, precision="auto")
    cosines = (exact.vectors * fast.vectors).sum(dim=1)
    assert len(list((tmp_path / "teacher").glob("*.npy"))) == 2  # two precisions, two cache files
    assert bool((cosines > 0.99).all())  # bf16 autocast keeps the rows (>= 0.9999 measured for mpnet)
    with pytest.raises(ValueError, match="precision"):
        teacher_embeddings(texts, teacher="minilm-l6", precision="fp16")


def _spy_embedding(monkeypatch) -> list[list[str]]:
    """The texts of every teacher batch embedded from now on (one sorted list per call; free places left out)."""
    from phrasezoo.objectives import teacher_rows

    calls: list[list[str]] = []
    embed = teacher_rows.embed_padded

    def spy(encoder, texts, length, rows=None, padded=None):
        calls.append(sorted(t for t in texts if t is not None))
        return embed(encoder, texts, length, rows, padded)

    monkeypatch.setattr(teacher_rows, "embed_padded", spy)
    return calls


def test_a_new_string_set_encodes_only_the_strings_no_cache_holds(tmp_path, monkeypatch):
    from phrasezoo.objectives import teacher as teacher_module

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    first = teacher_embeddings(["new york times", "deep learning"], teacher="minilm-l6", progress=False)
    assert first.vectors.shape == (2, 384)  # all rows asked for: embedded and cached
    encoded = _spy_embedding(monkeypatch)
    more = teacher_embeddings(["new york times", "deep learning", "machine learning"], teacher="minilm-l6",
                              progress=False)  # fmt: skip
    assert more.vectors.shape == (3, 384)
    assert encoded == [["machine learning"]]  # the two known strings came from the first cache file
    for text in ("new york times", "deep learning"):
        assert torch.equal(more.vectors[more.index[text]], first.vectors[first.index[text]])
    assert len(list((tmp_path / "teacher").glob("*.strings.json"))) == 2 and teacher_module.DEFAULT_TEACHER


def test_a_blended_teacher_has_the_weighted_mean_of_its_encoders_cosines(monkeypatch):
    from phrasezoo.objectives import teacher as teacher_module
    from phrasezoo.objectives.teacher import TeacherEmbeddings

    texts = ["b phrase", "a phrase", "c phrase", "a phrase"]
    unique = sorted(set(texts))
    generator = torch.Generator().manual_seed(0)
    rows = {
        name: torch.nn.functional.normalize(torch.randn(len(unique), dim, generator=generator), dim=1)
        for name, dim in (("wide", 12), ("narrow", 5))
    }

    def fake_encoder_rows(strings, teacher, *args):
        assert sorted(set(strings)) == unique
        return TeacherEmbeddings(teacher, {t: i for i, t in enumerate(unique)}, rows[teacher])

    monkeypatch.setattr(teacher_module, "_encoder_embeddings", fake_encoder_rows)
    blend = teacher_embeddings(texts, teacher={"wide": 3, "narrow": 1}, progress=False)
    assert blend.teacher == "0.75 wide + 0.25 narrow" and blend.vectors.shape == (3, 17)
    assert torch.allclose(blend.vectors.norm(dim=1), torch.ones(3), atol=1e-6)  # unit rows, like a single teacher
    expected = 0.75 * rows["wide"] @ rows["wide"].T + 0.25 * rows["narrow"] @ rows["narrow"].T
    assert torch.allclose(blend.vectors @ blend.vectors.T, expected, atol=1e-6)
    found_rows, found = blend.lookup(["c phrase", "unknown"])
    assert found.tolist() == [True, False] and torch.equal(found_rows[0], blend.vectors[unique.index("c phrase")])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "non-empty mapping"),
        ({"minilm-l6": 0.0}, "positive"),
        ({"minilm-l6": float("nan")}, "positive"),
        (3, "encoder name"),
    ],
)
def test_bad_teacher_blends_are_refused_with_an_example(spec, message):
    with pytest.raises(ValueError, match=message):
        teacher_embeddings(["deep learning"], teacher=spec, progress=False)


def test_a_blend_of_one_encoder_under_two_names_keeps_its_cosines(tmp_path, monkeypatch):
    from phrasezoo.resources import resolve_backbone

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    texts = ["new york times", "machine learning", "deep learning"]
    single = teacher_embeddings(texts, teacher="minilm-l6", progress=False)
    blend = teacher_embeddings(
        texts, teacher={"minilm-l6": 0.3, str(resolve_backbone("minilm-l6")): 0.7}, progress=False
    )
    assert blend.vectors.shape == (3, 768)
    assert torch.allclose(blend.vectors @ blend.vectors.T, single.vectors @ single.vectors.T, atol=1e-5)


PHRASES = [
    "new york times", "machine learning", "deep learning", "the european union", "a very long phrase with many words "
    "in it to make the padding of a batch matter", "war", "civil war", "political philosophy of free associations",
    "u.s.", "state of the union address", "quickly", "in the morning", "united kingdom", "the united nations in paris",
]  # fmt: skip


def _eager_rows(strings, batch_size, precision, known=None):
    """The rows an eager pass gives (the teacher before rows were embedded lazily): the strings no earlier set holds,
    sorted by length and embedded ``batch_size`` at a time, each batch padded to its longest string."""
    from phrasezoo.encoders import load_encoder

    known = dict(known or {})
    missing = [s for s in sorted(set(strings)) if s not in known]
    encoder = load_encoder("baseline:minilm-l6", batch_size=batch_size, progress=False)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
        known.update(zip(missing, encoder.encode(missing)))
    return known


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_lazy_rows_have_the_bits_of_the_eager_pass_over_their_sets(tmp_path, monkeypatch, precision, one_thread):
    """Rows looked up a few at a time, prefetched, or asked for as a whole later set carry the bits the eager passes
    gave: a table first (all its strings), then a second set (only the strings the table did not hold). One thread:
    the eager reference is the plain encoder, whose thread tuner switches thread counts, and on some CPUs (an AVX-512
    Xeon) the thread count changes the last bits."""
    from phrasezoo.objectives import teacher as teacher_module

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    monkeypatch.setattr(teacher_module, "has_fast_bf16", lambda device: precision == "bf16")
    table, lexicon = PHRASES[:10], PHRASES[6:] + ["dictionary", "a word", "words and more words of a dictionary"]
    expected = _eager_rows(lexicon, 4, precision, _eager_rows(table, 4, precision))
    lazy = teacher_embeddings(table, teacher="minilm-l6", progress=False, batch_size=4, precision="auto")
    words = teacher_embeddings(lexicon, teacher="minilm-l6", progress=False, batch_size=4, precision="auto")
    for batch in (["war", "unknown", PHRASES[4]], ["civil war"], list(reversed(table))):
        rows, found = lazy.lookup(batch)
        for row, text, known in zip(rows, batch, found.tolist()):
            assert known == (text in table)
            assert torch.equal(row, torch.from_numpy(expected[text]) if known else torch.zeros(384)), text
    for text, row in zip(sorted(set(lexicon)), words.vectors):
        assert torch.equal(row, torch.from_numpy(expected[text])), text
    # a later process reads the plans: the same bits again, from scratch
    teacher_module._STORES.clear()
    for file in (tmp_path / "teacher").glob("*.npy"):
        file.unlink()
    again = teacher_embeddings(table, teacher="minilm-l6", progress=False, batch_size=4, precision="auto")
    again.prefetch(table[::-1], progress=False)
    assert torch.equal(again.vectors, torch.from_numpy(np.stack([expected[t] for t in sorted(set(table))])))


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_pool_of_forked_workers_gives_every_row_the_bits_it_gets_here(tmp_path, monkeypatch, precision, one_thread):
    """A one-thread process embeds many missing rows in forked one-thread workers: the same bits as embedding them
    here (each batch keeps its shape and thread count), and the work happens in the workers."""
    import os

    from phrasezoo.objectives import teacher as teacher_module
    from phrasezoo.objectives import teacher_rows

    monkeypatch.setattr(teacher_module, "has_fast_bf16", lambda device: precision == "bf16")
    monkeypatch.setattr(teacher_rows, "POOL_MIN_BATCHES", 2)
    pids = tmp_path / "pids"
    pids.mkdir()
    embed = teacher_rows._embed_batch

    def noting_pid(*args):
        (pids / str(os.getpid())).touch()
        return embed(*args)

    monkeypatch.setattr(teacher_rows, "_embed_batch", noting_pid)
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    strings = PHRASES + [f"{p} of the year {i}" for i, p in enumerate(PHRASES)]
    rows = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path / workers))
        monkeypatch.setenv("PHRASEZOO_TEACHER_WORKERS", workers)
        teacher_module._STORES.clear()
        rows[workers] = teacher_embeddings(strings, teacher="minilm-l6", progress=False, batch_size=4).vectors
        made_by = {int(p.name) for p in pids.iterdir()}
        assert (made_by == {os.getpid()}) == (workers == "1"), made_by
        for p in pids.iterdir():
            p.unlink()
    assert torch.equal(rows["1"], rows["2"])
    assert "TOKENIZERS_PARALLELISM" not in os.environ  # set for the fork only: later processes keep their own
    teacher_module._STORES.clear()


def test_teacher_workers_are_one_unless_this_process_runs_one_thread(monkeypatch):
    from phrasezoo.objectives.teacher_rows import embedding_workers

    monkeypatch.setenv("PHRASEZOO_TEACHER_WORKERS", "3")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert embedding_workers() == 1  # forking a process with an OpenMP pool is unsafe: never a pool then
        torch.set_num_threads(1)
        assert embedding_workers() == 3
        monkeypatch.setenv("PHRASEZOO_TEACHER_WORKERS", "0")
        with pytest.raises(ValueError, match="whole number >= 1"):
            embedding_workers()
    finally:
        torch.set_num_threads(threads)


def test_lookup_embeds_only_the_strings_drawn_and_caches_them_by_content(tmp_path, monkeypatch):
    from phrasezoo.objectives import teacher as teacher_module

    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    calls = _spy_embedding(monkeypatch)
    table = teacher_embeddings(PHRASES, teacher="minilm-l6", progress=False)
    assert calls == []  # nothing embedded before a lookup
    first, _ = table.lookup(["war", "civil war", "unknown"])
    again, _ = table.lookup(["civil war", "war"])
    assert calls == [["civil war", "war"]] and torch.equal(again, first[[1, 0]])
    table._rows.store.flush()  # what happens every flush_every rows and at exit
    assert not list((tmp_path / "teacher").glob("*.tmp*"))
    # another process (a soup ingredient, a rerun) reads the rows by content and embeds only what no cache file holds
    teacher_module._STORES.clear()
    calls.clear()
    other = teacher_embeddings(PHRASES[:12], teacher="minilm-l6", progress=False)
    rows, _ = other.lookup(["civil war", "war", "quickly"])
    assert calls == [["quickly"]] and torch.equal(rows[:2], first[[1, 0]])
    assert len(other) == 12 and teacher_module.DEFAULT_TEACHER


def test_a_packed_teacher_holds_the_recorded_rows_only(tmp_path, monkeypatch):
    """What the GPU job carries: the rows a replayed run asked for, as plain tensors, and an error for any other."""
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    table = teacher_embeddings(PHRASES, teacher="minilm-l6", progress=False)
    assert table.lazy
    with table.recording() as drawn:
        table.prefetch(["war", "civil war", "unknown"], progress=False)
        table.lookup(["quickly", "war"])
    assert drawn == {table.index[t] for t in ("war", "civil war", "quickly")} and table.lazy  # the row source is back
    packed = table.packed(drawn)
    assert not packed.lazy and packed.index == table.index
    rows, found = packed.lookup(["quickly", "unknown", "civil war"])
    expected, _ = table.lookup(["quickly", "unknown", "civil war"])
    assert found.tolist() == [True, False, True] and torch.equal(rows, expected)
    packed.prefetch(["war", "unknown"])  # carried (and unknown strings are ignored): fine
    other = next(t for t in PHRASES if table.index[t] not in drawn)
    with pytest.raises(LookupError, match="not carried"):
        packed.prefetch([other])
    with pytest.raises(LookupError, match="not carried"):
        packed.lookup([other])
    with pytest.raises(LookupError, match="every row"):
        _ = packed.vectors


def test_each_row_is_embedded_in_a_batch_padded_as_its_eager_batch_was(monkeypatch, one_thread):
    """Whether a batch holds a padded row changes the last bits of all-mpnet-base-v2's rows (transformers drops an
    all-ones attention mask): plans record it per eager batch, and a lazily embedded batch of full-length rows whose
    eager batch was padded gets an empty string in a free place (or two passes when none is free)."""
    from phrasezoo.encoders import load_encoder
    from phrasezoo.objectives import teacher_rows

    encoder = load_encoder("baseline:minilm-l6", batch_size=2, progress=False)
    strings = ["the new york times", "a machine learning model", "war", "the european union"]
    lengths, rows, places, padded = teacher_rows.planned_shapes(encoder, strings, 2)
    # eager batches (longest first): [machine learning model, new york times] (both 6 tokens), [european union, war]
    assert padded == [False, False, True, True] and rows == [2, 2, 2, 2]
    batches = []
    pooled = teacher_rows._pooled_rows
    monkeypatch.setattr(teacher_rows, "_pooled_rows", lambda enc, batch, *rest: batches.append(batch) or pooled(enc, batch, *rest))  # fmt: skip
    full = ["the european union", None]
    eager = teacher_rows.embed_padded(encoder, ["the european union", "war"], 5, 2)
    assert np.array_equal(teacher_rows.embed_padded(encoder, full, 5, 2, padded=True)[0], eager[0])
    assert batches[-1] == ["the european union", ""]
    teacher_rows.embed_padded(encoder, full, 5, 2, padded=False)
    assert batches[-1] == ["the european union"] * 2
    both = teacher_rows.embed_padded(encoder, ["the european union", "the european union"], 5, 2, padded=True)
    assert batches[-2:] == [["", "the european union"], ["the european union", ""]] and np.array_equal(
        both[0], eager[0]
    )
