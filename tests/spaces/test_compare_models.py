"""The compare-models Space: every exported model (three tiny zoo models) plus raw MiniLM, through gradio_client."""

from __future__ import annotations

import pytest

from phrasezoo.zoo.registry import get_method

from .helpers import load_app, save_tiny, serve

METHODS = ["pearl", "phrase_bert", "uctopic"]


@pytest.fixture(scope="module")
def app():
    return load_app("compare-models")


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("outputs")
    for name in METHODS:
        save_tiny(get_method(name).tiny_model(), root / f"{name}-tiny")
    (root / "not-a-model").mkdir()  # ignored: no config.json
    return root


@pytest.fixture(scope="module")
def server(app, models_dir):
    models, notes = app.load_models(app.discover(str(models_dir), extra=[]))
    assert len(models) == len(METHODS) + 1 and notes == []
    with serve(app.build_demo(models, notes)) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def test_every_model_gets_a_similarity_matrix(client):
    phrases = ["The New York Times", "NYTimes", "banana bread"]
    plot, nearest, pairs = client.predict("\n".join(phrases), api_name="/compare")
    models = {row[0] for row in pairs["data"]}
    assert len(models) == 4 and any("MiniLM" in m for m in models)
    assert len(pairs["data"]) == 4 * len(phrases) ** 2
    for row in pairs["data"]:
        if row[1] == row[2]:
            assert row[3] == pytest.approx(1.0, abs=1e-4)
    assert [row[0] for row in nearest["data"]] == phrases
    assert len(nearest["headers"]) == 5
    assert plot is not None


def test_raw_minilm_finds_the_obvious_neighbour(client):
    _, nearest, _ = client.predict("The New York Times\nNYTimes\nbanana bread", api_name="/compare")
    column = [i for i, h in enumerate(nearest["headers"]) if "MiniLM" in h][0]
    assert nearest["data"][0][column].startswith("NYTimes")


@pytest.mark.parametrize(
    ("text", "message"),
    [("only one", "at least two"), ("\n".join(f"p{i}" for i in range(13)), "At most 12"), ("a\n" + "x" * 201, "200")],
)
def test_input_caps(client, text, message):
    with pytest.raises(Exception, match=message):
        client.predict(text, api_name="/compare")


def test_discover_skips_folders_without_an_exported_model(app, models_dir):
    found = app.discover(str(models_dir), extra=["org/extra-model"])
    assert len(found) == 4 and found[-1] == "org/extra-model"
    assert not any(f.endswith("not-a-model") for f in found)


def test_screenshot_in_headless_chromium(server, tmp_path):
    """The example's matrices and neighbour table render in a real browser (PNG kept out of git;
    PHRASEZOO_SCREENSHOTS=<dir> keeps a copy to look at)."""
    import os
    import shutil

    from .chromium import available, screenshot

    if not available():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path / "compare-models.png"
    assert screenshot(server, path, "document.body.innerText.includes('extremely hard (')", timeout=180)
    assert path.stat().st_size > 20_000
    if os.environ.get("PHRASEZOO_SCREENSHOTS"):
        os.makedirs(os.environ["PHRASEZOO_SCREENSHOTS"], exist_ok=True)
        shutil.copy(path, os.environ["PHRASEZOO_SCREENSHOTS"])
