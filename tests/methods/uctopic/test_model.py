"""UCTopic-specific behaviour of the model file and the pretraining task (the generic contract is in test_contract.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer, BertConfig, BertForMaskedLM, LukeConfig, LukeModel

from phrasezoo.methods.uctopic.task import UCTopicTask, mask_tokens
from phrasezoo.models.uctopic.configuration_uctopic import UCTopicConfig
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel, _window
from phrasezoo.objectives.losses import info_nce
from phrasezoo.objectives.terms import TeacherTerms
from phrasezoo.resources import resolve_backbone
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("uctopic").tiny_model


def tiny_luke_model():
    return get_method("uctopic").tiny_model("luke")


SENTENCE = "He lived on the east coast of the United States."
UNITED_STATES = (SENTENCE, (34, 47))


@pytest.fixture(scope="module")
def model():
    return tiny_model().eval()


@pytest.fixture(scope="module")
def luke():
    return tiny_luke_model().eval()


def test_span_offsets_become_token_positions(model):
    # [CLS] he lived on the east coast of the united states . [SEP]
    (prepared,) = model.prepare_mentions([UNITED_STATES])
    tokens = model.tokenizer.convert_ids_to_tokens(prepared.input_ids)
    assert tokens[prepared.span_start : prepared.span_end] == ["united", "states"]
    assert (prepared.span_start, prepared.span_end) == (9, 11)
    # a span inside a word takes the whole word piece it overlaps
    (inside,) = model.prepare_mentions([("unbelievable stories", (2, 6))])
    assert inside.span_end - inside.span_start >= 1
    # a plain string spans its stripped text
    (plain,) = model.prepare_mentions(["  New York Post "])
    assert model.tokenizer.convert_ids_to_tokens(plain.input_ids)[plain.span_start : plain.span_end] == [
        "new", "york", "post",
    ]  # fmt: skip


def test_masking_replaces_exactly_the_span(model):
    plain, masked = model.prepare_mentions([UNITED_STATES, UNITED_STATES], mask_mention=[False, True])
    mask = model.tokenizer.mask_token_id
    assert masked.input_ids[9:11] == [mask, mask]
    assert masked.input_ids[:9] == plain.input_ids[:9] and masked.input_ids[11:] == plain.input_ids[11:]


def test_window_is_centred_on_the_span_and_clipped():
    assert _window(first=50, last=52, n_tokens=100, budget=10) == (46, 56)
    assert _window(first=1, last=2, n_tokens=100, budget=10) == (0, 10)
    assert _window(first=97, last=99, n_tokens=100, budget=10) == (90, 100)
    assert _window(first=10, last=40, n_tokens=100, budget=8) == (10, 18)  # span longer than the budget


def test_long_sentence_keeps_the_span_in_its_window(model):
    words = ["filler"] * 200 + ["Barack", "Obama"] + ["filler"] * 200
    sentence = " ".join(words)
    start = sentence.index("Barack")
    (prepared,) = model.prepare_mentions([(sentence, (start, start + len("Barack Obama")))])
    assert len(prepared.input_ids) == model.config.max_seq_length and prepared.truncated
    tokens = model.tokenizer.convert_ids_to_tokens(prepared.input_ids)
    assert tokens[prepared.span_start : prepared.span_end] == ["barack", "obama"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    with pytest.raises(ValueError, match="max_seq_length"):
        model.prepare_mentions([(sentence, (start, start + 6))], truncate=False)


def test_mean_path_is_the_mlp_of_the_mean_of_span_token_states(model):
    features = model.tokenize_mentions([UNITED_STATES])
    with torch.no_grad():
        hidden = model.backbone(
            input_ids=features["input_ids"], attention_mask=features["attention_mask"]
        ).last_hidden_state
        expected = torch.tanh(model.mlp.dense(hidden[0, 9:11].mean(0)))
        got = model(**features).phrase_embeddings[0]
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_mlp_only_train_embeds_with_the_span_vector_in_eval_mode_only():
    model = tiny_model()
    model.config.mlp_only_train = True
    features = model.tokenize_mentions([UNITED_STATES])
    with torch.no_grad():
        model.eval()
        out = model(**features)
        torch.testing.assert_close(out.phrase_embeddings, out.span_states)
        encoded = model.encode([UNITED_STATES], convert_to_numpy=False)
        torch.testing.assert_close(encoded, torch.nn.functional.normalize(out.span_states, dim=-1), atol=1e-5, rtol=0)
        model.train()  # training (and CCL) still goes through the head
        trained = model(**features)
        torch.testing.assert_close(trained.phrase_embeddings, model.mlp(trained.span_states))
    model.config.mlp_only_train = False
    model.eval()
    with torch.no_grad():
        out = model(**features)
    torch.testing.assert_close(out.phrase_embeddings, model.mlp(out.span_states))


def test_mentions_of_one_sentence_share_a_pass_and_match_separate_encoding(model):
    sentence = "Apple and Microsoft sued Google in California."
    spans = [(0, 5), (10, 19), (25, 31), (35, 45)]
    together = model.encode([(sentence, s) for s in spans], batch_size=1)
    alone = np.stack([model.encode([(sentence, s)])[0] for s in spans])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert len(model._sequence_groups(model.prepare_mentions([(sentence, s) for s in spans]))) == 1
    assert not np.allclose(together[0], together[1])  # different spans, different vectors


def test_context_changes_the_vector_and_a_string_is_its_own_span(model):
    a = model.encode(("Apple released a new phone.", (0, 5)))
    b = model.encode(("She ate an apple for lunch.", (11, 16)))
    assert a.shape == (model.config.embedding_dim,) and not np.allclose(a, b)
    np.testing.assert_allclose(model.encode("New York Post"), model.encode(("New York Post", (0, 13))), atol=1e-6)
    raw = model.encode([UNITED_STATES], normalize=False)[0]
    np.testing.assert_allclose(raw / np.linalg.norm(raw), model.encode([UNITED_STATES])[0], atol=1e-6)


def test_luke_path_places_the_mask_entity_on_the_span(luke):
    features = luke.tokenize_mentions([UNITED_STATES, ("Apple released a phone.", (0, 5))])
    assert features["entity_ids"].tolist() == [[2], [2]]
    assert features["entity_attention_mask"].tolist() == [[1], [1]]
    positions = features["entity_position_ids"]
    assert positions.shape == (2, 1, luke.config.max_mention_length)
    assert positions[0, 0, :3].tolist() == [9, 10, -1] and positions[1, 0, :2].tolist() == [1, -1]
    assert "span_mask" not in features
    with torch.no_grad():
        out = luke.backbone(
            input_ids=features["input_ids"], attention_mask=features["attention_mask"],
            entity_ids=features["entity_ids"], entity_position_ids=features["entity_position_ids"],
            entity_attention_mask=features["entity_attention_mask"],
        )  # fmt: skip
        expected = torch.tanh(luke.mlp.dense(out.entity_last_hidden_state[:, 0]))
        got = luke(**features).phrase_embeddings
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_config_rejects_an_entity_path_without_luke():
    with pytest.raises(ValueError, match="needs a LUKE backbone"):
        UCTopicConfig(backbone_config=BertConfig(hidden_size=32), span_representation="entity")
    assert UCTopicConfig(backbone_config=LukeConfig(hidden_size=32)).span_representation == "entity"
    assert UCTopicConfig(backbone_config=BertConfig(hidden_size=32)).span_representation == "mean"


def test_from_backbone_luke_shrinks_the_entity_vocabulary_without_changing_vectors(tmp_path):
    config = LukeConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        entity_vocab_size=10, entity_emb_size=16, max_position_embeddings=80, pad_token_id=0,
    )  # fmt: skip
    torch.manual_seed(1)
    LukeModel(config).save_pretrained(tmp_path / "luke")
    AutoTokenizer.from_pretrained(resolve_backbone("minilm-l6")).save_pretrained(tmp_path / "luke")
    full = UCTopicModel.from_backbone(str(tmp_path / "luke"), shrink_entity_vocab=False, mask_entity_id=7)
    small = UCTopicModel.from_backbone(str(tmp_path / "luke"), shrink_entity_vocab=True, mask_entity_id=7)
    assert small.config.backbone_config.entity_vocab_size == 2 and small.config.mask_entity_id == 1
    small.mlp.load_state_dict(full.mlp.state_dict())
    mentions = [UNITED_STATES, ("Apple released a phone.", (0, 5))]
    np.testing.assert_allclose(full.encode(mentions), small.encode(mentions), atol=1e-5)


def test_from_backbone_copies_the_checkpoint_mlm_head(tmp_path):
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64)  # fmt: skip
    torch.manual_seed(2)
    BertForMaskedLM(config).save_pretrained(tmp_path / "bert")
    AutoTokenizer.from_pretrained(resolve_backbone("minilm-l6")).save_pretrained(tmp_path / "bert")
    model = UCTopicModel.from_backbone(str(tmp_path / "bert"), use_mlm_head=True)
    reference = BertForMaskedLM.from_pretrained(tmp_path / "bert")
    torch.testing.assert_close(model.lm_head.dense.weight, reference.cls.predictions.transform.dense.weight)
    torch.testing.assert_close(model.lm_head.decoder.weight, reference.cls.predictions.decoder.weight)
    plain = AutoModel.from_pretrained(tmp_path / "bert")
    torch.testing.assert_close(
        model.backbone.embeddings.word_embeddings.weight, plain.embeddings.word_embeddings.weight
    )


# ------------------------------------------------------------------------------------------------- pretraining
def test_info_nce_on_hand_made_vectors():
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    tau = 0.5
    expected = -np.log(np.exp(1 / tau) / (np.exp(1 / tau) + np.exp(0)))
    assert info_nce(anchors, positives, tau).item() == pytest.approx(expected, rel=1e-6)
    # ignoring the off-diagonal candidate leaves only the positive: zero loss
    ignore = torch.tensor([[False, True], [True, False]])
    assert info_nce(anchors, positives, tau, ignore).item() == pytest.approx(0.0, abs=1e-6)
    # the diagonal is never ignored
    assert info_nce(anchors, positives, tau, torch.ones(2, 2, dtype=torch.bool)).item() == pytest.approx(0.0, abs=1e-6)


def test_mask_tokens_follows_bert_corruption():
    sequences = [[101] + list(range(1000, 1400)) + [102]]
    special = [[True] + [False] * 400 + [True]]
    inputs, labels = mask_tokens(sequences, special, random.Random(0), mask_id=103, vocab_size=30522, probability=0.5)
    picked = [i for i, label in enumerate(labels[0]) if label != -100]
    assert 0 not in picked and 401 not in picked
    assert 150 < len(picked) < 250
    masked = sum(inputs[0][i] == 103 for i in picked)
    assert 0.7 < masked / len(picked) < 0.9
    assert all(labels[0][i] == sequences[0][i] for i in picked)


class _Dataset(dict):
    """Column access like a ``datasets.Dataset``."""


def _mentions_dataset():
    rows = [
        ("Obama visited Paris in May.", "Obama", "entity:Obama", 0),
        ("Paris is the capital of France.", "Paris", "entity:Paris", 1),
        ("Obama spoke to the press.", "Obama", "entity:Obama", 2),
        ("Obama visited Paris in May.", "Paris", "entity:Paris", 0),
        ("The museum of Paris opened.", "Paris", "entity:Paris", 3),
        ("Lonely mention of Berlin here.", "Berlin", "entity:Berlin", 4),
    ]
    data = _Dataset(sentence=[], start=[], end=[], key=[], sentence_id=[])
    for sentence, phrase, key, sid in rows:
        start = sentence.index(phrase)
        data["sentence"].append(sentence)
        data["start"].append(start)
        data["end"].append(start + len(phrase))
        data["key"].append(key)
        data["sentence_id"].append(sid)
    return data


def test_task_pairs_mentions_of_one_phrase_from_different_sentences(model):
    task = UCTopicTask(model, _mentions_dataset(), keep_mention_probability=0.5)
    assert task.num_examples() == 5  # Berlin has no second sentence
    batch = task.make_batch(list(range(5)), random.Random(0))
    n = batch["n_anchors"]
    ids = batch["features"]["input_ids"]
    rows = batch["features"]["span_rows"].tolist()
    spans = batch["features"]["span_mask"]
    mask = model.tokenizer.mask_token_id
    for i in range(n):  # anchors: every span token masked
        positions = spans[i].nonzero().flatten()
        assert (ids[rows[i], positions] == mask).all()
    for a, anchor in enumerate(task.anchors[:5]):
        positive_text = model.tokenizer.decode(ids[rows[n + a]][spans[n + a] > 0])
        assert positive_text in (task.keys[anchor].split(":")[1].lower(), "[MASK]")
    same = batch["same_phrase"]
    assert same.shape == (n, n) and same.diagonal().all()
    again = task.make_batch(list(range(5)), random.Random(0))
    assert torch.equal(again["features"]["input_ids"], ids)  # all randomness from the step's rng
    loss, logs = task.compute_loss(model, batch)
    assert torch.isfinite(loss) and loss.requires_grad and 0 <= logs["pair_accuracy"] <= 1


def test_task_refuses_a_corpus_without_pairs_and_mlm_without_head(model):
    data = _mentions_dataset()
    lonely = _Dataset({k: v[-1:] for k, v in data.items()})
    with pytest.raises(ValueError, match="two different sentences"):
        UCTopicTask(model, lonely)
    with pytest.raises(ValueError, match="use_mlm_head"):
        UCTopicTask(model, data, mlm_weight=0.5)


def test_task_with_mlm_loss(tmp_path):
    config = UCTopicConfig(
        backbone_config=BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                   intermediate_size=64),
        use_mlm_head=True, max_seq_length=64,
    )  # fmt: skip
    model = UCTopicModel(config)
    model.set_tokenizer(AutoTokenizer.from_pretrained(resolve_backbone("minilm-l6")))
    task = UCTopicTask(model, _mentions_dataset(), mlm_weight=0.5, mlm_probability=0.3)
    batch = task.make_batch([0, 1, 2], random.Random(3))
    assert (batch["features"]["mlm_labels"] != -100).any()
    loss, logs = task.compute_loss(model, batch)
    assert torch.isfinite(loss) and logs["mlm"] > 0


def test_task_adds_the_lexicon_term_on_span_vectors(model):
    """``lexicon_weight``: words are embedded as phrases without context; the listwise term on their span vectors
    (the embedding under mlp_only_train) joins the loss, and the mention batch is the one a run without it gets."""
    from phrasezoo.objectives.losses import listwise_distillation
    from tests.lexicon_fixtures import tiny_lexicon

    words, vectors, lexicon = tiny_lexicon()
    task = UCTopicTask(model, _mentions_dataset(), terms=TeacherTerms(lexicon_weight=2.0, lexicon=lexicon))
    plain = UCTopicTask(model, _mentions_dataset())
    batch = task.make_batch([0, 1, 2], random.Random(0))
    plain_batch = plain.make_batch([0, 1, 2], random.Random(0))
    assert torch.equal(batch["features"]["input_ids"], plain_batch["features"]["input_ids"])
    loss, logs = task.compute_loss(model, batch)
    base, _ = plain.compute_loss(model, plain_batch)
    with torch.no_grad():
        ids = batch["lexicon_ids"]
        spans = model(**model.tokenize_mentions([words[i] for i in ids])).span_states
        expected = listwise_distillation(spans, vectors[ids], 0.1)
    assert logs["lexicon"] == pytest.approx(expected.item(), abs=1e-4)
    assert loss.item() == pytest.approx(base.item() + 2.0 * expected.item(), abs=1e-4)
    with pytest.raises(ValueError, match="lexicon"):
        TeacherTerms(lexicon_weight=1.0)
