"""The PEARL Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import pytest

from phrasezoo.registry import get_method

from .helpers import load_app, save_tiny, serve

tiny_model = get_method("pearl").tiny_model


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = load_app("pearl-demo")
    folder = save_tiny(tiny_model(), tmp_path_factory.mktemp("pearl-space-model"))
    with serve(app.build_demo(app.load_model(folder))) as url:  # the AutoModel + trust_remote_code path users take
        yield url


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
