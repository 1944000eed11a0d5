"""SliceModel and its span pooling: exactness against brute force, gradients, masking, windows, inference API."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from phrasezoo.models.slice.configuration_slice import SliceConfig
from phrasezoo.models.slice.modeling_slice import SliceModel, SliceOutput
from phrasezoo.models.slice.span_pooling import (
    best_span_similarity,
    passage_batch,
    plan_windows,
    slice_loss,
    span_similarities,
    word_prefix_sums,
)

PASSAGES = [
    "Catching a glimpse of the ocean, I noticed a group of boys are playing soccer on the beach.",
    "The committee approved the new budget after a long debate.",
    "Short one.",
]


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors (tests/conftest.py)


@functools.lru_cache(maxsize=1)
def minilm_tokenizer():
    from transformers import AutoTokenizer

    from phrasezoo.resources import resolve_backbone

    return AutoTokenizer.from_pretrained(resolve_backbone("minilm-l6"))


def tiny_slice_model(**config) -> SliceModel:
    """A small random SLICE model with the real MiniLM tokenizer."""
    from transformers import BertConfig

    backbone = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    torch.manual_seed(0)
    model = SliceModel(SliceConfig(backbone_config=backbone, **{"max_seq_length": 64, **config}))
    model.set_tokenizer(minilm_tokenizer())
    return model.eval()


# ------------------------------------------------------------------------------------------ differentiable core
def random_rows(batch=3, tokens=12, dim=8, seed=0):
    """Random token vectors; words of 1-3 tokens; a special token first; some padding at the end of later rows."""
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(batch, tokens, dim, generator=g)
    word_index = torch.full((batch, tokens), -1, dtype=torch.long)
    n_words = []
    for b in range(batch):
        position, word, last = 1, 0, tokens - 1 - 2 * b
        while position < last:
            width = int(torch.randint(1, 4, (1,), generator=g))
            word_index[b, position : min(position + width, last)] = word
            position += width
            word += 1
        n_words.append(word)
    word_mask = torch.zeros(batch, max(n_words), dtype=torch.bool)
    for b, n in enumerate(n_words):
        word_mask[b, :n] = True
    query = torch.randn(batch, dim, generator=g)
    return query, emb, word_index, word_mask, n_words


def brute_force(query, emb, word_index, n_words, min_words, max_words):
    """One explicit mean-pool and cosine per span."""
    best = []
    for b in range(emb.shape[0]):
        top, span = -np.inf, (-1, -1)
        for start in range(n_words[b]):
            for length in range(min_words, max_words + 1):
                end = start + length
                if end > n_words[b]:
                    continue
                tokens = (word_index[b] >= start) & (word_index[b] < end)
                if not tokens.any():
                    continue
                vector = emb[b][tokens].mean(0)
                cos = F.cosine_similarity(vector, query[b], dim=0).item()
                if cos > top:
                    top, span = cos, (start, end)
        best.append((top, span))
    return best


@pytest.mark.parametrize("min_words,max_words", [(1, 1), (1, 4), (2, 3), (1, 20), (3, 5)])
def test_best_span_matches_brute_force(min_words, max_words):
    query, emb, word_index, word_mask, n_words = random_rows(seed=min_words * 7 + max_words)
    best, span = best_span_similarity(query, emb, word_index, word_mask, min_words, max_words)
    for b, (top, expected_span) in enumerate(brute_force(query, emb, word_index, n_words, min_words, max_words)):
        assert best[b].item() == pytest.approx(top, abs=1e-5)
        assert tuple(span[b].tolist()) == expected_span
        length = expected_span[1] - expected_span[0]
        assert min_words <= length <= max_words


def test_all_span_similarities_match_brute_force_and_mask_padding():
    query, emb, word_index, word_mask, n_words = random_rows(batch=2, tokens=10, seed=3)
    cos, valid = span_similarities(query, emb, word_index, word_mask, 1, 3)
    assert cos.shape == (2, word_mask.shape[1], 3)
    for b in range(2):
        for start in range(word_mask.shape[1]):
            for k in range(3):
                end = start + 1 + k
                if end > n_words[b]:
                    assert not valid[b, start, k] and cos[b, start, k] == float("-inf")
                    continue
                tokens = (word_index[b] >= start) & (word_index[b] < end)
                expected = F.cosine_similarity(emb[b][tokens].mean(0), query[b], dim=0)
                assert cos[b, start, k].item() == pytest.approx(expected.item(), abs=1e-5)


def test_padding_and_special_tokens_do_not_change_scores():
    query, emb, word_index, word_mask, _ = random_rows(seed=5)
    before, _ = best_span_similarity(query, emb, word_index, word_mask, 1, 5)
    noisy = emb.clone()
    noisy[word_index < 0] = 1e3 * torch.randn_like(noisy[word_index < 0])  # garbage on [CLS]/[SEP]/padding
    after, _ = best_span_similarity(query, noisy, word_index, word_mask, 1, 5)
    torch.testing.assert_close(before, after)


def test_start_mask_restricts_span_starts():
    query, emb, word_index, word_mask, _ = random_rows(seed=9)
    start_mask = torch.zeros_like(word_mask)
    start_mask[:, 2] = True
    _, span = best_span_similarity(query, emb, word_index, word_mask, 1, 4, start_mask=start_mask)
    assert (span[:, 0] == 2).all()


def test_gradient_reaches_query_and_only_the_argmax_span():
    query, emb, word_index, word_mask, _ = random_rows(batch=2, seed=11)
    emb.requires_grad_(True)
    query.requires_grad_(True)
    best, span = best_span_similarity(query, emb, word_index, word_mask, 1, 3)
    best.sum().backward()
    assert torch.isfinite(emb.grad).all() and torch.isfinite(query.grad).all()
    assert query.grad.abs().sum() > 0
    for b in range(2):
        inside = (word_index[b] >= span[b, 0]) & (word_index[b] < span[b, 1])
        assert emb.grad[b][inside].abs().sum() > 0
        assert emb.grad[b][~inside].abs().sum() == 0


def test_word_prefix_sums_and_counts():
    emb = torch.arange(12, dtype=torch.float32).view(1, 6, 2)
    word_index = torch.tensor([[-1, 0, 0, 1, 2, -1]])
    prefix, counts = word_prefix_sums(emb, word_index)
    assert prefix.shape == (1, 4, 2)
    torch.testing.assert_close(prefix[0, 1], emb[0, 1] + emb[0, 2])
    torch.testing.assert_close(prefix[0, 3] - prefix[0, 2], emb[0, 4])
    assert counts[0].tolist() == [0, 2, 3, 4]


def test_rows_without_words_get_minus_inf():
    emb = torch.randn(1, 4, 3)
    best, span = best_span_similarity(torch.randn(1, 3), emb, torch.full((1, 4), -1), None, 1, 3)
    assert best.item() == float("-inf") and span.tolist() == [[-1, -1]]


@pytest.mark.parametrize("bad", [dict(min_words=3, max_words=2), dict(max_words=0), dict(min_words=0)])
def test_bad_span_lengths_raise(bad):
    query, emb, word_index, word_mask, _ = random_rows()
    with pytest.raises(ValueError, match="min_words|max_words"):
        span_similarities(query, emb, word_index, word_mask, **{"min_words": 1, "max_words": 3, **bad})


def test_slice_loss_equals_the_papers_formula():
    cos_t, cos_f, lam = torch.tensor([0.8, 0.1]), torch.tensor([0.3, 0.5]), 30.0
    s_t, s_f = (1 + cos_t) / 2, (1 + cos_f) / 2
    paper = (-lam * s_t + torch.log(torch.exp(lam * s_t) + torch.exp(lam * s_f))).mean()
    torch.testing.assert_close(slice_loss(cos_t, cos_f, lam), paper)


# ----------------------------------------------------------------------------------------------- passage batch
def test_passage_batch_words_follow_whitespace_and_pool_all_pieces():
    tokenizer = minilm_tokenizer()
    text = "Unbelievably, New-York's skyline glows."
    batch = passage_batch(tokenizer, [text], max_length=64)
    chars = batch.word_chars[0]
    assert [text[a:b] for a, b in chars] == text.split()
    assert batch.word_mask[0].sum() == 4
    ids = batch.input_ids[0][batch.attention_mask[0].bool()].tolist()
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    assert batch.word_index[0, 0] == -1 and batch.word_index[0, len(ids) - 1] == -1
    words = batch.word_index[0][batch.word_index[0] >= 0].tolist()
    assert words == sorted(words) and set(words) == {0, 1, 2, 3}
    assert words.count(1) > 1  # "New-York's" is several word pieces, all pooled into one word


def test_passage_batch_truncates_at_a_word_boundary():
    tokenizer = minilm_tokenizer()
    text = " ".join(["unbelievably"] * 40)  # 5 pieces per word
    assert len(tokenizer.tokenize("unbelievably")) == 5
    batch = passage_batch(tokenizer, [text], max_length=20)
    assert len(batch) == 1 and batch.attention_mask.sum() <= 20
    n_words = int(batch.word_mask.sum())
    assert n_words == 3  # 18 content tokens hold 3 whole words (15 tokens); the 4th word is not cut
    assert (batch.word_index[0] >= 0).sum() == 15


def test_windows_cover_every_span_exactly_once():
    word_tokens = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1, 2, 2, 1, 1, 3, 1], dtype=np.int64)
    span_words = 4
    windows = plan_windows(word_tokens, capacity=8, span_words=span_words)
    assert len(windows) > 2
    n = len(word_tokens)
    for start in range(n):
        for length in range(1, span_words + 1):
            end = start + length
            if end > n:
                continue
            owners = [w for w, (a, b, owned) in enumerate(windows) if a <= start < owned and end <= b]
            assert len(owners) == 1, (start, end, windows)
    for a, b, _ in windows:
        assert word_tokens[a:b].sum() <= 8


def test_windowed_rows_own_disjoint_span_starts():
    tokenizer = minilm_tokenizer()
    text = " ".join(f"word{i}" for i in range(60))
    batch = passage_batch(tokenizer, [text, "tiny passage"], max_length=32, span_words=5)
    rows = (batch.row_passage == 0).nonzero().flatten()
    assert len(rows) > 1
    owned = []
    for r in rows:
        first = int(batch.row_first_word[r])
        owned += (first + batch.start_mask[r].nonzero().flatten()).tolist()
    assert sorted(owned) == list(range(60))
    assert batch.attention_mask.sum(1).max() <= 32


# ---------------------------------------------------------------------------------------------------- the model
def test_config_defaults_and_validation():
    config = SliceConfig()
    assert config.model_type == "phrasezoo_slice"
    assert (config.max_seq_length, config.query_max_length) == (128, 32)
    assert (config.max_span_words, config.train_max_span_words, config.min_span_words) == (20, 10, 1)
    assert config.span_unit == "word" and config.similarity_scale == 30.0
    with pytest.raises(ValueError, match="span_unit"):
        SliceConfig(span_unit="char")
    with pytest.raises(ValueError, match="min_span_words"):
        SliceConfig(min_span_words=5, max_span_words=2)


def test_forward_returns_tokens_and_content_mean():
    model = tiny_slice_model()
    features = model.tokenize(["a man riding a horse", "soccer"])
    output = model(**features)
    assert isinstance(output, SliceOutput)
    assert output.token_embeddings.shape[:2] == features["input_ids"].shape
    content = output.content_mask
    assert not content[:, 0].any()  # [CLS]
    assert content.sum(1).tolist() == [5, 1]
    expected = output.token_embeddings[1][content[1]].mean(0)
    torch.testing.assert_close(output.query_embedding[1], expected)


def test_encode_is_the_training_pooling_normalised():
    model = tiny_slice_model()
    vectors = model.encode(["a man riding a horse", "soccer on the beach"], batch_size=1)
    features = model.tokenize(["a man riding a horse"])
    with torch.no_grad():
        raw = model(**features).query_embedding[0]
    np.testing.assert_allclose(vectors[0], F.normalize(raw, dim=0).numpy(), atol=1e-5)
    assert model.encode("soccer on the beach").shape == (32,)


def test_query_and_single_word_span_agree_for_identical_context():
    """A one-word passage and the same word as a query have the same pooled vector (same tokens, same pass)."""
    model = tiny_slice_model()
    batch = model.passage_batch(["horse"])
    with torch.no_grad():
        out = model(**batch.model_inputs())
        best, span = best_span_similarity(out.query_embedding, out.token_embeddings, batch.word_index, batch.word_mask)
    assert best.item() == pytest.approx(1.0, abs=1e-5) and span.tolist() == [[0, 1]]


def test_from_backbone_keeps_minilm_weights_and_caps_length():
    from transformers import AutoModel

    from phrasezoo.resources import resolve_backbone

    path = resolve_backbone("minilm-l6")
    model = SliceModel.from_backbone(path, max_seq_length=4096)
    assert model.config.max_seq_length == 512
    assert model.config.special_token_ids == sorted({101, 102, 0})
    reference = AutoModel.from_pretrained(path)
    key = "encoder.layer.0.attention.self.query.weight"
    torch.testing.assert_close(model.backbone.state_dict()[key], reference.state_dict()[key])


def test_training_loss_backpropagates_through_the_encoder():
    model = tiny_slice_model().train()
    queries = model.tokenize(["boys playing soccer", "a new budget"], max_length=model.config.query_max_length)
    positives = model.passage_batch(PASSAGES[:2])
    negatives = model.passage_batch(PASSAGES[1::-1])
    q = model(**queries).query_embedding
    pos = model(**positives.model_inputs())
    neg = model(**negatives.model_inputs())
    k = model.config.train_max_span_words
    cos_t, _ = best_span_similarity(q, pos.token_embeddings, positives.word_index, positives.word_mask, 1, k)
    cos_f, _ = best_span_similarity(q, neg.token_embeddings, negatives.word_index, negatives.word_mask, 1, k)
    loss = model.training_loss(cos_t, cos_f)
    loss.backward()
    grad = model.backbone.embeddings.word_embeddings.weight.grad
    assert torch.isfinite(loss) and grad is not None and grad.abs().sum() > 0


# ------------------------------------------------------------------------------------------------ inference API
LONG_TEXT = " ".join(f"alpha{i % 7} beta{i}" for i in range(40))  # 80 words: several 64-token windows


def test_encode_tokens_has_offsets_and_word_ids_and_feeds_the_stsb_task():
    from phrasezoo.evaluation.tasks.stsb_context import pooled_spans

    model = tiny_slice_model()
    tokens = model.encode_tokens(PASSAGES)
    assert len(tokens) == len(PASSAGES)
    for text, item in zip(PASSAGES, tokens):
        n = len(model.tokenizer(text, add_special_tokens=False)["input_ids"])
        assert item["embeddings"].shape == (n, 32) and item["offsets"].shape == (n, 2)
        assert item["word_ids"].tolist() == sorted(item["word_ids"].tolist())
        assert item["word_ids"].max() == len(text.split()) - 1
    # the STS-B-Context task pools the same spans as span_embeddings
    vectors, starts, ends = pooled_spans(tokens[0]["embeddings"], tokens[0]["offsets"], PASSAGES[0], max_words=5)
    spans = model.span_embeddings(PASSAGES[0], 1, 5, normalize=False)
    order = np.lexsort((ends, starts))
    np.testing.assert_allclose(vectors[order], spans.vectors, atol=1e-5)


def test_encode_tokens_windows_long_texts_and_covers_each_token_once():
    model = tiny_slice_model()
    item = model.encode_tokens([LONG_TEXT])[0]
    ids = model.tokenizer(LONG_TEXT, add_special_tokens=False, return_offsets_mapping=True)
    assert len(ids["input_ids"]) > model.config.max_seq_length
    np.testing.assert_array_equal(item["offsets"], np.asarray(ids["offset_mapping"]))
    assert sorted(set(item["word_ids"].tolist())) == list(range(80))


def test_span_embeddings_are_means_of_one_pass():
    model = tiny_slice_model()
    text = PASSAGES[1]
    spans = model.span_embeddings(text, min_words=2, max_words=3, normalize=False)
    n = len(text.split())
    assert len(spans.texts) == (n - 1) + (n - 2)
    tokens = model.encode_tokens([text])[0]
    for vector, (a, b), (ca, cb), span_text in zip(spans.vectors, spans.word_spans, spans.char_spans, spans.texts):
        assert 2 <= b - a <= 3 and text[ca:cb] == span_text == " ".join(text.split()[a:b])
        inside = (tokens["word_ids"] >= a) & (tokens["word_ids"] < b)
        np.testing.assert_allclose(vector, tokens["embeddings"][inside].mean(0), atol=1e-5)
    unit = model.span_embeddings(text, 2, 3)
    np.testing.assert_allclose(np.linalg.norm(unit.vectors, axis=1), 1.0, atol=1e-5)


def test_span_embeddings_of_a_long_text_list_every_span_once():
    model = tiny_slice_model()
    spans = model.span_embeddings(LONG_TEXT, 1, 4)
    keys = [tuple(w) for w in spans.word_spans.tolist()]
    assert len(keys) == len(set(keys)) == sum(80 - k + 1 for k in range(1, 5))


def test_find_spans_returns_offsets_and_agrees_with_score_passages():
    model = tiny_slice_model()
    matches = model.find_spans("boys playing soccer", PASSAGES, top_k=4, max_words=6)
    assert 0 < len(matches) <= 4
    assert [m.cosine for m in matches] == sorted((m.cosine for m in matches), reverse=True)
    for m in matches:
        assert PASSAGES[m.passage_index][m.char_start : m.char_end] == m.text
    scores = model.score_passages(["boys playing soccer"], PASSAGES, max_words=6)
    assert scores.shape == (1, len(PASSAGES))
    assert matches[0].cosine == pytest.approx(scores.max(), abs=1e-5)
    whole = model.score_passages("boys playing soccer", PASSAGES, mode="passage")
    expected = model.encode(PASSAGES) @ model.encode("boys playing soccer")
    np.testing.assert_allclose(whole[0], expected, atol=1e-5)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda m: m.find_spans("", PASSAGES), "non-empty query"),
        (lambda m: m.find_spans(None, PASSAGES), "non-empty query"),
        (lambda m: m.find_spans("soccer", []), "empty list"),
        (lambda m: m.find_spans("soccer", "one passage"), "wrap a single passage"),
        (lambda m: m.find_spans("soccer", ["fine", 3]), "not a string"),
        (lambda m: m.find_spans("soccer", ["fine", "  "]), "empty"),
        (lambda m: m.find_spans("soccer", PASSAGES, min_words=4, max_words=2), "min_words"),
        (lambda m: m.find_spans("soccer", PASSAGES, max_words=0), "max_words"),
        (lambda m: m.score_passages("soccer", PASSAGES, mode="tokens"), "mode"),
        (lambda m: m.span_embeddings(""), "non-empty string"),
        (lambda m: m.encode_tokens([]), "empty list"),
        (lambda m: m.encode([""]), "empty"),
    ],
)
def test_bad_input_raises_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call(tiny_slice_model())


def test_base_minilm_finds_the_hidden_phrase():
    """The raw backbone through SliceModel: the inserted sentence is the best span for itself as the query."""
    from phrasezoo.resources import resolve_backbone

    model = SliceModel.from_backbone(resolve_backbone("minilm-l6"))
    phrase = "three dogs chased a ball in the park"
    passages = [
        f"Catching a glimpse of the ocean from the balcony, I noticed {phrase} while their laughter echoed up to me.",
        "The committee approved the new budget after a long debate about public schools and taxes.",
    ]
    best = model.find_spans(phrase, passages, top_k=1)[0]
    assert best.passage_index == 0 and best.text == phrase
    scores = model.score_passages(phrase, passages)
    assert scores[0, 0] > scores[0, 1] and scores[0, 0] > model.score_passages(phrase, passages, "passage")[0, 0]


def test_round_trip_in_a_fresh_process_keeps_span_search(tmp_path):
    import json
    import os
    import subprocess
    import sys
    import textwrap

    model = tiny_slice_model()
    folder = tmp_path / "slice"
    model.save_pretrained(folder, safe_serialization=True)
    model.tokenizer.save_pretrained(folder)
    assert {"span_pooling.py", "span_index.py", "modeling_slice.py"} <= {p.name for p in folder.iterdir()}
    expected = as_records(model.find_spans("boys playing soccer", PASSAGES, top_k=3))
    script = textwrap.dedent(
        f"""
        import importlib.abc, json, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "phrasezoo" or name.startswith("phrasezoo."):
                    raise ImportError("blocked")
        sys.meta_path.insert(0, Block())
        from transformers import AutoModel
        model = AutoModel.from_pretrained({str(folder)!r}, trust_remote_code=True)
        hits = model.find_spans("boys playing soccer", {PASSAGES!r}, top_k=3)
        index = model.build_index({PASSAGES!r})
        index.save({str(tmp_path / "index")!r})
        print(json.dumps([[h.passage_index, h.char_start, h.char_end, h.text, h.cosine] for h in hits]))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [g[:4] for g in got] == [e[:4] for e in expected]
    np.testing.assert_allclose([g[4] for g in got], [e[4] for e in expected], atol=1e-5)
    from phrasezoo.models.slice.span_index import SpanIndex

    loaded = SpanIndex.load(tmp_path / "index", encoder=model.encode)
    assert as_records(loaded.search("boys playing soccer", top_k=3))[0][:4] == expected[0][:4]


def as_records(matches):
    return [[m.passage_index, m.char_start, m.char_end, m.text, m.cosine] for m in matches]
