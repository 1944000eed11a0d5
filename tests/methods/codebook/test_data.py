"""Codebook training data: tag pattern, neighbour targets, window targets, held-out documents, benchmark guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from phrasezoo.methods.codebook import data as cb

CORPUS = [
    "The old harbour was busy. Fishing boats unloaded fresh cod every morning. Local markets sold the fish quickly.",
    "A man is slicing a tomato. The kitchen smelled of basil and garlic. Dinner was served at eight.",
    "Heavy rain flooded the narrow valley road. Rescue teams reached the stranded drivers by boat. "
    "The storm moved east overnight.",
    "Solar panels convert sunlight into electricity. Modern solar cells reach high efficiency. "
    "Cheap electricity helps rural villages.",
] * 3  # repeated so that words reach the vocabulary threshold
GUARDED = ("stsb_context", "turney", "bird")


@pytest.fixture()
def corpus_file(tmp_path: Path) -> str:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf8")
    return str(path)


@pytest.fixture()
def bench_dir(tmp_path: Path) -> Path:
    """A benchmarks folder laid out like ../shared/benchmarks with one item per guarded benchmark."""
    root = tmp_path / "bench"
    (root / "stsb_context").mkdir(parents=True)
    (root / "stsb_context" / "sts-test-sentences-clean.tsv").write_text(
        "\tline\tparaphrase\tpassage\tgoldsim\n1\tA man is slicing a tomato.\tA man cuts a tomato.\tx\t4.0\n",
        encoding="cp1252",
    )
    (root / "turney").mkdir()
    (root / "turney" / "turney.txt").write_text("solar panels | x | solar | panels | a | b | c | d\n", encoding="utf8")
    (root / "bird").mkdir()
    (root / "bird" / "bird.tsv").write_text(
        "pair\tterm1\tterm2\tterm2: unigram or bigram\tsource\trelation\trelatedness score\tpos\n"
        "(p, q)\tnarrow valley road\tstorm\tunigram\ts\tNone\t0.5\tn-n\n",
        encoding="utf8",
    )
    return root


def test_noun_phrase_pattern_is_maximal_and_leftmost():
    tags = ["DT", "JJ", "NN", "NNS", "VBZ", "VBG", "NNP", "IN", "JJ", "RB"]
    assert cb.noun_phrases(tags) == [(1, 4), (5, 7)]  # JJ NN NNS; VBG NNP; a lone JJ is no NP
    assert cb.noun_phrases(["JJ", "JJ", "VBG", "VBG", "NN"]) == [(0, 5)]
    assert cb.noun_phrases(["VBG", "JJ", "NN"]) == [(1, 3)]  # VBG may not precede JJ


def test_word_tokens_match_whitespace_pretokenizer():
    from tokenizers import normalizers, pre_tokenizers

    text = "Don't stop: the U.S. ﬁnancial economy grew 3.5% in 2019!"
    normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    expected = [w for w, _ in pre_tokenizers.Whitespace().pre_tokenize_str(normalizer.normalize_str(text))]
    assert cb.word_tokens(text) == expected


def test_sentence_and_phrase_examples(corpus_file, bench_dir):
    sentences = cb.build_codebook_data("sentence", corpus=corpus_file, benchmarks_dir=str(bench_dir), guard_benchmarks=GUARDED, cache=False,
                                       progress=False, valid_percent=0.0)  # fmt: skip
    rows = sentences.examples[:]
    vocab, stops = set(sentences.vocabulary), cb.stop_words()
    assert sentences.vocabulary and all(c >= 2 for c in sentences.counts.values())
    by_text = dict(zip(rows["text"], rows["targets"]))
    # neighbours of "Fishing boats unloaded ..." are the previous and next sentence of the same document
    targets = set(by_text["Fishing boats unloaded fresh cod every morning."])
    assert {"harbour", "busy", "markets", "sold", "fish"} <= targets
    assert not targets & stops and targets <= vocab
    assert "morning" not in targets  # own words are not targets
    # first sentence of a document: only the next sentence, never the previous document's last sentence
    assert "electricity" not in set(by_text["Heavy rain flooded the narrow valley road."])
    # STS-B sentence guarded
    assert "A man is slicing a tomato." not in by_text
    assert sentences.stats["dropped: benchmark item: stsb_context"] == 3

    phrases = cb.build_codebook_data("phrase", corpus=corpus_file, benchmarks_dir=str(bench_dir), guard_benchmarks=GUARDED, cache=False,
                                     progress=False, valid_percent=0.0)  # fmt: skip
    prow = phrases.examples[:]
    texts = set(prow["text"])
    assert "fishing boats" in texts and "fresh cod" in texts
    assert "solar panels" not in texts  # Turney bigram guarded
    assert "panels solar" not in texts  # and its reversal (a Turney(10) candidate)
    assert "narrow valley road" not in texts  # BiRD term guarded
    i = prow["text"].index("fresh cod")
    assert set(prow["targets"][i]) == {"fishing", "boats", "unloaded", "morning"}  # +-5 words, stop words removed


def test_long_phrases_keep_their_last_words(tmp_path, bench_dir):
    path = tmp_path / "c.txt"
    path.write_text("Big old red wooden fishing boat engine covers arrived today.\n" * 3, encoding="utf8")
    built = cb.build_codebook_data("phrase", corpus=str(path), benchmarks_dir=str(bench_dir), guard_benchmarks=GUARDED, cache=False,
                                   progress=False, valid_percent=0.0)  # fmt: skip
    phrases = set(built.examples["text"][:])
    assert all(len(p.split()) <= 5 for p in phrases)
    assert "wooden fishing boat engine covers" in phrases


def test_held_out_split_is_by_document_and_deterministic(corpus_file, bench_dir):
    kwargs = dict(
        corpus=corpus_file, benchmarks_dir=str(bench_dir), guard_benchmarks=GUARDED, cache=False, progress=False
    )
    tagged = cb.tag_corpus(corpus_file, valid_percent=50.0, cache=False, progress=False)
    split_of: dict[int, set[str]] = {}
    for doc, split in zip(tagged["doc_id"][:], tagged["split"][:]):
        split_of.setdefault(doc, set()).add(split)
    assert all(len(s) == 1 for s in split_of.values())  # a document is never split across train and valid
    assert {next(iter(s)) for s in split_of.values()} == {"train", "valid"}
    again = cb.tag_corpus(corpus_file, valid_percent=50.0, cache=False, progress=False)
    assert again["split"][:] == tagged["split"][:]
    # min_count=1: which copies of the repeated documents land in training depends on the corpus path (the split
    # hashes it), so with the default threshold of 2 some tmp paths leave no training word twice.
    built = cb.build_codebook_data("sentence", valid_percent=50.0, min_count=1, **kwargs)
    valid_docs = {d for d, s in split_of.items() if "valid" in s}
    rows = built.examples[:]
    assert {d for d, s in zip(rows["doc_id"], rows["split"]) if s == "valid"} <= valid_docs


def test_summarisation_articles_never_reach_training():
    articles = cb.summarization_articles()
    assert len(articles) == 83  # spec: lead >= 60 words and body >= 400 words
    kept = {text for _source, text in cb.iter_documents("embedded-wiki")}
    assert not kept & {a.text for a in articles}
    assert all(a.lead and a.body.startswith("=") for a in articles)


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="kind must be"):
        cb.build_codebook_data("paragraph")


def test_glove_text_and_zip_are_read_filtered(tmp_path):
    import zipfile

    import numpy as np

    from phrasezoo.methods.codebook.vectors import lookup_vectors, read_glove_text

    lines = ["the 0.1 0.2 0.3", ". . . 1.0 2.0 3.0", "Cat 0.5 0.5 0.5", "dog 1 1 1", "the 9 9 9"]  # 840B quirks
    text = tmp_path / "glove.tiny.3d.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf8")
    archive = tmp_path / "glove.tiny.3d.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(text, arcname="glove.tiny.3d.txt")
    for source in (text, archive):
        found = read_glove_text(source, ["the", ". . .", "dog", "missing"])
        assert sorted(found) == [". . .", "dog", "the"]
        np.testing.assert_allclose(found["the"], [0.1, 0.2, 0.3])  # first occurrence wins
        np.testing.assert_allclose(found[". . ."], [1.0, 2.0, 3.0])
    assert set(lookup_vectors(str(text), ["Cat", "cat"])) == {"Cat"}
    assert set(lookup_vectors("glove-6b-50d", ["cat", "qqqzzzxx"])) == {"cat"}
    with pytest.raises(FileNotFoundError, match="nlp.stanford.edu"):
        read_glove_text(tmp_path / "nope.txt")


def test_hub_corpus_layout_is_read_offline(tmp_path, monkeypatch):
    """The paper-scale recipes read Wikipedia with datasets (hub:wikimedia/wikipedia:20231101.en); a local folder
    laid out like that Hub repository (README configs + <config>/train-*.parquet) goes through the same loader."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    root = tmp_path / "wikipedia"
    (root / "20231101.en").mkdir(parents=True)
    texts = [CORPUS[0], CORPUS[3]]
    pq.write_table(
        pa.table({"id": ["1", "2"], "url": ["u1", "u2"], "title": ["Harbour", "Solar"], "text": texts}),
        root / "20231101.en" / "train-00000-of-00001.parquet",
    )
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: 20231101.en\n  data_files:\n  - split: train\n    path: 20231101.en/train-*\n---\n"
    )
    docs = list(cb.iter_documents(f"hub:{root}:20231101.en"))
    assert [text for _, text in docs] == texts
    tagged = cb.tag_corpus(f"hub:{root}:20231101.en", valid_percent=0.0, cache=False, progress=False, n_process=1)
    assert "Fishing boats unloaded fresh cod every morning." in tagged["text"][:]


def test_extra_vocabulary_adds_frequent_words_without_changing_examples(corpus_file, bench_dir):
    kwargs = dict(corpus=corpus_file, benchmarks_dir=str(bench_dir), guard_benchmarks=GUARDED, cache=False,
                  progress=False, valid_percent=0.0)  # fmt: skip
    plain = cb.build_codebook_data("phrase", **kwargs)
    extended = cb.build_codebook_data("phrase", extra_vocabulary=2000, **kwargs)
    n = len(plain.vocabulary)
    assert extended.vocabulary[:n] == plain.vocabulary  # corpus words keep their ids
    extra = extended.vocabulary[n:]
    assert "government" in extra and "harbour" not in extra  # a frequent GloVe word the corpus lacks; no duplicate
    assert len(set(extended.vocabulary)) == len(extended.vocabulary)
    assert all(cb.word_tokens(w) == [w] for w in extra)  # only words the tokenizer can produce ("'s" is split)
    assert "'s" not in extra
    assert extended.examples[:] == plain.examples[:]  # inputs and targets of training are unchanged
    assert "2,000 most frequent" in extended.stats["vocabulary rule"]


def test_most_frequent_words_follow_the_table_order(tmp_path):
    from phrasezoo.methods.codebook.vectors import most_frequent_words

    text = tmp_path / "glove.tiny.3d.txt"
    text.write_text("the 0 0 1\ncat 0 1 0\nthe 1 1 1\ndog 1 0 0\n", encoding="utf8")
    assert most_frequent_words(str(text), 2) == ["the", "cat"]
    assert most_frequent_words(str(text), 10) == ["the", "cat", "dog"]  # duplicates once, file shorter than n
    assert most_frequent_words("glove-6b-50d", 4) == ["the", ",", ".", "of"]
    assert most_frequent_words("glove-6b-50d", 0) == []
