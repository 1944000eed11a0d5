"""Phrase mining: mention rules on hand-written sentences, the phrase table, contexts and the parse cache."""

from __future__ import annotations

import time

import pytest

from phrasezoo.data.corpus.phrases import (
    DEFAULT_TYPE_LABELS,
    TYPE_ID,
    parse_corpus,
    parse_texts,
    phrase_contexts,
    phrase_table,
)
from phrasezoo.data.corpus.spans import MiningOptions, extract_mentions
from phrasezoo.data.corpus.text import chunk_text, clean_line, split_paragraphs


def mentions_of(nlp, text: str, options: MiningOptions | None = None) -> dict[str, tuple[str, str]]:
    doc = nlp(text)
    found = {}
    for sent in doc.sents:
        for m in extract_mentions(sent, options):
            assert sent.text[m["start"] : m["end"]] == m["text"]
            found[m["phrase"]] = (m["phrase_class"], m["entity_type"])
    return found


def test_classes_and_entity_types(nlp):
    found = mentions_of(
        nlp, "The New York Times reported that the United States has often been divided into very different regions."
    )
    assert found["the New York Times"] == ("NP", "ORG")  # sentence-initial "The" is lower-cased in the key
    assert found["the United States"] == ("NP", "GPE")
    assert found["into very different regions"] == ("PP", "OTHER")
    assert found["very different"] == ("ADJP", "OTHER")
    assert found["divided into very different regions"] == ("VP", "OTHER")


def test_vp_adjp_advp_and_dates(nlp):
    found = mentions_of(nlp, "The task was very difficult, but she finished it quickly and gave up smoking in 1999.")
    assert found["very difficult"] == ("ADJP", "OTHER")
    assert found["quickly"] == ("ADVP", "OTHER")
    assert found["gave up smoking in 1999"] == ("VP", "OTHER")
    assert found["in 1999"] == ("PP", "DATE")  # the preposition does not count against the entity
    assert found["1999"] == ("NP", "DATE")
    assert "she" not in found and "it" not in found  # pronouns are dropped


def test_entity_with_preposition_and_determiner(nlp):
    found = mentions_of(nlp, "In April 1834, Johnston took up farming in Texas.")
    assert found["in April 1834"] == ("PP", "DATE")
    assert found["in Texas"] == ("PP", "GPE")
    assert found["Johnston"] == ("NP", "PERSON")


def test_length_bound_and_hyphenated_words(nlp):
    found = mentions_of(nlp, "The non-violent protest against the government ended peacefully.")
    assert "non" not in found  # a piece of "non-violent" is not a phrase
    short = mentions_of(nlp, "He lived in the big old house of the family.", MiningOptions(max_tokens=2))
    assert short and all(len(p.split()) <= 2 for p in short)


def test_text_cleaning():
    assert clean_line("==History==") == ""
    assert clean_line("* Aberdeen, Grey County, Ontario") == "Aberdeen, Grey County, Ontario"
    assert clean_line("File:Kabylie.jpg|The Djurdjura Range in snow") == "The Djurdjura Range in snow"
    doc = "==Title==\n\nShort.\nThis is a real sentence of prose.\n| table | row |\n"
    assert list(split_paragraphs(doc)) == ["This is a real sentence of prose."]
    pieces = chunk_text("One two three. " * 50, max_chars=100)
    assert all(len(p) <= 100 for p in pieces) and len(pieces) > 1


PARAGRAPHS = [
    (0, 0, "The New York Times reported on the war. The New York Times is a newspaper."),
    (0, 1, "Many people read The New York Times in New York."),
    (1, 0, "She lived in New York for ten years. The city was very expensive."),
]


def test_phrase_table_frequency_filter_and_types():
    sentences = parse_texts(PARAGRAPHS, progress=False)
    assert sentences.column_names == ["doc_id", "para_id", "sent_id", "sentence", "mentions", "entities"]
    assert list(sentences["sent_id"]) == [0, 1, 2, 0, 1]  # numbered per document across paragraphs
    table = phrase_table(sentences, min_freq=2)
    rows = {r["phrase"]: r for r in table}
    # written "The New York Times" mid-sentence, so the sentence-initial mentions keep the capital too
    assert rows["The New York Times"]["count"] == 3
    assert rows["The New York Times"]["type_label"] == "NP-ORG"
    assert rows["The New York Times"]["type_id"] == DEFAULT_TYPE_LABELS.index("NP-ORG") == TYPE_ID["NP-ORG"]
    assert rows["in New York"]["type_label"] == "PP-GPE"
    assert "the city" in {r["phrase"] for r in phrase_table(sentences, min_freq=1)}  # "The city" opens a sentence
    assert all(r["count"] >= 2 for r in table)
    counts = list(table["count"])
    assert counts == sorted(counts, reverse=True)
    everything = phrase_table(sentences, min_freq=1)
    assert len(everything) > len(table)
    assert len(phrase_table(sentences, min_freq=1, max_phrases=3)) == 3


def test_phrase_contexts():
    sentences = parse_texts(PARAGRAPHS, progress=False)
    contexts = phrase_contexts(sentences, ["The New York Times", "unseen phrase"], max_contexts=2, seed=1)
    first = contexts[0]["contexts"]
    assert len(first) == 2
    for ctx in first:
        assert ctx["sentence"][ctx["start"] : ctx["end"]].lower() == "the new york times"
        assert sentences[ctx["row"]]["sentence"] == ctx["sentence"]
    assert contexts[1]["contexts"] == []
    again = phrase_contexts(sentences, ["The New York Times"], max_contexts=2, seed=1)
    assert again[0]["contexts"] == first  # seeded per phrase


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(text for _, _, text in PARAGRAPHS) + "\n")
    return str(path)


def test_parse_corpus_cache_reuse(corpus_file, isolated_cache):
    first = parse_corpus(corpus_file, n_process=1, progress=False)
    assert len(first) == 5
    start = time.perf_counter()
    second = parse_corpus(corpus_file, n_process=1, progress=False)
    assert time.perf_counter() - start < 5.0  # served from the cache (the suite runs in two processes side by side)
    assert second.to_list() == first.to_list()
    assert len(list((isolated_cache / "datasets").glob("sentences-*"))) == 1
    parse_corpus(corpus_file, n_process=1, progress=False, options=MiningOptions(max_tokens=3))
    assert len(list((isolated_cache / "datasets").glob("sentences-*"))) == 2  # other options, other entry


def test_parallel_parse_matches_serial():
    serial = parse_texts(PARAGRAPHS, n_process=1, batch_size=1, progress=False)
    parallel = parse_texts(PARAGRAPHS, n_process=2, batch_size=1, progress=False)
    assert parallel.to_list() == serial.to_list()
