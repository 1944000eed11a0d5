"""The PEARL Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path

import pytest

from phrasezoo.methods.pearl import tiny_model

APP = Path(__file__).resolve().parents[2] / "spaces" / "pearl-demo" / "app.py"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    folder = tmp_path_factory.mktemp("pearl-space-model")
    model = tiny_model()
    model.save_pretrained(folder)
    model.tokenizer.save_pretrained(folder)
    spec = importlib.util.spec_from_file_location("pearl_demo_app", APP)
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    demo = app.build_demo(app.load_model(str(folder)))  # the same AutoModel + trust_remote_code path users take
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def client(server):
    from gradio_client import Client

    return Client(server, verbose=False)


def test_rank_orders_candidates_by_cosine(client):
    result = client.predict("New York Times", "New York Times\nbanana bread\nNYTimes", api_name="/rank")
    rows = result["data"]
    assert [row[0] for row in rows] == [1, 2, 3]
    assert rows[0][1] == "New York Times" and rows[0][2] == pytest.approx(1.0, abs=1e-4)
    scores = [row[2] for row in rows]
    assert scores == sorted(scores, reverse=True)


def test_fuzzy_join_matches_every_right_value(client):
    result = client.predict("apple pie\nbanana bread", "banana bread\napple pie", 0.0, api_name="/fuzzy_join")
    assert [row[:2] for row in result["data"]] == [["banana bread", "banana bread"], ["apple pie", "apple pie"]]


def test_phrase_types_lists_three_types(client):
    result = client.predict("The New York Times", api_name="/phrase_types")
    assert result["data"][0][0] == "The New York Times"
    assert result["data"][0][1].count("(") == 3


def test_empty_input_gives_a_clear_error(client):
    with pytest.raises(Exception, match="at least one"):
        client.predict("New York", "   ", api_name="/rank")
