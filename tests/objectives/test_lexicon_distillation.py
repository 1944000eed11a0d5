"""The lexicon term: listwise distillation, teacher neighbourhoods (faiss, cached), sampling, options."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from phrasezoo.objectives.lexicon_distillation import (
    LexiconDistillation,
    TeacherNeighbourhoods,
    lexicon_options,
    nearest_neighbours,
    teacher_neighbourhoods,
)
from phrasezoo.objectives.losses import listwise_distillation


def test_listwise_distillation_is_zero_for_the_same_ranking_geometry_and_width_free():
    torch.manual_seed(0)
    x = torch.randn(7, 8)
    rotation, _ = torch.linalg.qr(torch.randn(8, 8))
    wider = torch.cat([x @ rotation, torch.zeros(7, 3)], dim=1)  # same cosines, another basis and width
    assert listwise_distillation(x, wider).item() == pytest.approx(0.0, abs=1e-5)
    assert listwise_distillation(x, torch.randn(7, 5)).item() > 0.01


def test_listwise_distillation_gradient_and_refusals():
    torch.manual_seed(0)
    student = torch.randn(6, 4, requires_grad=True)
    loss = listwise_distillation(student, torch.randn(6, 9), temperature=0.1)
    loss.backward()
    assert student.grad.abs().sum() > 0 and torch.isfinite(student.grad).all()
    assert listwise_distillation(torch.randn(2, 4), torch.randn(2, 9)).item() == 0.0  # nothing to rank
    with pytest.raises(ValueError, match="same rows"):
        listwise_distillation(torch.randn(4, 4), torch.randn(3, 4))
    with pytest.raises(ValueError, match="temperature"):
        listwise_distillation(torch.randn(4, 4), torch.randn(4, 4), temperature=0.0)


def test_nearest_neighbours_leave_the_row_out_and_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    vectors = np.eye(4, dtype=np.float32)[[0, 0, 1, 1, 2]] + np.float32(0.01) * np.arange(5)[:, None]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    found = nearest_neighbours(vectors, 2, cache_key="t")
    assert found.shape == (5, 2)
    assert all(i not in row for i, row in enumerate(found.tolist()))
    assert found[0, 0] == 1 and found[2, 0] == 3  # the twin row first
    assert list((tmp_path / "teacher").glob("neighbours-t-k2.npy"))
    np.save(tmp_path / "teacher" / "neighbours-t-k2.npy", np.zeros((5, 2), dtype=np.int64))
    assert (nearest_neighbours(vectors, 2, cache_key="t") == 0).all()  # read back from the cache
    with pytest.raises(ValueError, match="neighbours"):
        nearest_neighbours(vectors, 0)


def test_teacher_neighbourhoods_drop_refused_pairs(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    strings = ["double bass", "contrabass", "cello", "violin", "tuba", "banana"]
    hoods = teacher_neighbourhoods(
        strings, "minilm-l6", 3, keep_pair=lambda a, b: {a, b} != {"cello", "violin"}, progress=False
    )
    assert hoods.strings == sorted(strings) and hoods.vectors.shape == (6, 384)
    cello, violin = hoods.strings.index("cello"), hoods.strings.index("violin")
    assert violin not in hoods.neighbours[cello] and cello not in hoods.neighbours[violin]
    assert all(len(row) >= 2 for row in hoods.neighbours)


def test_sampling_draws_anchor_groups_without_repeats():
    hoods = TeacherNeighbourhoods(
        strings=[f"w{i}" for i in range(10)],
        vectors=torch.nn.functional.normalize(torch.randn(10, 4), dim=-1),
        neighbours=[[(i + 1) % 10, (i + 2) % 10, (i + 3) % 10] for i in range(10)],
    )
    ids = hoods.sample(random.Random(0), anchors=3, group=2)
    assert len(ids) == len(set(ids)) and 4 <= len(ids) <= 9
    assert ids == hoods.sample(random.Random(0), anchors=3, group=2)  # seeded
    term = LexiconDistillation(hoods, anchors=3, group=2, temperature=0.05)
    ids, words = term.sample(random.Random(1))
    assert words == [f"w{i}" for i in ids]
    loss = term.loss(torch.randn(len(ids), 6, requires_grad=True), ids)
    assert loss.item() > 0 and loss.requires_grad
    assert term.facts()["lexicon neighbours per string (after dropping benchmark pairs)"] == "3.0"
    with pytest.raises(ValueError, match="anchors"):
        LexiconDistillation(hoods, anchors=0, group=2, temperature=0.05)


def test_lexicon_options_complete_defaults_and_refuse_unknown_keys():
    assert lexicon_options({"anchors": 8})["anchors"] == 8
    assert lexicon_options(None)["sources"] == ["wordnet"]
    with pytest.raises(ValueError, match="Unknown lexicon options"):
        lexicon_options({"anchor": 8})


def test_max_strings_draws_a_seeded_subset_before_the_teacher_embeds_it(monkeypatch):
    import phrasezoo.objectives.lexicon_distillation as lexicon

    class NoBlocklist:
        def matches(self, text, mode):
            return False

        def item_matches(self, items, mode):
            return False

    embedded = []

    def fake_neighbourhoods(strings, teacher, k, keep_pair=None, progress=True):
        embedded.append(sorted(strings))
        vectors = torch.nn.functional.normalize(torch.randn(len(strings), 4), dim=-1)
        return TeacherNeighbourhoods(sorted(strings), vectors, [[(i + 1) % len(strings)] for i in range(len(strings))])

    monkeypatch.setattr(lexicon, "load_blocklist", NoBlocklist)
    monkeypatch.setattr(lexicon, "dev_set_strings", lambda progress=True: {"held out"})
    monkeypatch.setattr(lexicon, "lexicon_strings", lambda sources, wordnet=None: [f"w{i}" for i in range(50)])
    monkeypatch.setattr(lexicon, "load_wordnet", lambda: None)
    monkeypatch.setattr(lexicon, "teacher_neighbourhoods", fake_neighbourhoods)
    term = lexicon.build_lexicon_distillation({"max_strings": 12, "neighbours": 1}, "teacher", None, progress=False)
    again = lexicon.build_lexicon_distillation({"max_strings": 12, "neighbours": 1}, "teacher", None, progress=False)
    whole = lexicon.build_lexicon_distillation({"neighbours": 1}, "teacher", None, progress=False)
    assert len(embedded[0]) == 12 and embedded[0] == embedded[1]  # only the drawn strings are embedded, seeded
    assert set(embedded[0]) < set(embedded[2]) and len(embedded[2]) == 50
    assert len(term.neighbourhoods) == 12 and len(whole.neighbourhoods) == 50 and again.anchors == term.anchors
