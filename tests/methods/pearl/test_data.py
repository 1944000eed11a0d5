"""The PEARL entry points on a tiny local corpus (no GloVe, no WordNet, fake encoder: fast and deterministic)."""

from __future__ import annotations

import random
import time
import zlib

import numpy as np
import pytest

from phrasezoo.methods.pearl.data import build_augmenter, build_pearl_dataset
from phrasezoo.models.pearl.configuration_pearl import DEFAULT_TYPE_LABELS

pytestmark = pytest.mark.usefixtures("fresh_cache")  # every test starts from an empty cache

TEXT = """The New York Times reported on the war in Iraq. The New York Times is a newspaper in New York.
Many people read The New York Times in New York. The New York Post is another newspaper in New York.
She lived in New York for ten years. The city was very expensive, and the war was very difficult.
The history of Alabama is long. In 1999, the history of Alabama was written by a historian in Alabama."""


class FakeEncoder:
    cache_key = "fake-encoder"

    def __call__(self, texts):
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts]
        rows = np.asarray(rows, dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(TEXT + "\n")
    return str(path)


def build(corpus, timings=None):
    return build_pearl_dataset(
        corpus, glove=None, encoder=FakeEncoder(), progress=False, n_process=1, use_wordnet=False, timings=timings
    )


def test_build_pearl_dataset(corpus):
    timings = {}
    ds = build(corpus, timings)
    assert {"phrase", "type_id", "type_label", "count", "paraphrases", "hard_negatives"} <= set(ds.column_names)
    rows = {r["phrase"]: r for r in ds}
    assert rows["The New York Times"]["type_label"] == "NP-ORG"
    assert "NYT" in rows["The New York Times"]["paraphrases"]
    assert "Alabama history" in rows["the history of Alabama"]["paraphrases"]
    for r in ds:
        assert r["count"] >= 2
        assert DEFAULT_TYPE_LABELS[r["type_id"]] == r["type_label"]
        assert len(r["hard_negatives"]) <= 2 and r["phrase"] not in r["hard_negatives"]
        assert not set(r["hard_negatives"]) & set(r["paraphrases"])
    assert {"parse", "phrase_table", "synonyms", "paraphrases", "hard_negatives", "total"} <= set(timings)
    start = time.perf_counter()
    again = build(corpus)
    assert (
        time.perf_counter() - start < 5.0
    )  # served from the cache (a build takes far longer; 5 s: the suite runs in two processes)
    assert again.to_list() == ds.to_list()


def test_build_augmenter_matches_dataset(corpus):
    ds = build(corpus)
    aug = build_augmenter(ds, glove=None, use_wordnet=False)
    rng = random.Random(0)
    views = [aug.augment("The New York Times", rng) for _ in range(200)]
    paraphrased = {v for v, k in views if k == "paraphrase"}
    assert paraphrased and paraphrased <= set(
        ds.filter(lambda r: r["phrase"] == "The New York Times")[0]["paraphrases"]
    )
    assert all(v for v, _ in views)


def test_type_head_labels_are_the_mined_phrase_types():
    """The data's phrase-type ids index PEARL's type head: the two lists (kept apart, models are self-contained)
    must stay equal."""
    from phrasezoo.data.corpus.phrases import DEFAULT_TYPE_LABELS as MINED_TYPES

    assert tuple(DEFAULT_TYPE_LABELS) == MINED_TYPES


def test_alias_rows_are_paraphrase_positives_both_ways(corpus):
    from phrasezoo.methods.pearl.data import add_alias_rows

    table = build(corpus)
    known = table["phrase"][0]
    pairs = [("I-20", "Interstate 20 in Alabama"), ("NYT", known), ("I-20", "Interstate 20")]
    extended, counts = add_alias_rows(table, pairs, repeat=2)
    rows = extended.to_dict()
    assert rows["phrase"][: len(table)] == table["phrase"]  # the table's rows keep their order
    added = rows["phrase"][len(table) :]
    assert added.count("I-20") == 2 and added.count("Interstate 20 in Alabama") == 2 and known not in added
    i = rows["phrase"].index("I-20")
    assert rows["paraphrases"][i] == ["Interstate 20 in Alabama", "Interstate 20"] and rows["type_id"][i] == -100
    assert rows["hard_negatives"][i] == []
    assert "NYT" in rows["paraphrases"][rows["phrase"].index(known)]  # a known phrase gains the alias, no new row
    assert counts == {"alias phrases": 5, "alias rows": 8, "table phrases extended": 1}
    augmenter = build_augmenter(extended)
    assert augmenter.apply("paraphrase", "Interstate 20 in Alabama", random.Random(0)) == "I-20"
    with pytest.raises(ValueError, match="repeat"):
        add_alias_rows(table, pairs, repeat=0)


def test_a_batch_of_untyped_alias_rows_has_no_type_loss_and_no_nan():
    import torch

    from phrasezoo.zoo.registry import get_method
    from tests.training.conftest import make_task

    model = get_method("pearl").tiny_model()
    task = make_task(model)
    task.type_ids = [-100] * len(task.type_ids)
    task.type_of = dict.fromkeys(task.type_of, -100)
    loss, logs = task.compute_loss(model, task.make_batch(list(range(4)), random.Random(0)))
    assert torch.isfinite(loss) and logs["type_ce"] == 0.0


def test_alias_groups_join_every_name_of_one_entity():
    from phrasezoo.methods.pearl.data import alias_groups

    groups = alias_groups([("I-20", "Interstate 20"), ("Interstate 20", "I 20 (Alabama)"), ("I-59", "Interstate 59")])
    assert groups["I-20"] == groups["I 20 (Alabama)"] == {"I-20", "Interstate 20", "I 20 (Alabama)"}
    assert groups["I-59"] == {"I-59", "Interstate 59"}


def test_alias_negatives_are_look_alike_names_of_other_entities_only(corpus):
    import numpy as np

    from phrasezoo.methods.pearl.data import add_alias_rows, mine_alias_negatives

    def encode(texts):  # a stand-in encoder: every name its own direction, so no candidate counts as a paraphrase
        return np.eye(len(texts))

    pairs = [
        ("Pope Leo I", "Leo the Great"),
        ("Pope Leo", "Leo the Great"),  # another name of the same entity: never a negative of "Pope Leo I"
        ("Pope Clement I", "Clement of Rome"),
        ("Pope Gregory I", "Gregory the Great"),
    ]
    negatives = mine_alias_negatives(pairs, 2, encode=encode)
    assert negatives["Pope Leo I"] and set(negatives["Pope Leo I"]) <= {"Pope Clement I", "Pope Gregory I"}
    leo = {"Pope Leo I", "Pope Leo", "Leo the Great"}
    assert all(not leo & set(negatives.get(name, [])) for name in leo)
    table = build(corpus)
    extended, counts = add_alias_rows(table, pairs, repeat=2, negatives=negatives)
    rows = extended.to_dict()
    i = rows["phrase"].index("Pope Leo I")
    assert rows["hard_negatives"][i] == negatives["Pope Leo I"]
    assert counts["alias rows with a hard negative"] == 2 * sum(1 for p in negatives if p not in table["phrase"])


def test_typed_alias_rows_take_the_type_of_another_name_of_the_entity(corpus):
    from phrasezoo.methods.pearl.data import add_alias_rows

    table = build(corpus)
    typed = [i for i, t in enumerate(table["type_id"]) if t >= 0]
    assert typed, "the test corpus should give at least one typed phrase"
    known = table["phrase"][typed[0]]
    pairs = [("Their Alias", known), ("Their Alias", "Another Alias"), ("Lonely Alias", "Lonely Title")]
    extended, counts = add_alias_rows(table, pairs, typed=True)
    rows = extended.to_dict()
    for name in ("Their Alias", "Another Alias"):  # linked to the typed phrase through one chain of pairs
        i = rows["phrase"].index(name)
        assert rows["type_id"][i] == table["type_id"][typed[0]]
        assert rows["type_label"][i] == table["type_label"][typed[0]]
    assert rows["type_id"][rows["phrase"].index("Lonely Alias")] == -100  # no typed name: stays untyped
    assert counts["alias rows with a phrase type"] == 2
    plain, _ = add_alias_rows(table, pairs)
    assert plain["type_id"][plain["phrase"].index("Their Alias")] == -100  # off by default
