"""CodebookSeq2Embeddings: building from real GloVe vectors, tokenizer, masks, loss, round trip and inference API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from phrasezoo.models.codebook.configuration_codebook import CodebookConfig
from phrasezoo.models.codebook.modeling_codebook import CodebookOutput, CodebookSeq2Embeddings

N_WORDS = 20000
TINY = dict(d_model=32, n_heads=2, ffn_dim=64, encoder_layers=2, decoder_layers=1, n_facets=4, max_seq_length=12)
TEXTS = ["The New York Times", "a man is lifting weights in a garage .", "civil order", "real property law"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors (tests/conftest.py)


@pytest.fixture(scope="module")
def glove():
    from phrasezoo.resources import load_word_vectors

    return load_word_vectors("glove-6b-50d")


@pytest.fixture(scope="module")
def model(glove):
    vocab = glove.words[:N_WORDS]
    return CodebookSeq2Embeddings.from_word_vectors(vocab, glove.vectors[:N_WORDS], seed=0, **TINY).eval()


# ----------------------------------------------------------------------------------------------------- building
def test_built_from_word_vectors(model, glove):
    config = model.config
    assert config.model_type == "phrasezoo_codebook" and config.vocab_size == N_WORDS + 3
    assert config.word_dim == 50 and config.n_facets == 4
    index = model.target_word_index()
    assert len(index) == N_WORDS and "<eos>" not in index
    row = index["garage"]
    np.testing.assert_allclose(model.target_vectors[row].numpy(), glove["garage"], rtol=1e-6)
    # inputs: the unit word vector times sqrt(dim); <pad> is zero; targets are buffers, not parameters
    expected = F.normalize(torch.as_tensor(glove["garage"]), dim=0) * np.sqrt(50)
    torch.testing.assert_close(model.word_embeddings.weight[row].detach(), expected)
    assert (model.word_embeddings.weight[0] == 0).all() and (model.target_vectors[:3] == 0).all()
    assert "target_vectors" not in dict(model.named_parameters()) and "target_vectors" in model.state_dict()
    # Zipf proxy p(w) decreasing with rank, specials at 1
    probs = model.word_probs.numpy()
    assert (probs[:3] == 1).all() and (np.diff(probs[3:]) < 0).all()


def test_bad_build_inputs(glove):
    vectors = glove.vectors[:10]
    with pytest.raises(ValueError, match="vectors must be"):
        CodebookSeq2Embeddings.from_word_vectors(glove.words[:9], vectors, **TINY)
    with pytest.raises(ValueError, match="duplicate"):
        CodebookSeq2Embeddings.from_word_vectors(["a"] * 10, vectors, **TINY)
    with pytest.raises(ValueError, match="special"):
        CodebookSeq2Embeddings.from_word_vectors(["<eos>"] + glove.words[1:10], vectors, **TINY)
    with pytest.raises(ValueError, match="divisible"):
        CodebookConfig(d_model=30, n_heads=4)


# ---------------------------------------------------------------------------------------------------- tokenizer
def test_word_tokenizer_appends_eos_lowercases_and_truncates(model, glove):
    tok = model.tokenizer
    ids = tok("The Garage, xyzzyq!")["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == ["the", "garage", ",", "<unk>", "!", "<eos>"]
    long = " ".join(glove.words[100:130])
    features = model.tokenize([long, "garage"])
    assert features["input_ids"].shape == (2, TINY["max_seq_length"])
    assert features["input_ids"][0, -1] == tok.eos_token_id and features["input_ids"][1, 1] == tok.eos_token_id
    assert features["attention_mask"][1].tolist() == [1, 1] + [0] * (TINY["max_seq_length"] - 2)
    with pytest.raises(ValueError, match="max_seq_length"):
        model.tokenize([long], truncate=False)


def test_left_truncation_keeps_the_last_words(glove):
    phrase = CodebookSeq2Embeddings.from_word_vectors(
        glove.words[:500], glove.vectors[:500], truncation_side="left", **{**TINY, "max_seq_length": 6}
    )
    words = glove.words[100:110]
    ids = phrase.tokenize([" ".join(words)])["input_ids"][0]
    assert phrase.tokenizer.convert_ids_to_tokens(ids.tolist()) == words[-5:] + ["<eos>"]


# ------------------------------------------------------------------------------------------------------ forward
def test_forward_shapes_and_padding_invariance(model):
    features = model.tokenize(TEXTS)
    with torch.no_grad():
        out = model(**features)
    assert isinstance(out, CodebookOutput) and out.loss is None
    assert out.facets.shape == (len(TEXTS), 4, 50) and out.pooled.shape == (len(TEXTS), 32)
    # each text alone (no padding) gives the same facets and pooled state as inside the padded batch
    for i, text in enumerate(TEXTS):
        with torch.no_grad():
            alone = model(**model.tokenize([text]))
        torch.testing.assert_close(alone.facets[0], out.facets[i], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(alone.pooled[0], out.pooled[i], atol=1e-5, rtol=1e-4)


def test_cross_attention_is_optional(glove):
    phrase = CodebookSeq2Embeddings.from_word_vectors(
        glove.words[:200], glove.vectors[:200], cross_attention=False, **TINY
    )
    assert isinstance(phrase.decoder, torch.nn.TransformerEncoder)
    assert phrase(**phrase.tokenize(["the world"])).facets.shape == (1, 4, 50)


def test_loss_trains_facets_towards_the_targets(glove):
    """A few optimiser steps on fixed (text, co-occurring words) pairs lower the own-error and raise the margin."""
    torch.manual_seed(0)
    m = CodebookSeq2Embeddings.from_word_vectors(glove.words[:2000], glove.vectors[:2000], seed=0, **TINY)
    index = m.target_word_index()
    data = [
        ("the team won the game", ["season", "league", "coach", "players"]),
        ("the bank raised interest rates", ["market", "prices", "economy", "investors"]),
        ("the army attacked the city", ["troops", "forces", "military", "soldiers"]),
        ("the court ruled on the case", ["judge", "law", "trial", "justice"]),
    ]
    features = m.tokenize([t for t, _ in data])
    target_ids = torch.tensor([[index[w] for w in words] for _, words in data])
    target_mask = torch.ones_like(target_ids, dtype=torch.bool)
    optimizer = torch.optim.Adam(m.parameters(), lr=3e-3)
    m.train()
    history = []
    for step in range(40):
        out = m(**features, target_ids=target_ids, target_mask=target_mask)
        optimizer.zero_grad()
        out.loss.backward()
        if step == 0:
            assert m.word_embeddings.weight.grad is not None and m.facet_maps.weight.grad.abs().sum() > 0
        optimizer.step()
        history.append((out.loss_pos.item(), out.loss_neg.item()))
    assert history[-1][0] < history[0][0] - 0.1, history
    assert history[-1][1] - history[-1][0] > history[0][1] - history[0][0] + 0.1, history
    torch.testing.assert_close(m.target_vectors[3:10], torch.as_tensor(glove.vectors[:7]))  # frozen


# --------------------------------------------------------------------------------------------------- round trip
def test_round_trip_in_a_fresh_process(model, tmp_path):
    """save_pretrained + tokenizer -> AutoModel/AutoTokenizer (trust_remote_code) offline give the same facets."""
    folder = tmp_path / "codebook"
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    assert {"model.safetensors", "tokenizer.json", "modeling_codebook.py", "nnsc.py", "inference_codebook.py"} <= {
        p.name for p in folder.iterdir()
    }
    expected = model.facets(TEXTS)
    script = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        from transformers import AutoModel, AutoTokenizer
        model = AutoModel.from_pretrained({str(folder)!r}, trust_remote_code=True)
        tokenizer = AutoTokenizer.from_pretrained({str(folder)!r}, trust_remote_code=True)
        assert tokenizer.is_fast and tokenizer("The Garage")["input_ids"] == {model.tokenizer("The Garage")["input_ids"]!r}
        assert not any(m.startswith("phrasezoo") for m in sys.modules)
        assert model.tokenizer("The Garage")["input_ids"] == tokenizer("The Garage")["input_ids"]
        np.save({str(tmp_path / "facets.npy")!r}, model.facets({TEXTS!r}))
        with open({str(tmp_path / "words.json")!r}, "w") as handle:
            json.dump(model.facet_words("civil order", top_n=2), handle)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Do you wish to run the custom code" not in proc.stdout + proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "facets.npy"), expected, atol=1e-5)
    loaded_words = json.loads((tmp_path / "words.json").read_text())
    assert [[w for w, _ in facet] for facet in loaded_words] == [
        [w for w, _ in facet] for facet in model.facet_words("civil order", top_n=2)
    ]


# --------------------------------------------------------------------------------------------------- inference
def test_encode_contract(model):
    one_by_one = np.stack([model.encode([t], batch_size=1)[0] for t in TEXTS])
    batched = model.encode(TEXTS, batch_size=3)
    np.testing.assert_allclose(one_by_one, batched, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    assert model.encode("civil order").shape == (32,)
    raw = model.encode(TEXTS, normalize=False, convert_to_numpy=False)
    assert isinstance(raw, torch.Tensor) and raw.dtype == torch.float32
    # the mean of the encoder states over the real tokens, <eos> included
    with torch.no_grad():
        features = model.tokenize(["civil order"])
        hidden = model(**features).last_hidden_state[0]
    torch.testing.assert_close(raw[2], hidden.mean(0), atol=1e-5, rtol=1e-4)
    model.train()
    model.encode(TEXTS[:1])
    assert model.training
    model.eval()


@pytest.mark.parametrize(
    "bad, message",
    [([], "empty list"), ([""], "empty"), ([3], "not a string"), (None, "list of strings")],
)
def test_bad_inputs(model, bad, message):
    for call in (model.encode, model.facets, model.word_importance, model.facet_words):
        with pytest.raises(ValueError, match=message):
            call(bad)


def test_facets_and_facet_words(model, glove):
    facets = model.facets(TEXTS)
    assert facets.shape == (len(TEXTS), 4, 50)
    np.testing.assert_allclose(np.linalg.norm(facets, axis=-1), 1.0, atol=1e-5)
    raw = model.facets(TEXTS, normalize=False)
    np.testing.assert_allclose(facets, raw / np.linalg.norm(raw, axis=-1, keepdims=True), atol=1e-5)
    words = model.facet_words(TEXTS[1], top_n=3)
    assert len(words) == 4 and all(len(facet) == 3 for facet in words)
    # the same neighbours by brute force over the vocabulary's GloVe vectors
    unit = glove.vectors[:N_WORDS] / np.linalg.norm(glove.vectors[:N_WORDS], axis=1, keepdims=True)
    for k, facet in enumerate(words):
        scores = unit @ facets[1, k]
        best = np.argsort(-scores)[:3]
        assert [w for w, _ in facet] == [glove.words[i] for i in best]
        np.testing.assert_allclose([c for _, c in facet], scores[best], atol=1e-5)
    with pytest.raises(ValueError, match="top_n"):
        model.facet_words("x", top_n=0)


def test_word_importance_is_eq6(model, glove):
    text = "A man is lifting weights in a xyzzyq garage."
    result = model.word_importance(text)
    assert [d["word"] for d in result] == ["A", "man", "is", "lifting", "weights", "in", "a", "xyzzyq", "garage", "."]
    assert all(text[d["start"] : d["end"]] == d["word"] for d in result)
    facets = model.facets(text)
    for d in result:
        if d["word"] == "xyzzyq":
            assert d["weight"] == 0 and not d["known"]
            continue
        w = glove[d["word"].lower()]
        expected = np.clip(facets @ (w / np.linalg.norm(w)), 0, None).sum()
        assert d["weight"] == pytest.approx(expected, abs=1e-5)


def test_similarity_emb_and_sc(model):
    emb = model.similarity(TEXTS, TEXTS[:2])
    enc = model.encode(TEXTS)
    np.testing.assert_allclose(emb, enc @ enc[:2].T, atol=1e-5)
    sc = model.similarity(TEXTS, TEXTS, method="sc")
    assert sc.shape == (4, 4)
    # a codebook rebuilds itself up to the L1 shrinkage: coefficient 1 - lam/2, error (lam/2)^2 = 0.04
    np.testing.assert_allclose(np.diag(sc), -0.04, atol=5e-3)
    np.testing.assert_allclose(sc, sc.T, atol=1e-5)  # symmetric by construction
    assert (sc <= 1e-6).all() and (sc >= -1 - 1e-6).all()
    pairs = model.similarity(TEXTS, TEXTS[::-1], method="sc", pairwise=True)
    np.testing.assert_allclose(pairs, [sc[i, 3 - i] for i in range(4)], atol=1e-5)
    assert isinstance(model.similarity("civil order", "real property", method="sc"), float)
    # the official RMSprop solver gives nearly the same distance
    fa, fb = model.facets(TEXTS[:2], convert_to_numpy=False), model.facets(TEXTS[2:], convert_to_numpy=False)
    reference = model.sc_distance(fa, fb, solver="rmsprop", generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model.sc_distance(fa, fb), reference, atol=0.02, rtol=0.05)
    coefficients = model.coefficient_matrix(TEXTS[0], TEXTS[1])
    assert coefficients.shape == (4, 4) and coefficients.min() >= 0 and coefficients.max() <= 1
    with pytest.raises(ValueError, match="method"):
        model.similarity("a", "b", method="cos")
    with pytest.raises(ValueError, match="equal length"):
        model.similarity(TEXTS, TEXTS[:2], pairwise=True)


def test_sentence_embeddings_with_and_without_learned_weights(model, glove):
    texts = ["A man is lifting weights.", "The bank raised rates xyzzyq"]
    avg = model.sentence_embedding(texts, "avg", learned=False)
    expected = np.mean([glove[w] for w in ["a", "man", "is", "lifting", "weights", "."]], axis=0)
    np.testing.assert_allclose(avg[0], expected, atol=1e-5)
    # Prob_avg: alpha / (alpha + p(w)) with the model's p(w), or a given dict
    probs = {w: 1e-4 for w in ["the", "bank", "raised", "rates"]}
    prob = model.sentence_embedding(texts[1], "prob_avg", learned=False, word_probs=probs)
    np.testing.assert_allclose(prob, 0.5 * np.mean([glove[w] for w in probs], axis=0), atol=1e-5)
    # learned weights = eq. 6 importance multiplied in
    importance = [d["weight"] for d in model.word_importance(texts[0]) if d["known"]]
    words = ["a", "man", "is", "lifting", "weights", "."]
    ours = model.sentence_embedding(texts[0], "avg", learned=True)
    np.testing.assert_allclose(ours, np.mean([a * glove[w] for a, w in zip(importance, words)], axis=0), atol=1e-5)
    centroid = model.sentence_embedding(texts, "avg", learned="centroid")
    assert centroid.shape == (2, 50) and not np.allclose(centroid, avg)
    # SIF: remove the projection on a first principal component from reference texts
    pc = model.fit_sif_pc(TEXTS + texts)
    assert pc.shape == (50,) and np.linalg.norm(pc) == pytest.approx(1, abs=1e-5)
    sif = model.sentence_embedding(texts, "sif", pc=pc)
    np.testing.assert_allclose(sif @ pc, 0, atol=1e-5)
    assert model.sentence_embedding(texts, "sif", pc="transductive").shape == (2, 50)
    with pytest.raises(ValueError, match="principal component"):
        model.sentence_embedding(texts, "sif")
    with pytest.raises(ValueError, match="weighting"):
        model.sentence_embedding(texts, "tfidf")
    with pytest.raises(ValueError, match="learned"):
        model.sentence_embedding(texts, "avg", learned="yes")


def test_summarize_is_greedy_eq7(model):
    document = (
        "The army attacked the city at dawn. Troops and tanks entered the northern district. "
        "The central bank raised interest rates again. Markets fell as investors sold shares. "
        "The weather was mild. Soldiers and civilians fled the fighting."
    )
    result = model.summarize(document, n=3)
    assert len(result["all_sentences"]) == 6
    assert len(set(result["indices"])) == 3 and result["sentences"] == [
        result["all_sentences"][i] for i in result["indices"]
    ]
    gains = result["gains"]
    assert all(g >= 0 for g in gains) and gains == sorted(gains, reverse=True)  # submodular: gains shrink
    coverage = np.array(result["facet_coverage"])
    assert coverage.shape == (3, 4) and coverage.sum() == pytest.approx(sum(gains), rel=1e-4)
    # the first pick is the single sentence whose facets cover the document best (eq. 7 by brute force)
    sentences = result["all_sentences"]
    facets = model.facets(sentences)
    ids = [i for i in model.tokenizer(" ".join(sentences), add_special_tokens=False)["input_ids"] if i >= 3]
    words = F.normalize(model.target_vectors[ids], dim=-1).numpy()
    weights = 1e-4 / (1e-4 + model.word_probs[ids].numpy())
    scores = [(weights * np.clip((words @ f.T).max(1), 0, None)).sum() for f in facets]
    assert result["indices"][0] == int(np.argmax(scores))
    assert gains[0] == pytest.approx(max(scores), rel=1e-4)
    baseline = model.summarize(sentences, n=2, method="sent_emb")
    assert len(baseline["indices"]) == 2 and np.array(baseline["facet_coverage"]).shape == (2, 1)
    assert len(model.summarize(sentences[:2], n=5)["indices"]) == 2
    with pytest.raises(ValueError, match="non-empty"):
        model.summarize("   ")
    with pytest.raises(ValueError, match="vocabulary"):
        model.summarize("Xyzzyq qwxzt")
    with pytest.raises(ValueError, match="n must"):
        model.summarize(document, n=0)


def test_model_from_a_config_with_a_vocabulary_builds_its_tokenizer(tmp_path):
    """What the registry's generic tiny_model does: config kwargs only, no word vectors, no folder."""
    from transformers import AutoModel

    torch.manual_seed(0)
    config = CodebookConfig(vocabulary=["civil", "order", "real", "property"], truncation_side="left", **TINY)
    assert config.vocab_size == 7
    bare = CodebookSeq2Embeddings(config).eval()
    ids = bare.tokenizer("Civil disorder order")["input_ids"]
    assert bare.tokenizer.convert_ids_to_tokens(ids) == ["civil", "<unk>", "order", "<eos>"]
    assert bare.tokenizer.truncation_side == "left"
    assert bare.encode(["civil order", "real property"]).shape == (2, 32)
    bare.save_pretrained(tmp_path)
    bare.tokenizer.save_pretrained(tmp_path)
    loaded = AutoModel.from_pretrained(tmp_path, trust_remote_code=True)
    np.testing.assert_allclose(loaded.facets(["civil order"]), bare.facets(["civil order"]), atol=1e-5)
    with pytest.raises(ValueError, match="no tokenizer"):
        CodebookSeq2Embeddings(CodebookConfig(**TINY)).encode(["civil order"])
