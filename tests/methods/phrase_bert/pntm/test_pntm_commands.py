"""The comparison behind ``phrasezoo topics pntm`` on the planted corpus, its CLI wiring and the plot."""

from __future__ import annotations

import argparse
import json
import math

from phrasezoo.applications.commands import register
from phrasezoo.methods.phrase_bert.pntm.commands import compare_topic_models, format_table, run_pntm_command
from phrasezoo.methods.phrase_bert.pntm.corpus import TopicCorpus
from phrasezoo.methods.phrase_bert.pntm.visualize import visualize_topics

PNG_MAGIC = b"\x89PNG"


def test_compare_pntm_and_lda(toy_encoder, toy_corpus, toy_vocabulary, tmp_path):
    documents, _ = toy_corpus
    corpus = TopicCorpus("toy", documents, documents, toy_vocabulary)
    doc = compare_topic_models(
        [toy_encoder],
        k=3,
        epochs=15,
        lda_iter=20,
        n_queries=5,
        n_neighbours=3,
        plot=str(tmp_path / "t.png"),
        save_dir=str(tmp_path / "models"),
        progress=False,
        topic_corpus=corpus,
    )
    names = [row["model"] for row in doc["rows"]]
    assert names == ["PNTM (ToyEncoder)", "LDA (same vocabulary)"]
    for row in doc["rows"]:
        assert -1 <= row["npmi"] <= 1 and 0 < row["topic_diversity"] <= 1 and not math.isnan(row["nn_levenshtein"])
        assert row["topics_used"] >= 2
    assert doc["corpus"]["documents"] == len(documents) and len(doc["topics"]["LDA (same vocabulary)"]) == 3
    assert (tmp_path / "t.png").read_bytes()[:4] == PNG_MAGIC
    assert (tmp_path / "t-lda.png").read_bytes()[:4] == PNG_MAGIC
    assert (tmp_path / "models" / "ToyEncoder" / "pntm.json").exists()
    table = format_table(doc)
    assert "| PNTM (ToyEncoder) |" in table and "NPMI@10" in table
    json.dumps(doc)  # the results document is JSON-serialisable


def test_command_registers_and_writes_results(monkeypatch, tmp_path, toy_corpus):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["topics", "pntm", "--model", "a", "--model", "b", "--k", "7", "--output", "x.json"])
    assert args.model == ["a", "b"] and args.k == 7 and args.func is run_pntm_command
    fake = {
        "settings": {"corpus": "toy", "k": 7},
        "corpus": {"documents": 1, "words": 1, "phrases": 0},
        "rows": [],
        "topics": {"PNTM (a)": [["x", "y"]]},
    }
    monkeypatch.setattr("phrasezoo.methods.phrase_bert.pntm.commands.compare_topic_models", lambda **kwargs: fake)
    args.output = str(tmp_path / "out.json")
    assert run_pntm_command(args) == 0
    assert json.loads((tmp_path / "out.json").read_text()) == fake


def test_visualize_topics_accepts_lists(tmp_path):
    topics = [[("football", 0.9), ("football match", 0.8)], [("moon", 0.7), ("orbit", 0.6)], [("song", 0.5)]]
    path = visualize_topics(topics, tmp_path / "plot.png", n_columns=2, title="toy", topic_ids=[0, 2])
    assert path.read_bytes()[:4] == PNG_MAGIC and path.stat().st_size > 2000
