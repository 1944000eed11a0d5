"""The UCTopic topic-mining Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import pytest

from phrasezoo.zoo.registry import get_method

from .helpers import load_app, save_tiny, serve


@pytest.fixture(scope="module")
def app():
    return load_app("uctopic-topics")


@pytest.fixture(scope="module")
def server(app, tmp_path_factory):
    model, note = app.load_model(
        save_tiny(get_method("uctopic").tiny_model(), tmp_path_factory.mktemp("uctopic-space-model"))
    )
    assert note.startswith("UCTopic model")  # loaded as users load it, no fallback
    with serve(app.build_demo(model, note)) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def test_mines_the_requested_number_of_topics(app, client):
    topics, mentions, plot, status = client.predict(app.EXAMPLE, 3, 1, api_name="/mine")
    assert len(topics["data"]) == 3
    assert sum(row[1] for row in topics["data"]) == len(mentions["data"])
    assert {row[1] for row in mentions["data"]} == {1, 2, 3}
    phrases = {row[0] for row in mentions["data"]}
    assert {"central bank", "striker", "neural network"} <= phrases  # lemmatised noun chunks, determiners dropped
    assert "3 topics" in status and "UCTopic model" in status
    assert plot is not None


def test_auto_k_reports_the_silhouette_choice(app, client):
    topics, _, _, status = client.predict(app.EXAMPLE, 0, 1, api_name="/mine")
    assert 2 <= len(topics["data"]) <= app.MAX_TOPICS
    assert "silhouette" in status


@pytest.mark.parametrize(
    ("text", "k", "message"),
    [
        ("   ", 0, "Paste some text"),
        ("word " * 5000, 0, "At most 20,000 characters"),
        ("The cat sat.", 0, "Found only"),
    ],
)
def test_bad_input_gives_a_clear_error(client, text, k, message):
    with pytest.raises(Exception, match=message):
        client.predict(text, k, 1, api_name="/mine")


def test_falls_back_to_the_base_encoder_when_the_model_is_missing(app, tmp_path):
    model, note = app.load_model(str(tmp_path / "no-such-model"))
    assert isinstance(model, app.SpanMeanEncoder) and "fallback" in note
    vectors = model.encode([("The central bank raised rates.", (4, 16)), ("Rates rose.", (0, 5))])
    assert vectors.shape == (2, 384)


def test_screenshot_in_headless_chromium(server, tmp_path):
    """The page renders its example's topics in a real browser (the PNG is kept out of git; set
    PHRASEZOO_SCREENSHOTS=<dir> to keep a copy to look at)."""
    from .chromium import available, screenshot

    if not available():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path / "uctopic-topics.png"
    assert screenshot(server, path, "document.body.innerText.includes(' mentions, ')", timeout=180)
    assert path.stat().st_size > 20_000
    keep_screenshot(path)


def keep_screenshot(path) -> None:
    import os
    import shutil

    if os.environ.get("PHRASEZOO_SCREENSHOTS"):
        os.makedirs(os.environ["PHRASEZOO_SCREENSHOTS"], exist_ok=True)
        shutil.copy(path, os.environ["PHRASEZOO_SCREENSHOTS"])
