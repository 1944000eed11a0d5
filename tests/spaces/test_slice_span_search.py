"""The SLICE span-search Space, tested against a running Gradio server through gradio_client and in chromium."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from tests.methods.slice.test_model import tiny_slice_model

from .helpers import load_app, save_tiny, serve

PHRASE = "three dogs chased a ball in the park"
PASSAGES = (
    f"Catching a glimpse of the ocean from the balcony, I noticed {PHRASE} while their laughter echoed up to me.\n\n"
    "The committee approved the new budget after a long debate about public schools and taxes."
)


@pytest.fixture(scope="module")
def app():
    return load_app("slice-span-search")


@pytest.fixture(scope="module")
def base(app):
    """The raw embedded MiniLM through SliceModel.from_backbone (what the comparison box and the fallback use)."""
    return app.load_base(None)


@pytest.fixture(scope="module")
def server(app, base, tmp_path_factory):
    torch.manual_seed(0)
    folder = save_tiny(tiny_slice_model(), tmp_path_factory.mktemp("slice-space-model"))
    model, note = app.load_model(folder)  # the AutoModel + trust_remote_code path users take
    assert note.startswith("SLICE model") and type(model).__module__.startswith("transformers_modules")
    with serve(app.build_demo(model, note, base_loader=lambda: base)) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def labelled(highlight) -> list[tuple[str, str]]:
    """The highlighted (text, label) pieces of a HighlightedText value."""
    pieces = highlight["value"] if isinstance(highlight, dict) and "value" in highlight else highlight
    return [(p["token"], p["class_or_confidence"]) for p in pieces if p.get("class_or_confidence")]


def test_base_model_highlights_the_hidden_phrase(client):
    found, found_base, spans, scores, plot, status = client.predict(
        "three dogs chased a ball in the park", PASSAGES, 1, 20, 2, -1.0, True, api_name="/search"
    )
    base_pieces = labelled(found_base)
    assert base_pieces[0][0] == PHRASE and base_pieces[0][1].startswith("#1 cos ")
    rows = spans["data"]
    base_rows = [r for r in rows if r[0] == "base"]
    assert base_rows[0][1:4] == [1, 1, PHRASE] and base_rows[0][6] == 8
    assert [r[0] for r in rows].count("SLICE") == 2  # the tiny model's spans, ranked
    per_passage = [r for r in scores["data"] if r[0] == "base"]
    assert per_passage[0][2] > per_passage[0][3]  # the hidden phrase beats the whole passage
    assert per_passage[0][2] > per_passage[1][2]
    assert "forward pass" in status and "base:" in status
    assert plot is not None


def test_every_highlight_is_the_passage_text(client):
    found, *_ = client.predict("a debate about schools", PASSAGES, 2, 6, 3, -1.0, False, api_name="/search")
    text = "".join(p["token"] for p in (found["value"] if isinstance(found, dict) else found))
    assert text == "[1] " + PASSAGES.split("\n\n")[0] + "\n\n[2] " + PASSAGES.split("\n\n")[1]
    spans = labelled(found)
    assert 1 <= len(spans) <= 3
    assert all(2 <= len(t.split()) <= 6 for t, _ in spans)


@pytest.mark.parametrize(
    ("query", "passages", "min_words", "message"),
    [
        ("   ", PASSAGES, 1, "Enter a query"),
        ("dogs", "  \n\n ", 1, "at least one passage"),
        ("dogs", "word " * 5000, 1, "At most 20,000 characters"),
        ("dogs", "\n\n".join(["a passage"] * 60), 1, "At most 50 passages"),
        ("dogs", PASSAGES, 30, "must not exceed"),
        ("x" * 600, PASSAGES, 1, "at most 500"),
    ],
)
def test_bad_input_gives_a_clear_error(client, query, passages, min_words, message):
    with pytest.raises(Exception, match=message):
        client.predict(query, passages, min_words, 20, 3, 0.0, False, api_name="/search")


def test_uploaded_text_file_fills_the_passages(client, tmp_path):
    from gradio_client import handle_file

    path = tmp_path / "passages.txt"
    path.write_text(PASSAGES, encoding="utf-8")
    assert client.predict(handle_file(str(path)), api_name="/load_file") == PASSAGES
    big = tmp_path / "big.txt"
    big.write_text("word " * 5000, encoding="utf-8")
    with pytest.raises(Exception, match="at most 20,000"):
        client.predict(handle_file(str(big)), api_name="/load_file")


def test_missing_model_falls_back_to_the_base_encoder_with_a_note(app, tmp_path):
    model, note = app.load_model(str(tmp_path / "no-such-model"))
    assert "not found" in note and "base encoder" in note
    assert model.config.model_type == "phrasezoo_slice" and model.config.embedding_dim == 384
    best = model.find_spans(PHRASE, app.split_passages(PASSAGES), top_k=1)[0]
    assert best.text == PHRASE


def test_screenshot_in_headless_chromium(server, tmp_path):
    """The page renders the highlighted example in a real browser (the PNG stays out of git; set
    PHRASEZOO_SCREENSHOTS=<dir> to keep a copy to look at)."""
    from .chromium import available, screenshot

    if not available():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path / "slice-span-search.png"
    assert screenshot(server, path, "document.body.innerText.includes('forward pass(es) in')", timeout=180)
    assert path.stat().st_size > 20_000
    if os.environ.get("PHRASEZOO_SCREENSHOTS"):
        os.makedirs(os.environ["PHRASEZOO_SCREENSHOTS"], exist_ok=True)
        shutil.copy(path, os.environ["PHRASEZOO_SCREENSHOTS"])
