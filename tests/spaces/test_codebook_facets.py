"""The codebook-facets Space, tested against a running Gradio server through gradio_client and in headless chromium."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from phrasezoo.models.codebook.modeling_codebook import CodebookSeq2Embeddings

from .helpers import load_app, save_tiny, serve

N_WORDS = 20000  # real GloVe 6B 50-d rows; 'garage', 'weights', 'lifting' are inside


def tiny_codebook(k: int = 4) -> CodebookSeq2Embeddings:
    from phrasezoo.resources import load_word_vectors

    glove = load_word_vectors("glove-6b-50d")
    return CodebookSeq2Embeddings.from_word_vectors(
        glove.words[:N_WORDS], glove.vectors[:N_WORDS], seed=0, d_model=32, n_heads=2, ffn_dim=64,
        encoder_layers=1, decoder_layers=1, n_facets=k, max_seq_length=16,
    ).eval()  # fmt: skip


@pytest.fixture(scope="module")
def app():
    return load_app("codebook-facets")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    torch.manual_seed(0)
    folder = save_tiny(tiny_codebook(4), tmp_path_factory.mktemp("codebook-space-model"))
    folder_k1 = save_tiny(tiny_codebook(1), tmp_path_factory.mktemp("codebook-space-model-k1"))
    return folder, folder_k1


@pytest.fixture(scope="module")
def server(app, models):
    model, note = app.load_model(models[0])  # the AutoModel + trust_remote_code path users take
    assert model is not None and "K = 4 facets" in note
    model_k1, _ = app.load_model(models[1])
    with serve(app.build_demo(model, note, model_k1)) as url:
        yield url, model


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server[0], verbose=False)


def test_facets_tab_lists_facets_words_and_importance(client, server):
    _, model = server
    text = "A man is lifting weights in a garage ."
    facets, shaded, importance, plot, k1, status = client.predict(text, 3, api_name="/facets")
    assert [row[0] for row in facets["data"]] == [1, 2, 3, 4]
    expected = model.facet_words(text, top_n=3)
    for row, facet in zip(facets["data"], expected):
        assert row[1] == ", ".join(f"{w} {c:.2f}" for w, c in facet)
        assert row[1].count(",") == 2
    words = {row[0]: row[1] for row in importance["data"]}
    assert set(words) == {"A", "man", "is", "lifting", "weights", "in", "a", "garage", "."}
    direct = {d["word"]: d["weight"] for d in model.word_importance(text)}
    assert words["garage"] == pytest.approx(direct["garage"], abs=1e-4)
    assert [row[1] for row in importance["data"]] == sorted(words.values(), reverse=True)
    assert shaded.count("<span") == 9 and "garage</span>" in shaded
    assert len(k1["data"]) == 1  # the K = 1 model beside it
    assert plot is not None and "Whole text used" in status


def test_long_text_is_truncated_with_a_note(client):
    *_, status = client.predict(" ".join(["garage"] * 40), 2, api_name="/facets")
    assert "Truncated to the model's 16 tokens" in status


def test_compare_tab_scores_and_heatmap(client, server):
    _, model = server
    a, b = "A man is lifting weights in a garage .", "A man is lifting weights ."
    sc, emb, glove, heatmap = client.predict(a, b, api_name="/compare")
    assert sc == pytest.approx(model.similarity(a, b, method="sc"), abs=1e-3)
    assert emb == pytest.approx(model.similarity(a, b), abs=1e-3)
    avg = model.sentence_embedding([a, b], "avg", learned=False)
    assert glove == pytest.approx(float(avg[0] @ avg[1] / np.linalg.norm(avg, axis=1).prod()), abs=1e-3)
    assert -1.0 <= sc <= 0.0 and heatmap is not None
    same, *_ = client.predict(a, a, api_name="/compare")
    assert same >= sc  # a text is at least as close to itself as to another


def test_summarise_tab_highlights_the_picks(app, client, server):
    _, model = server
    marked, chosen, baseline, coverage = client.predict(app.EXAMPLE_DOCUMENT, 2, api_name="/summarize")
    expected = model.summarize(app.EXAMPLE_DOCUMENT, n=2)
    assert [row[1] - 1 for row in chosen["data"]] == expected["indices"]
    assert [row[2] for row in chosen["data"]] == expected["sentences"]
    assert len(baseline["data"]) == 2
    spans = marked if isinstance(marked, list) else marked["value"]
    tags = [span["class_or_confidence"] for span in spans]
    assert len(spans) == len(expected["all_sentences"])
    assert sum(t is not None and "codebook" in t for t in tags) == 2
    assert sum(t is not None and "Sent Emb" in t for t in tags) == 2
    assert coverage is not None


@pytest.mark.parametrize(
    ("api", "args", "message"),
    [
        ("/facets", ("   ", 3), "Enter a text"),
        ("/compare", ("civil order", ""), "Enter text B"),
        ("/summarize", ("One sentence only.", 3), "Found only 1 sentence"),
        ("/summarize", ("word " * 5000, 3), "At most 20,000 characters"),
    ],
)
def test_bad_input_gives_a_clear_error(client, api, args, message):
    with pytest.raises(Exception, match=message):
        client.predict(*args, api_name=api)


def test_missing_model_gives_a_clear_message(app, tmp_path):
    model, note = app.load_model(str(tmp_path / "no-such-model"))
    assert model is None and "not found" in note and "train.py" in note
    demo = app.build_demo(model, note)  # renders the message instead of failing
    assert demo is not None


def test_screenshot_in_headless_chromium(server, tmp_path):
    """The page renders the example's facets in a real browser (the PNG stays out of git; set
    PHRASEZOO_SCREENSHOTS=<dir> to keep a copy to look at)."""
    from .chromium import available, screenshot

    if not available():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path / "codebook-facets.png"
    assert screenshot(server[0], path, "document.querySelectorAll('.importance span').length > 0", timeout=180)
    assert path.stat().st_size > 20_000
    keep_screenshot(path)


def keep_screenshot(path) -> None:
    import os
    import shutil

    if os.environ.get("PHRASEZOO_SCREENSHOTS"):
        os.makedirs(os.environ["PHRASEZOO_SCREENSHOTS"], exist_ok=True)
        shutil.copy(path, os.environ["PHRASEZOO_SCREENSHOTS"])
