"""The PNTM explorer Space, tested against a running Gradio server through gradio_client."""

from __future__ import annotations

import pytest

from phrasezoo.methods.phrase_bert.pntm import PNTM
from phrasezoo.zoo.registry import get_method

from .helpers import load_app, save_tiny, serve

tiny_model = get_method("phrase_bert").tiny_model

TERMS = ["moon", "rocket", "orbit", "guitar", "song", "band", "football", "goal", "space rocket", "rock band"]
DOCUMENTS = ["the rocket left orbit", "a song by the band", "a goal in football", "moon orbit", "guitar song"] * 4


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = load_app("pntm-explorer")
    encoder_folder = save_tiny(tiny_model(), tmp_path_factory.mktemp("pntm-space-encoder"))
    topic_folder = tmp_path_factory.mktemp("pntm-space-topics")
    PNTM(encoder=tiny_model(), n_topics=4, epochs=3, progress=False).fit(DOCUMENTS, TERMS).save(topic_folder)
    encoder, topic_model, note = app.load_model(encoder_folder, str(topic_folder))  # the paths users take
    assert topic_model is not None and note.startswith("encoder")
    with serve(app.build_demo(encoder, topic_model, note)) as url:
        yield url


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
