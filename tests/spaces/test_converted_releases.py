"""The Spaces serve any zoo repo id, the authors' releases converted by ``phrasezoo convert`` included.

The stand-ins of the releases (``tests/methods/<name>/release_standins.py``, the layouts of ``Lihuchen/pearl_small``,
``whaleloops/phrase-bert`` and ``JiachengLi/uctopic-base``) are converted as a user converts them, and a local Hub
serves the conversions over HTTP under the repo ids they would be pushed to, with a PNTM fitted on the converted
Phrase-BERT beside it. Each Space that serves such a model loads it by its repo id, as its ``PHRASEZOO_MODEL``
variable names it, and answers a request through gradio_client. The PEARL release has no phrase-type head: the
PEARL Space shows the type column as unavailable, with a note, instead of failing on ``predict_type``'s
``ValueError``. (SLICE and the codebook paper published no weights: their Spaces have nothing to convert.)
"""

from __future__ import annotations

import pytest
from gradio_client import Client

from phrasezoo.hub.convert import convert_release
from phrasezoo.methods.phrase_bert.pntm import PNTM
from tests.hub.release_layouts import standin_modules, write_files

from .helpers import hub_serving, load_app, serve

#: the releases the Spaces serve: (method, release repo id); each is served under its stand-ins' PUSHED_AS id
RELEASES = [("pearl", "Lihuchen/pearl_small"), ("phrase_bert", "whaleloops/phrase-bert"),
            ("uctopic", "JiachengLi/uctopic-base")]  # fmt: skip
TERMS = ["moon", "rocket", "orbit", "guitar", "song", "band", "football", "goal", "space rocket", "rock band"]
DOCUMENTS = ["the rocket left orbit", "a song by the band", "a goal in football", "moon orbit", "guitar song"] * 4


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, str]:
    """``{method: repo id}`` of each converted release, served by a local Hub for the whole module; the PNTM fitted
    on the converted Phrase-BERT is served as ``<its repo id>-pntm``."""
    from transformers import AutoModel

    root = tmp_path_factory.mktemp("converted")
    standins, folders, ids = standin_modules(), {}, {}
    for method, release in RELEASES:
        target = standins[method].PUSHED_AS[release]
        source = write_files(root / "releases" / release, standins[method].STANDINS[release]())
        folders[target] = convert_release(method, str(source), root / "exports" / target, source_repo=release,
                                          repo_id=target)  # fmt: skip
        ids[method] = target
    encoder = AutoModel.from_pretrained(folders[ids["phrase_bert"]], trust_remote_code=True).eval()
    PNTM(encoder=encoder, n_topics=4, epochs=2, progress=False).fit(DOCUMENTS, TERMS).save(root / "pntm")
    folders[f"{ids['phrase_bert']}-pntm"] = root / "pntm"
    with hub_serving(folders, root / "hub-cache"):
        yield ids


def page(url: str) -> str:
    import json
    import urllib.request

    with urllib.request.urlopen(url + "config", timeout=30) as response:
        return json.dumps([c.get("props", {}).get("value") for c in json.load(response)["components"]])


def test_the_pearl_space_serves_a_converted_pearl_with_the_types_unavailable(repos):
    app = load_app("pearl-demo")
    model, note = app.load_model(repos["pearl"])
    assert model is not None and note == f"PEARL model `{repos['pearl']}`"
    with serve(app.build_demo(model, note)) as url:
        client = Client(url, verbose=False)
        ranked = client.predict(app.EXAMPLE_QUERY, app.EXAMPLE_CANDIDATES, api_name="/rank")["data"]
        matched = client.predict(app.EXAMPLE_QUERY, app.EXAMPLE_CANDIDATES, api_name="/match_rank")["data"]
        joined, _ = client.predict("apple pie\nbanana bread", "banana bread", 0.9, api_name="/join_tables")
        text = page(url)
        endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert len(ranked) == 5 and {row[3] for row in ranked} == {app.UNAVAILABLE}
    assert sorted(row[1] for row in matched) == sorted(app.EXAMPLE_CANDIDATES.splitlines())
    assert joined["data"][0][:2] == ["banana bread", "banana bread"]
    assert "has no phrase-type head" in text and "/phrase_types" not in endpoints  # the note, not a failing tool


def test_compare_models_compares_the_converted_releases(repos):
    app = load_app("compare-models")
    models, notes = app.load_models(list(repos.values()), app.default_baseline())
    assert notes == [] and len(models) == len(repos) + 1
    assert {name.split(" (")[0] for name in models} >= set(repos.values())
    with serve(app.build_demo(models, notes)) as url:
        _, _, pairs = Client(url, verbose=False).predict("The New York Times\nNYTimes\nbanana", api_name="/compare")
    assert len(pairs["data"]) == len(models) * 9


def test_pntm_explorer_serves_a_converted_phrase_bert_and_its_topic_model(repos):
    app = load_app("pntm-explorer")
    encoder, topic_model, note = app.load_model(repos["phrase_bert"], f"{repos['phrase_bert']}-pntm")
    assert topic_model is not None and note.startswith(f"encoder `{repos['phrase_bert']}`")
    with serve(app.build_demo(encoder, topic_model, note)) as url:
        client = Client(url, verbose=False)
        topics = client.predict("words and phrases", 3, api_name="/topics")["data"]
        explained = client.predict("a rocket in orbit", 3, api_name="/explain")["data"]
    assert [row[0] for row in topics] == [0, 1, 2, 3] and len(explained) == 3


def test_uctopic_topics_mines_with_a_converted_uctopic(repos):
    app = load_app("uctopic-topics")
    model, note = app.load_model(repos["uctopic"])
    assert note == f"UCTopic model `{repos['uctopic']}`"  # the LUKE release itself, no fallback
    with serve(app.build_demo(model, note)) as url:
        topics, mentions, _, status = Client(url, verbose=False).predict(app.EXAMPLE, 2, 1, api_name="/mine")
    assert len(topics["data"]) == 2 and sum(row[1] for row in topics["data"]) == len(mentions["data"])
    assert f"UCTopic model `{repos['uctopic']}`" in status


def test_the_releases_checked_here_cover_every_method_that_publishes_one():
    """A method that gets a published release later gets its Space checked here too (SLICE and the codebook paper
    published none)."""
    from phrasezoo.zoo.registry import get_method, list_methods

    assert {m for m in list_methods() if get_method(m).releases} == {m for m, _ in RELEASES}
