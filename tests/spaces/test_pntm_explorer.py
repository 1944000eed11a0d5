"""The PNTM explorer Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path

import pytest

from phrasezoo.applications.pntm import PNTM
from phrasezoo.methods.phrase_bert import tiny_model

APP = Path(__file__).resolve().parents[2] / "spaces" / "pntm-explorer" / "app.py"
TERMS = ["moon", "rocket", "orbit", "guitar", "song", "band", "football", "goal", "space rocket", "rock band"]
DOCUMENTS = ["the rocket left orbit", "a song by the band", "a goal in football", "moon orbit", "guitar song"] * 4


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    folder = tmp_path_factory.mktemp("pntm-space-encoder")
    model = tiny_model()
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    spec = importlib.util.spec_from_file_location("pntm_explorer_app", APP)
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    encoder = app.load_model(str(folder))  # the AutoModel + trust_remote_code path users take
    topic_folder = tmp_path_factory.mktemp("pntm-space-topics")
    PNTM(encoder=encoder, n_topics=4, epochs=3, progress=False).fit(DOCUMENTS, TERMS).save(topic_folder)
    demo = app.build_demo(encoder, app.TopicModel(str(topic_folder)))
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def test_topics_lists_every_topic(client):
    rows = client.predict("words and phrases", 3, api_name="/topics")["data"]
    assert [row[0] for row in rows] == [0, 1, 2, 3]
    assert all(len(row[1].split(", ")) == 3 and set(row[1].split(", ")) <= set(TERMS) for row in rows)


def test_explain_returns_the_three_most_probable_topics(client):
    rows = client.predict("a rocket in orbit around the moon", 4, api_name="/explain")["data"]
    weights = [row[1] for row in rows]
    assert len(rows) == 3 and weights == sorted(weights, reverse=True) and 0 < sum(weights) <= 1.0001


def test_nearest_terms_start_with_the_term_itself(client):
    rows = client.predict("space rocket", 5, api_name="/neighbours")["data"]
    assert rows[0][0] == "space rocket" and rows[0][1] == pytest.approx(1.0, abs=1e-4)
    assert len(rows) == 5
