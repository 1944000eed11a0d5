"""SLICE training triplets: passages, targets, query paraphrases, negatives, held-out documents, MS MARCO loader."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Dataset

from phrasezoo.data.lexical.pivot import PivotPair, PivotTable
from phrasezoo.methods.slice import data as sd

SENTENCES = [
    # doc 0, paragraph 0: three sentences
    (0, 0, "The old harbour of the city was rebuilt after the great fire of 1850.", "the great fire of 1850", "NP"),
    (0, 0, "Merchants from many countries traded spices and silk along its busy quays.", "along its busy quays", "PP"),
    (0, 0, "Today the quays hold museums, cafes and a small fishing fleet that still sails.", "a small fishing fleet", "NP"),
    # doc 1
    (1, 0, "The young engineer designed a cheap water filter for remote villages in the mountains.", "a cheap water filter", "NP"),
    (1, 0, "Her filter removes most bacteria and costs less than a single meal in the capital.", "removes most bacteria", "VP"),
    # doc 2
    (2, 0, "A violent storm damaged the northern railway line and closed three stations for a week.", "the northern railway line", "NP"),
    (2, 0, "Workers repaired the tracks quickly, and trains returned to the normal timetable on Monday.", "to the normal timetable", "PP"),
]  # fmt: skip


def sentence_dataset() -> Dataset:
    rows = []
    for doc, para, sentence, mention, cls in SENTENCES:
        start = sentence.index(mention)
        rows.append({"doc_id": doc, "para_id": para, "sentence": sentence,
                     "mentions": [{"start": start, "end": start + len(mention), "text": mention, "phrase": mention,
                                   "phrase_class": cls, "entity_type": "OTHER", "lemma": mention}]})  # fmt: skip
    return Dataset.from_list(rows)


def fake_paraphraser() -> sd.QueryParaphraser:
    pairs = [PivotPair("great", "huge", 0.5, 2), PivotPair("cheap", "inexpensive", 0.6, 2),
             PivotPair("busy", "bustling", 0.4, 2), PivotPair("small", "little", 0.5, 2),
             PivotPair("storm", "tempest", 0.5, 2), PivotPair("normal", "usual", 0.5, 2),
             PivotPair("bacteria", "germs", 0.5, 2), PivotPair("railway line", "railroad", 0.5, 2),
             PivotPair("fire", "macerals", 0.9, 3)]  # fmt: skip
    return sd.QueryParaphraser(pivot=PivotTable(pairs), pivot_min_score=0.15, min_zipf=3.0)


def test_passages_respect_lengths_and_keep_target_offsets():
    passages = sd.build_passages(sentence_dataset(), "toy", seed=0, passage_words=(10, 60), target_words=(3, 10))
    assert {p.doc_id for p in passages} == {0, 1, 2}
    for p in passages:
        assert 10 <= len(p.text.split()) <= 60
        for start, end, source in p.targets:
            assert p.text[start:end] in {s[3] for s in SENTENCES} and source.startswith("mention:")
        for a, b in p.ngram_slots:
            assert p.text[a:b] in {s[2] for s in SENTENCES}


def test_paraphrases_change_content_and_skip_rare_words():
    paraphraser = fake_paraphraser()
    rng = random.Random(0)
    candidates = paraphraser.candidates("the great fire of 1850", rng)
    assert candidates and all(sd.changes_content("the great fire of 1850", c) for c in candidates)
    assert not any("macerals" in c for c in candidates)  # rare pivot word (Zipf < 3) is never used
    assert "the huge fire of 1850" in candidates
    assert "the northern railroad" in paraphraser.candidates("the northern railway line", rng)  # 2-word unit
    assert not sd.changes_content("the great fire", "great fire")  # a dropped article is not a paraphrase
    assert paraphraser.candidates("of the and", rng) == []


def test_corrupt_span_replaces_content_words_only():
    rng = random.Random(1)
    corrupted = sd.corrupt_span("the great fire of 1850,", rng, ["banana", "violin", "fire"])
    assert corrupted != "the great fire of 1850," and corrupted.startswith("the ") and corrupted.endswith("of 1850,")
    assert sd.corrupt_span("of the and", rng, ["banana"]) is None


def test_triplets_splits_kinds_and_negatives():
    passages = sd.build_passages(sentence_dataset(), "toy", seed=0, passage_words=(10, 60), target_words=(3, 10))
    rows = sd.make_triplets(passages, fake_paraphraser(), seed=0, verbatim_fraction=0.3, hard_negative_fraction=0.5,
                            valid_percent=0.0, vocabulary=["banana", "violin", "harbour"])  # fmt: skip
    assert rows
    by_text = {p.text: p for p in passages}
    for row in rows:
        positive = row["positive"]
        assert positive[row["target_start"] : row["target_end"]] == row["target"]
        assert row["split"] == "train"
        if row["query_kind"] == "verbatim":
            assert row["query"] == row["target"]
        else:
            assert sd.changes_content(row["target"], row["query"])
        if row["negative_kind"] == "other-document":
            assert by_text[row["negative"]].doc_id != row["doc_id"]
        elif row["negative_kind"] == "same-document":
            assert by_text[row["negative"]].doc_id == row["doc_id"] and row["negative"] != positive
        else:
            assert row["negative_kind"] == "corrupted-target"
            assert row["negative"].startswith(positive[: row["target_start"]])
        assert row["target"].lower() not in row["negative"].lower()


def test_validation_documents_are_held_out_whole():
    assert sd.in_validation("c", 3, 100.0, 0) and not sd.in_validation("c", 3, 0.0, 0)
    flags = [sd.in_validation("corpus", d, 5.0, 0) for d in range(4000)]
    assert 0.03 < sum(flags) / len(flags) < 0.07
    passages = sd.build_passages(sentence_dataset(), "toy", seed=0, passage_words=(10, 60))
    rows = sd.make_triplets(passages, fake_paraphraser(), seed=0, valid_percent=50.0, verbatim_fraction=1.0)
    for row in rows:
        assert row["split"] == ("valid" if sd.in_validation("toy", row["doc_id"], 50.0, 0) else "train")


def test_builder_rejects_bad_arguments():
    with pytest.raises(ValueError, match="Unknown SLICE data source"):
        sd.build_slice_data(source="web")
    with pytest.raises(ValueError, match="verbatim_fraction"):
        sd.build_slice_data(verbatim_fraction=1.5)
    with pytest.raises(ValueError, match="Unknown SLICE paraphrasers"):
        sd.make_query_paraphraser([], ["gpt"], None, False, 0.1, 3.0, None, False, False)


# ----------------------------------------------------------------------------------------------------- MS MARCO
TRIPLES = [
    ("what is a harbour", "A harbour is a sheltered body of water where ships dock.", "Spices were traded widely."),
    ("who designed the filter", "The filter was designed by a young engineer.", "Storms closed three stations."),
    ("when did trains return", "Trains returned to the timetable on Monday.", "Museums and cafes line the quays."),
]


def test_msmarco_from_a_local_copy_laid_out_like_the_hub(tmp_path):
    repo = tmp_path / "msmarco-bm25"
    (repo / "triplet").mkdir(parents=True)
    table = pa.table({k: [t[i] for t in TRIPLES] for i, k in enumerate(("query", "positive", "negative"))})
    pq.write_table(table, repo / "triplet" / "train-00000-of-00001.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: triplet\n  data_files:\n  - split: train\n    path: triplet/train-*\n---\n"
    )
    rows = sd.load_msmarco_triplets(str(repo), "triplet")
    assert rows.column_names == ["query", "positive", "negative"] and rows[0]["query"] == "what is a harbour"
    built = sd.build_slice_data(source="msmarco", msmarco_dataset=str(repo), msmarco_valid_rows=1)
    assert built.stats["triplets"] == 3 and built.stats["query_kind msmarco"] == 3
    assert len(built.split("train")) == 3  # valid rows are capped at a tenth of the data


def test_msmarco_official_tsv(tmp_path):
    path = tmp_path / "triples.train.small.tsv"
    path.write_text("".join("\t".join(t) + "\n" for t in TRIPLES))
    rows = sd.load_msmarco_triplets(str(path))
    assert len(rows) == 3 and rows[2]["negative"] == TRIPLES[2][2]
    assert len(sd.load_msmarco_triplets(str(path), max_rows=2)) == 2


def test_msmarco_wrong_columns_is_a_clear_error(tmp_path):
    repo = tmp_path / "pairs"
    (repo / "pair").mkdir(parents=True)
    pq.write_table(pa.table({"anchor": ["q"], "positive": ["p"]}), repo / "pair" / "train-00000-of-00001.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: pair\n  data_files:\n  - split: train\n    path: pair/train-*\n---\n"
    )
    with pytest.raises(ValueError, match="needs query, positive and negative"):
        sd.load_msmarco_triplets(str(repo), "pair")
