"""UCTopic's pretraining data: hyperlink extraction, determiner stripping, pair mining on a few sentences."""

from __future__ import annotations

import bz2

import pytest

from phrasezoo.data import parse_texts
from phrasezoo.methods.uctopic.data import (
    _resolve_placeholders,
    build_uctopic_dataset,
    corpus_mentions,
    link_target,
    resolve_wiki_dump,
    select_instances,
    strip_leading_determiner,
    uctopic_params,
    wiki_link_sentences,
    wikitext_with_links,
)
from phrasezoo.methods.uctopic.task import positive_candidates

pytestmark = pytest.mark.usefixtures("fresh_cache")  # every test starts from an empty cache


def test_strip_leading_determiner():
    assert strip_leading_determiner("the United States") == len("the ")
    assert strip_leading_determiner("Their  old car") == len("Their  ")
    assert strip_leading_determiner("United States") == 0
    assert strip_leading_determiner("the") == 0  # never strips the whole phrase
    assert strip_leading_determiner("theory of mind") == 0


def test_link_targets_are_canonical_titles():
    assert link_target("political_philosophy") == "Political philosophy"
    assert link_target("  Plato ") == "Plato"
    assert link_target("File:Map.png") is None and link_target("Category:Greek") is None and link_target("") is None


def test_wikitext_links_become_anchor_spans():
    wikitext = (
        "'''Anarchism''' is a [[political philosophy]] that rejects the [[State (polity)|state]]. "
        "Many [[anarchist]]s read [[Pierre-Joseph Proudhon|Proudhon]].{{cite book|title=[[Ignored]]}} "
        "See [[File:Flag.png|thumb|a flag]]."
    )
    text, links = wikitext_with_links(wikitext)
    plain, spans = _resolve_placeholders(" ".join(text.split()), links)
    found = {plain[s:e]: target for s, e, target in spans}
    assert found == {
        "political philosophy": "Political philosophy",
        "state": "State (polity)",
        "anarchists": "Anarchist",  # the link trail "s" belongs to the anchor, as MediaWiki renders it
        "Proudhon": "Pierre-Joseph Proudhon",
    }
    assert "Anarchism is a political philosophy" in plain and "'''" not in plain


def test_wiki_dump_sentences_hold_their_links(tmp_path):
    body = " ".join(["Plato taught at the [[Platonic Academy|Academy]] in [[Athens]] for many years."] * 3)
    page = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><page><title>Plato</title><ns>0</ns><id>1</id>'
        "<revision><text>"
        + body.replace("&", "&amp;")
        + " He wrote dialogues about justice and the ideal state, which are still read today by students.</text>"
        "</revision></page></mediawiki>"
    )
    dump = tmp_path / "dump.xml.bz2"
    dump.write_bytes(bz2.compress(page.encode()))
    sentences = list(wiki_link_sentences(dump, progress=False))
    assert len(sentences) == 3
    sentence, spans = sentences[0]
    assert [(sentence[s:e], t) for s, e, t in spans] == [("Academy", "Platonic Academy"), ("Athens", "Athens")]
    assert resolve_wiki_dump(str(dump)) == dump
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_wiki_dump(str(tmp_path / "missing.xml.bz2"))


def test_embedded_dump_gives_hyperlink_mentions():
    sentence, spans = next(iter(wiki_link_sentences("embedded", max_documents=1, progress=False)))
    assert spans and all(sentence[s:e].strip() == sentence[s:e] and sentence[s:e] for s, e, _ in spans)


def test_entity_and_noun_phrase_mentions_of_parsed_sentences():
    paragraphs = [
        (0, 0, "Barack Obama visited the United States Senate. The senators met Barack Obama in Washington."),
        (1, 0, "Their old senators discussed the budget."),
    ]
    sentences = parse_texts(paragraphs, progress=False)
    mentions = corpus_mentions(sentences, sources=("entities", "noun_phrases"))
    by_text = {(m[0][m[1] : m[2]], m[3]) for m in mentions}
    assert ("Barack Obama", "entity:Barack Obama") in by_text
    assert ("senators", "np:senator") in by_text  # "The senators": determiner stripped from span and key
    assert ("old senators", "np:old senator") in by_text  # "Their old senators"
    assert not any(text.lower().startswith(("the ", "their ")) for text, key in by_text if key.startswith("np:"))
    # an NP span equal to a kept entity is left to the entity
    assert not any(key == "np:barack obama" for _, key in by_text)
    only_entities = corpus_mentions(sentences, sources=("entities",))
    assert {m[4] for m in only_entities} == {"entities"}


def _mention(sentence, phrase, key, source="entities"):
    start = sentence.index(phrase)
    return sentence, start, start + len(phrase), key, source


def test_pairs_need_two_different_sentences_and_are_capped():
    mentions = [
        _mention("Obama met Merkel.", "Obama", "entity:Obama"),
        _mention("Obama spoke.", "Obama", "entity:Obama"),
        _mention("Obama and Obama.", "Obama", "entity:Obama"),
        _mention("Merkel met Obama.", "Merkel", "entity:Merkel"),  # only one sentence: dropped
        _mention("Berlin is big. Berlin!", "Berlin", "entity:Berlin"),
    ]
    mentions.append(("Berlin is big. Berlin!", 15, 21, "entity:Berlin", "entities"))  # same sentence twice: dropped
    rows = select_instances(mentions, min_sentences=2, max_instances_per_phrase=None)
    assert {r[3] for r in rows} == {"entity:Obama"}
    assert len(rows) == 3
    capped = select_instances(mentions, min_sentences=2, max_instances_per_phrase=2)
    assert len(capped) == 2 and len({r[0] for r in capped}) == 2  # the cap keeps different sentences first
    keys = [r[3] for r in rows]
    sentence_ids = [r[5] for r in rows]
    candidates = positive_candidates(keys, sentence_ids)
    for i, options in enumerate(candidates):
        assert options and all(sentence_ids[j] != sentence_ids[i] for j in options)


def test_spans_without_a_letter_or_digit_are_not_mentions():
    """A span of invisible characters (U+2060 WORD JOINER occurs in the wiki leads) covers no token: it would
    stop training in the middle (prepare_mentions raises), so the builder drops it."""
    joiner = "\u2060\u2060"
    mentions = [
        ("Text with " + joiner + " inside.", 10, 12, "np:" + joiner, "noun_phrases"),
        ("Other " + joiner + " text.", 6, 8, "np:" + joiner, "noun_phrases"),
        _mention("Obama met Merkel.", "Obama", "entity:Obama"),
        _mention("Obama spoke.", "Obama", "entity:Obama"),
    ]
    rows = select_instances(mentions, min_sentences=2, max_instances_per_phrase=None)
    assert {r[3] for r in rows} == {"entity:Obama"}


def test_dataset_parameters_are_validated():
    with pytest.raises(ValueError, match="Unknown UCTopic phrase sources"):
        uctopic_params(sources=("links",))
    with pytest.raises(ValueError, match="needs wiki_dump"):
        uctopic_params(corpus="some.txt", sources=("hyperlinks",))
    assert uctopic_params(sources=("hyperlinks",))["wiki_dump"] == "embedded"


def test_build_dataset_from_the_embedded_dump_hyperlinks():
    dataset = build_uctopic_dataset(sources=("hyperlinks",), max_documents=5, progress=False)
    assert set(dataset.column_names) == {"sentence", "start", "end", "key", "source", "sentence_id"}
    assert len(dataset) > 0 and set(dataset["source"]) == {"hyperlinks"}
    for row in dataset.select(range(min(20, len(dataset)))):
        assert row["key"].startswith("link:") and row["sentence"][row["start"] : row["end"]].strip()
