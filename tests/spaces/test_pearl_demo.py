"""The PEARL Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import pytest

from phrasezoo.zoo.registry import get_method

from .helpers import load_app, save_tiny, serve

tiny_model = get_method("pearl").tiny_model


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = load_app("pearl-demo")
    folder = save_tiny(tiny_model(), tmp_path_factory.mktemp("pearl-space-model"))
    with serve(app.build_demo(*app.load_model(folder))) as url:  # the AutoModel + trust_remote_code path users take
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


def test_join_tables_uses_the_default_matcher_and_shows_its_threshold(client):
    rows, note = client.predict("apple pie\nbanana bread\n2012 Summer Olympics",
                                "banana bread\napple pie\n2012 Summer Olympics\nzzqx", 0.9, api_name="/join_tables")  # fmt: skip
    data = rows["data"]
    assert [row[0] for row in data] == ["banana bread", "apple pie", "2012 Summer Olympics", "zzqx"]
    assert [row[1] for row in data[:3]] == ["banana bread", "apple pie", "2012 Summer Olympics"]  # exact names
    assert data[3][1] in ("(no match)", "apple pie", "banana bread", "2012 Summer Olympics")
    assert all(0.0 <= row[2] <= 1.0 for row in data if row[2] is not None)
    assert "Threshold" in note and "precision of 0.90" in note


def test_join_tables_threshold_rises_with_the_target_precision(client):
    thresholds = []
    for target in (0.8, 0.95):
        _, note = client.predict("apple pie", "apple pies", target, api_name="/join_tables")
        thresholds.append(float(note.split("**Threshold ")[1].split("**")[0]))
    assert thresholds[0] <= thresholds[1]


def test_phrase_types_lists_three_types(client):
    result = client.predict("The New York Times", api_name="/phrase_types")
    assert result["data"][0][0] == "The New York Times"
    assert result["data"][0][1].count("(") == 3


def test_empty_input_gives_a_clear_error(client):
    with pytest.raises(Exception, match="at least one"):
        client.predict("New York", "   ", api_name="/rank")
