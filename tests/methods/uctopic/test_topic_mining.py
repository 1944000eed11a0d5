"""Topic mining: CCL pieces with known answers, the miner facade on a tiny model, save/load, plot, CLI."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from phrasezoo.applications.commands import main
from phrasezoo.methods.uctopic.ccl import CCLSampler, is_ccl_trainable, select_confident
from phrasezoo.methods.uctopic.topic_mining import (
    CCLConfig,
    NounPhraseExtractor,
    PhraseMention,
    TopicMiner,
    ccl_finetune,
    ccl_loss,
    lemma_keys,
    majority_vote,
    pseudo_labels,
    visualize_topics,
)
from phrasezoo.methods.uctopic.topic_mining.commands import load_topic_model
from phrasezoo.zoo.registry import get_method

tiny_model = get_method("uctopic").tiny_model

FAST_CCL = CCLConfig(steps=3, batch_size=4, negatives=2, max_seq_length=32, mixed_precision="no", top_fraction=0.5)


@pytest.fixture(scope="module")
def model():
    return tiny_model().eval()


# ----------------------------------------------------------------------------------------------- CCL pieces
def test_select_confident_takes_the_closest_members_of_each_cluster():
    embeddings = np.array([[1, 0], [0.9, 0.1], [0.5, 0.5], [0, 1], [0.2, 0.8], [0.1, 0.9]], dtype=np.float32)
    centroids = np.array([[1, 0], [0, 1]], dtype=np.float32)
    assignments = np.array([0, 0, 0, 1, 1, 1])
    assert select_confident(embeddings, centroids, assignments, 0.34).tolist() == [0, 1, 3, 5]
    assert select_confident(embeddings, centroids, assignments, 0.01).tolist() == [0, 3]  # at least one each
    with pytest.raises(ValueError, match="top_fraction"):
        select_confident(embeddings, centroids, assignments, 0.0)


def test_majority_vote_per_phrase():
    keys = ["paris", "paris", "paris", "obama", "obama", "rome", "rome"]
    labels = [0, 0, 1, 1, 1, 0, 1]
    confidence = [0.9, 0.8, 0.99, 0.5, 0.5, 0.2, 0.7]
    assert majority_vote(keys, labels, range(7), confidence) == {"paris": 0, "obama": 1, "rome": 1}
    assert majority_vote(keys, labels, [0, 2, 3]) == {"paris": 0, "obama": 1}  # tie 0/1 without weights: smaller
    assert majority_vote(keys, labels, [2]) == {"paris": 1}  # only the selected instances vote


def test_pseudo_labels_from_two_obvious_groups():
    rng = np.random.default_rng(0)
    a = rng.normal([5, 0, 0], 0.1, size=(20, 3))
    b = rng.normal([0, 5, 0], 0.1, size=(20, 3))
    keys = [f"a{i % 4}" for i in range(20)] + [f"b{i % 4}" for i in range(20)]
    labels = pseudo_labels(np.vstack([a, b]), keys, n_clusters=2, top_fraction=0.5)
    assert labels.n_clusters == 2 and len(labels.confident) == 20
    assert len({labels.by_key[f"a{i}"] for i in range(4)}) == 1
    assert {labels.by_key["a0"], labels.by_key["b0"]} == {0, 1}


def test_ccl_loss_on_hand_made_vectors():
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    negatives = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    labels = torch.tensor([0, 1])
    tau = 0.5
    # anchor 0: positive (cos 1), other anchor's positive (label 1, cos 0), negative 0 (label 1, cos 0);
    # negative 1 has anchor 0's own label: not a negative
    expected = -np.log(np.exp(2) / (np.exp(2) + 2 * np.exp(0)))
    loss = ccl_loss(anchors, positives, negatives, labels, labels, torch.tensor([1, 0]), tau)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    # swapped negative labels: anchor 0's negative is now [1, 0] (label 1, cos 1), its twin [0, 1] is masked
    hard = ccl_loss(anchors, positives, negatives, labels, labels, torch.tensor([0, 1]), tau)
    assert hard.item() == pytest.approx(-np.log(np.exp(2) / (2 * np.exp(2) + np.exp(0))), rel=1e-6)


def test_sampler_pairs_same_phrase_and_draws_other_topic_negatives():
    mentions = [(f"Sentence {i} about things.", (0, 8)) for i in range(8)]
    keys = ["paris", "paris", "rome", "obama", "obama", "merkel", "lonely", "unlabelled"]
    labels = {"paris": 0, "rome": 0, "obama": 1, "merkel": 1, "lonely": 2}
    sampler = CCLSampler(mentions, keys, labels)
    assert sampler.anchors == [0, 1, 3, 4] and sampler.usable
    anchors, positives, negatives = sampler.sample(random.Random(0), batch_size=4, negatives=3)
    for anchor, positive in zip(anchors, positives):
        assert keys[positive] == keys[anchor] and positive != anchor
    for i, anchor in enumerate(anchors):
        for negative in negatives[3 * i : 3 * i + 3]:
            assert labels[keys[negative]] != labels[keys[anchor]]
    assert 7 not in negatives  # unlabelled phrases take no part
    assert not CCLSampler(mentions, keys, {"paris": 0, "rome": 0}).usable  # a single topic: no negative


def test_ccl_finetune_trains_the_encoder_and_skips_without_pairs(model):
    mentions = [
        ("Paris is a city in France.", (0, 5)), ("We flew to Paris last May.", (11, 16)),
        ("Obama gave a speech.", (0, 5)), ("The press met Obama today.", (14, 19)),
        ("Rome has old churches.", (0, 4)), ("Merkel visited Rome.", (0, 6)),
    ]  # fmt: skip
    keys = ["paris", "paris", "obama", "obama", "rome", "merkel"]
    labels = {"paris": 0, "rome": 0, "obama": 1, "merkel": 1}
    tuned = tiny_model().eval()
    before = {k: v.clone() for k, v in tuned.state_dict().items()}
    result = ccl_finetune(tuned, mentions, keys, labels, FAST_CCL, progress=False)
    assert result.steps == 3 and all(np.isfinite(result.losses)) and result.skipped_reason is None
    assert any(not torch.equal(before[k], v) for k, v in tuned.state_dict().items())
    assert not tuned.training  # the caller's mode is restored
    skipped = ccl_finetune(tiny_model(), mentions[:1], keys[:1], {"paris": 0}, FAST_CCL, progress=False)
    assert skipped.steps == 0 and "second mention" in skipped.skipped_reason
    assert is_ccl_trainable(model) and not is_ccl_trainable(object())


# ------------------------------------------------------------------------------------------------ phrases
def test_noun_phrases_drop_lone_pronouns_and_leading_determiners():
    mentions = NounPhraseExtractor()(["The great burgers were cold. It was late and they left the old diner."],
                                     progress=False)  # fmt: skip
    texts = [m.text for m in mentions]
    assert "great burgers" in texts and "old diner" in texts
    assert "It" not in texts and "they" not in texts
    burger = next(m for m in mentions if m.text == "great burgers")
    assert burger.key == "great burger" and burger.sentence[burger.start : burger.end] == "great burgers"
    assert lemma_keys(["the Tumors", "Tumor", "New York"]) == ["tumor", "tumor", "new york"]


# -------------------------------------------------------------------------------------------------- miner
FOOD = ["The burger was juicy.", "I loved the burger.", "The fries were salty.", "Great fries and burger."]
CODE = ["The compiler crashed.", "Python has a compiler.", "The parser failed.", "A parser reads code."]
DOCS = FOOD + CODE


def _word_extractor(documents, progress=False):
    """Every alphabetic word longer than 3 letters is a phrase (no spaCy: fast and predictable)."""
    out = []
    for doc_id, text in enumerate(documents):
        position = 0
        for word in text.replace(".", " ").split():
            start = text.index(word, position)
            position = start + len(word)
            if word.isalpha() and len(word) > 3:
                out.append(PhraseMention(doc_id, text, start, start + len(word), word, word.lower()))
    return out


def _miner(model, **kwargs):
    options = {"ccl_config": FAST_CCL, "phrase_extractor": _word_extractor, "min_frequency": 1,
               "mixed_precision": "no", "progress": False}  # fmt: skip
    return TopicMiner(model, **{**options, **kwargs})


def test_miner_fits_topics_and_assigns_every_mention(model):
    miner = _miner(model, n_topics=2).fit(DOCS)
    assert miner.n_topics_ == 2 and miner.centroids_.shape == (2, model.config.embedding_dim)
    topics = miner.get_topics(top_n=20)
    listed = [p for phrases in topics.values() for p, _ in phrases]
    assert sorted(listed) == sorted({m.text for m in _word_extractor(DOCS)}, key=str)  # every phrase once
    burger = miner.phrases_["burger"]
    assert burger.count == 3 and len(burger.distribution) == 2 and sum(burger.distribution) == pytest.approx(1)
    assert burger.topic == int(np.argmax(burger.distribution))
    assert miner.ccl_result_ is not None and miner.ccl_result_.steps == 3
    assert not torch.equal(model.mlp.dense.weight, miner.model_.mlp.dense.weight)  # the copy was finetuned
    torch.testing.assert_close(model.mlp.dense.weight, tiny_model().mlp.dense.weight)  # the given model was not
    assignments = miner.transform(["The burger and the parser."])
    assert [a.text for a in assignments[0]] == ["burger", "parser"]
    assert all(0 <= a.topic < 2 and 0 < a.probability <= 1 for a in assignments[0])
    per_doc = miner.fit_transform(DOCS)
    assert len(per_doc) == len(DOCS) and sum(map(len, per_doc)) == len(miner.mentions_)
    info = miner.get_topic_info()
    assert sum(row["mentions"] for row in info) == len(miner.mentions_)
    assert "Topic 0" in miner.format_topics()


def test_miner_chooses_k_by_silhouette_within_range(model):
    miner = _miner(model, n_topics=None, topic_range=(2, 4), ccl=False).fit(DOCS)
    assert set(miner.silhouette_scores_) <= {2, 3, 4} and miner.n_topics_ in miner.silhouette_scores_
    assert miner.n_topics_ == max(miner.silhouette_scores_, key=miner.silhouette_scores_.get)


def test_miner_adapts_to_fewer_phrases_than_topics(model):
    documents = ["The burger was juicy.", "Another burger here."]
    with pytest.warns(UserWarning, match="only 1 distinct phrase"):
        miner = _miner(model, n_topics=5, phrase_extractor=_only("burger")).fit(documents)
    assert miner.n_topics_ == 1 and "fewer than the 5 topics" in miner.messages_[0]
    assert miner.get_topics()[0][0][0] == "burger"
    with pytest.warns(UserWarning, match="too few to choose"):
        auto = _miner(model, n_topics=None, phrase_extractor=_only("burger", "juicy")).fit(documents)
    assert auto.n_topics_ == 2
    with pytest.raises(ValueError, match="No noun phrase"):
        _miner(model, phrase_extractor=_only("missing")).fit(documents)
    with pytest.raises(ValueError, match="at least one document"):
        _miner(model).fit([])


def _only(*words):
    def extract(documents, progress=False):
        return [m for m in _word_extractor(documents) if m.key in words]

    return extract


def test_save_load_round_trip_and_plot(model, tmp_path):
    miner = _miner(model, n_topics=2).fit(DOCS)
    folder = miner.save(tmp_path / "miner")
    loaded = TopicMiner.load(folder, progress=False)
    loaded.phrase_extractor = _word_extractor
    assert loaded.get_topics(top_n=5) == miner.get_topics(top_n=5)
    np.testing.assert_allclose(loaded.centroids_, miner.centroids_)
    new = ["Salty fries and a compiler."]
    assert [(a.text, a.topic) for a in loaded.transform(new)[0]] == [(a.text, a.topic) for a in miner.transform(new)[0]]
    topics_only = TopicMiner.load(folder, load_model=False, progress=False)
    assert topics_only.format_topics() == miner.format_topics()
    figure = visualize_topics(miner, tmp_path / "plot" / "topics.png")
    assert (tmp_path / "plot" / "topics.png").stat().st_size > 1000 and len(figure.axes) == 2
    with pytest.raises(FileNotFoundError, match="no saved topic miner"):
        TopicMiner.load(tmp_path)


def test_cli_mines_a_text_corpus_with_an_exported_model(model, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "model"
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(DOCS * 2) + "\n")
    monkeypatch.chdir(tmp_path)
    code = main(["mine", "--model", str(folder), "--corpus", str(corpus), "--k", "2", "--ccl-steps", "2",
                 "--min-frequency", "2", "--top-fraction", "0.5", "--output", str(tmp_path / "out"), "--fp32",
                 "--no-progress"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "2 topics" in printed and "Topic 0" in printed and "Topic 1" in printed
    assert (tmp_path / "out" / "topics.png").exists() and (tmp_path / "out" / "topic_miner.json").exists()
    assert main(["show", str(tmp_path / "out")]) == 0
    assert "Topic 0" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="Train it first"):
        load_topic_model("uctopic-mini")


def test_a_ccl_soup_config_is_refused_with_the_fix(model):
    from dataclasses import replace

    with pytest.raises(ValueError, match="Drop soup_seeds"):
        TopicMiner(model, ccl_config=replace(FAST_CCL, soup_seeds=[0, 1]))
