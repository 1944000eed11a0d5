"""Phrase-BERT-specific behaviour of the model and its training task (the generic contract is in test_contract.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from phrasezoo.core.recipes import TrainingConfig
from phrasezoo.methods.phrase_bert.task import PhraseBertTask
from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.objectives.losses import triplet_loss
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.resources import resolve_backbone
from phrasezoo.training.loop import RunOptions, train
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("phrase_bert").tiny_model

PARAPHRASES = [
    ("complete control", "full command", "fluid command"),
    ("the war", "the warfare", "the kickbacks"),
    ("usually", "normally", "air current"),
]
CONTEXTS = [
    ("the war", "Many soldiers died during [MASK] in 1940 .", "She plays the [MASK] every evening ."),
    ("a guitar", "She plays [MASK] every evening in the bar .", "Many soldiers died during [MASK] ."),
]


def test_from_backbone_equals_plain_mean_pooling():
    path = resolve_backbone("minilm-l6")
    model = PhraseBertModel.from_backbone(path).eval()
    tokenizer, plain = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    texts = ["complete control", "The local authorities have complete control over building materials."]
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = plain(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        expected = (hidden * mask).sum(1) / mask.sum(1)
        out = model(**model.tokenize(texts))
    torch.testing.assert_close(out.pooled_embeddings, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out.embeddings, torch.nn.functional.normalize(expected, dim=-1), atol=1e-5, rtol=1e-5)
    raw = model.encode(texts, normalize=False)
    np.testing.assert_allclose(raw, expected.numpy(), atol=1e-4)
    assert model.mask_token == "[MASK]"


def test_max_seq_length_is_capped_at_the_backbone_limit():
    model = PhraseBertModel.from_backbone(resolve_backbone("minilm-l6"), max_seq_length=100_000)
    assert model.config.max_seq_length == model.config.backbone_config.max_position_embeddings


def test_encode_shapes_and_single_string():
    model = tiny_model()
    vectors = model.encode(["a word", "a much longer sentence with many more words in it", "x"])
    assert vectors.shape == (3, model.config.embedding_dim)
    single = model.encode("a word")
    assert single.shape == (model.config.embedding_dim,)
    np.testing.assert_allclose(single, vectors[0], atol=1e-5)
    assert model.similarity("a word", ["a word", "x"]).shape == (1, 2)
    tokens = model.encode_tokens(["a word here"])
    assert tokens[0]["embeddings"].shape[0] == tokens[0]["offsets"].shape[0] == 3


def test_triplet_loss_values():
    anchor = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
    positive = torch.tensor([[3.0, 4.0], [1.0, 0.0]])  # distances 5 and 1
    negative = torch.tensor([[0.0, 1.0], [0.0, 3.0]])  # distances 1 and 3
    # max(0, 5 - 1 + 1) = 5 and max(0, 1 - 3 + 1) = 0
    assert triplet_loss(anchor, positive, negative, margin=1.0).item() == pytest.approx(2.5, abs=1e-5)
    assert triplet_loss(anchor[1:], positive[1:], negative[1:], margin=3.0).item() == pytest.approx(1.0, abs=1e-5)


def test_task_groups_phrases_and_contexts_and_computes_the_triplet_loss():
    model = tiny_model().eval()  # no dropout: the loss must equal a recomputation
    task = PhraseBertTask(model, PARAPHRASES, CONTEXTS)
    assert task.num_examples() == 5
    batch = task.make_batch([0, 3, 4], random.Random(0))
    short, long = batch["features"]
    assert short["input_ids"].shape[0] == 5  # 3 texts of the paraphrase triple + 2 context phrases
    assert long["input_ids"].shape[0] == 4  # 2 contexts per context triple
    assert batch["is_context"].tolist() == [False, True, True]
    loss, logs = task.compute_loss(model, batch)
    with torch.no_grad():
        texts = [PARAPHRASES[0], CONTEXTS[0], CONTEXTS[1]]
        vectors = [model(**model.tokenize(list(t))).pooled_embeddings for t in texts]
        expected = triplet_loss(*(torch.stack([v[i] for v in vectors]) for i in range(3)))
        context_only = triplet_loss(*(torch.stack([v[i] for v in vectors[1:]]) for i in range(3)))
    assert loss.item() == pytest.approx(expected.item(), abs=1e-4)
    assert logs["triplet_context"] == pytest.approx(context_only.item(), abs=1e-4)
    assert set(logs) == {"triplet_paraphrase", "triplet_context"}
    loss.backward()
    assert model.backbone.embeddings.word_embeddings.weight.grad is not None


def test_task_on_normalised_embeddings_and_one_objective():
    model = tiny_model()
    task = PhraseBertTask(model, PARAPHRASES, [], normalize=True, margin=0.5)
    batch = task.make_batch([0, 1, 2], random.Random(0))
    assert batch["features"][1] is None
    loss, logs = task.compute_loss(model, batch)
    assert 0 <= loss.item() <= 2.5  # unit vectors: distances are at most 2
    assert set(logs) == {"triplet_paraphrase"}
    with pytest.raises(ValueError, match="both sets are empty"):
        PhraseBertTask(model, [], [])


def test_training_loop_runs_and_changes_the_weights(tmp_path):
    model = tiny_model()
    before = model.backbone.embeddings.word_embeddings.weight.detach().clone()
    task = PhraseBertTask(model, PARAPHRASES * 2, CONTEXTS * 2)
    cfg = TrainingConfig(batch_size=4, max_steps=3, learning_rate=1e-3, scheduler="linear", warmup_ratio=0.1)
    result = train(model, task, cfg, RunOptions(tmp_path, progress=False))
    assert result.steps == 3 and np.isfinite(result.last_losses["loss"])
    assert not torch.equal(before, result.model.backbone.embeddings.word_embeddings.weight)
    assert task.facts()["paraphrase triples"] == 6


def test_task_distills_the_teachers_phrase_similarities():
    from phrasezoo.objectives.losses import similarity_distillation
    from phrasezoo.objectives.teacher import TeacherEmbeddings

    model = tiny_model().eval()
    phrases = sorted({t for triple in PARAPHRASES for t in triple} | {c[0] for c in CONTEXTS})
    teacher = TeacherEmbeddings("test", {p: i for i, p in enumerate(phrases)}, torch.randn(len(phrases), 7))
    task = PhraseBertTask(model, PARAPHRASES, CONTEXTS, terms=TeacherTerms(distill_weight=3.0, teacher=teacher))
    batch = task.make_batch([0, 3, 4], random.Random(0))
    loss, logs = task.compute_loss(model, batch)
    plain, _ = PhraseBertTask(model, PARAPHRASES, CONTEXTS).compute_loss(model, batch)
    with torch.no_grad():
        pooled = model(**model.tokenize(batch["phrases"])).pooled_embeddings
        rows, found = teacher.lookup(batch["phrases"])
        expected = similarity_distillation(pooled, rows, found)
    assert found.all() and logs["distill"] == pytest.approx(expected.item(), abs=1e-4)
    assert loss.item() == pytest.approx(plain.item() + 3.0 * expected.item(), abs=1e-4)
    with pytest.raises(ValueError, match="teacher"):
        TeacherTerms(distill_weight=1.0)


def test_task_adds_the_lexicon_term_with_its_weight():
    from phrasezoo.objectives.losses import listwise_distillation
    from tests.lexicon_fixtures import tiny_lexicon

    model = tiny_model().eval()
    words, vectors, lexicon = tiny_lexicon()
    task = PhraseBertTask(model, PARAPHRASES, CONTEXTS, terms=TeacherTerms(lexicon_weight=2.0, lexicon=lexicon))
    batch = task.make_batch([0, 3, 4], random.Random(0))
    loss, logs = task.compute_loss(model, batch)
    plain, _ = PhraseBertTask(model, PARAPHRASES, CONTEXTS).compute_loss(model, batch)
    with torch.no_grad():
        ids = batch["lexicon_ids"]
        pooled = model(**model.tokenize([words[i] for i in ids])).pooled_embeddings
        expected = listwise_distillation(pooled, vectors[ids], 0.1)
    assert logs["lexicon"] == pytest.approx(expected.item(), abs=1e-4)
    assert loss.item() == pytest.approx(plain.item() + 2.0 * expected.item(), abs=1e-4)
    with pytest.raises(ValueError, match="lexicon"):
        TeacherTerms(lexicon_weight=1.0)
