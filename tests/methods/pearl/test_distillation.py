"""PEARL's optional teacher term: NT-Xent + type CE + distill_weight x similarity distillation."""

from __future__ import annotations

import random

import pytest
import torch

from phrasezoo.objectives.losses import similarity_distillation
from phrasezoo.objectives.teacher import TeacherEmbeddings
from phrasezoo.objectives.terms import TeacherTerms, misranked_rows
from phrasezoo.zoo.registry import get_method
from tests.training.conftest import make_task


def test_the_distillation_term_joins_the_loss_with_its_weight():
    model = get_method("pearl").tiny_model()
    plain = make_task(model)
    teacher_vectors = torch.nn.functional.normalize(torch.randn(len(plain.phrases), 12), dim=-1)
    teacher = TeacherEmbeddings("test", {p: i for i, p in enumerate(plain.phrases)}, teacher_vectors)
    task = make_task(model)
    task.terms = TeacherTerms(distill_weight=2.0, teacher=teacher)
    batch = task.make_batch(list(range(4)), random.Random(0))
    torch.manual_seed(0)
    loss, logs = task.compute_loss(model, batch)
    torch.manual_seed(0)
    base, base_logs = plain.compute_loss(model, batch)
    assert "distill" in logs and "distill" not in base_logs
    assert loss.item() == pytest.approx(base.item() + 2.0 * logs["distill"], rel=1e-4)
    with pytest.raises(ValueError, match="teacher"):
        TeacherTerms(distill_weight=1.0)


def test_anchor_words_join_the_distillation_matrix_only():
    """``distill_words``: known words of multiword anchors are appended after the NT-Xent rows, without type labels,
    and the contrastive term is the same as without them."""
    model = get_method("pearl").tiny_model()
    plain = make_task(model)
    strings = plain.phrases + ["new", "york", "times", "united", "states"]
    teacher_vectors = torch.nn.functional.normalize(torch.randn(len(strings), 12), dim=-1)
    teacher = TeacherEmbeddings("test", {p: i for i, p in enumerate(strings)}, teacher_vectors)
    task = make_task(model)
    task.terms, task.distill_words = TeacherTerms(distill_weight=1.0, teacher=teacher), 1
    batch = task.make_batch([0, 1, 2, 10], random.Random(0))  # "very difficult": no word the teacher knows
    extra = batch["texts"][batch["n_contrastive"] :]
    assert len(extra) == 3 and extra[0] in {"new", "york", "times"} and extra[2] in {"united", "states"}
    assert len(set(extra)) == len(extra) and (batch["type_ids"][batch["n_contrastive"] :] == -100).all()
    plain_batch = plain.make_batch([0, 1, 2, 10], random.Random(0))
    assert batch["texts"][: batch["n_contrastive"]] == plain_batch["texts"]
    model.eval()
    _, logs = task.compute_loss(model, batch)
    _, plain_logs = plain.compute_loss(model, plain_batch)
    assert logs["nt_xent"] == pytest.approx(plain_logs["nt_xent"], rel=1e-4)
    assert logs["type_ce"] == pytest.approx(plain_logs["type_ce"], rel=1e-4)
    with pytest.raises(ValueError, match="distill_weight"):
        type(task)(model, {"phrase": [], "type_id": [], "hard_negatives": []}, None, None, distill_words=2)


def test_the_lexicon_term_joins_the_loss_and_leaves_the_phrase_batch_alone():
    """``lexicon_weight``: a lexicon batch is drawn after the phrase batch (which stays the one a run without the
    term gets) and its listwise term joins the loss with its weight."""
    from tests.lexicon_fixtures import tiny_lexicon

    model = get_method("pearl").tiny_model()
    plain = make_task(model)
    task = make_task(model)
    task.terms = TeacherTerms(lexicon_weight=0.5, lexicon=tiny_lexicon(teacher_dim=12, temperature=0.05)[2])
    batch = task.make_batch(list(range(4)), random.Random(0))
    plain_batch = plain.make_batch(list(range(4)), random.Random(0))
    assert batch["texts"] == plain_batch["texts"]
    assert len(batch["lexicon_ids"]) == batch["lexicon_features"]["input_ids"].shape[0] >= 3
    model.eval()
    loss, logs = task.compute_loss(model, batch)
    base, base_logs = plain.compute_loss(model, plain_batch)
    assert "lexicon" in logs and "lexicon" not in base_logs
    assert loss.item() == pytest.approx(base.item() + 0.5 * logs["lexicon"], rel=1e-4)
    assert "lexicon strings (teacher neighbourhoods; benchmark items and dev-suite strings removed)" in task.facts()
    with pytest.raises(ValueError, match="lexicon"):
        TeacherTerms(lexicon_weight=1.0)


def test_the_teacher_guard_leaves_out_the_alias_rows_the_teacher_misranks():
    """``teacher_guard``: a row whose positive is another name of its anchor, and whose teacher ranks a hard negative
    at or above that name, loses its positive and negatives from the distillation matrix; other rows keep theirs."""
    from phrasezoo.methods.pearl.task import PearlTask
    from tests.training.conftest import PHRASES, _noise

    model = get_method("pearl").tiny_model()
    phrases = list(PHRASES)
    aliases = {0: phrases[5], 1: phrases[6]}  # rows 0 and 1 always view their alias; the others their upper case
    dataset = {
        "phrase": phrases,
        "type_id": [i % 95 for i in range(len(phrases))],
        "hard_negatives": [[phrases[(i + 1) % len(phrases)]] for i in range(len(phrases))],
        "paraphrases": [[aliases[i]] if i in aliases else [] for i in range(len(phrases))],
    }
    strings = phrases + [p.upper() for p in phrases]
    vectors = torch.nn.functional.normalize(torch.randn(len(strings), 12, generator=torch.Generator().manual_seed(0)))
    index = {s: i for i, s in enumerate(strings)}
    # the teacher puts row 0's negative (phrase 1) on its anchor and its alias (phrase 5) far away: misranked
    vectors[index[phrases[1]]] = vectors[index[phrases[0]]]
    vectors[index[phrases[5]]] = -vectors[index[phrases[0]]]
    teacher = TeacherEmbeddings("test", index, vectors)

    def task(guard: bool) -> PearlTask:
        terms = TeacherTerms(distill_weight=1.0, teacher=teacher, guard=guard)
        views = {p: aliases[i] for i, p in enumerate(phrases) if i in aliases}
        return PearlTask(model, dataset, lambda p, rng: views.get(p, p.upper()), _noise, hard_negatives=1, terms=terms)

    batch = task(True).make_batch([0, 1, 2], random.Random(0))
    assert batch["texts"][3:6] == [phrases[5], phrases[6], phrases[2].upper()]
    assert batch["groups"] == [(0, 3, [6]), (1, 4, [7])]  # row 2's view is an edit, not another name
    assert "groups" not in task(False).make_batch([0, 1, 2], random.Random(0))
    model.eval()
    _, logs = task(True).compute_loss(model, batch)
    _, plain_logs = task(False).compute_loss(model, batch)
    off = misranked_rows(*teacher.lookup(batch["texts"]), batch["groups"])
    assert off[3] and off[6] and off.sum() >= 2
    assert logs["teacher_off"] == pytest.approx(float(off.sum()) / len(batch["texts"]))
    rows, found = teacher.lookup(batch["texts"])
    with torch.no_grad():
        student = model(**batch["features"]).phrase_embeddings
    expected = similarity_distillation(student, rows, found & ~off)
    assert logs["distill"] == pytest.approx(float(expected), rel=1e-4)
    assert logs["distill"] != pytest.approx(plain_logs["distill"], rel=1e-4)
    assert logs["nt_xent"] == pytest.approx(plain_logs["nt_xent"], rel=1e-4)
