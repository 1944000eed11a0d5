"""The Hub-dataset loader, tested offline on a local folder laid out like Lihuchen/pearl_benchmark."""

from __future__ import annotations

import pytest

from phrasezoo.evaluation import evaluate, load_hub_benchmark
from phrasezoo.evaluation.tasks.clustering import ClusteringData
from phrasezoo.evaluation.tasks.similarity import MultipleChoiceData, PairScoreData

from .conftest import FakeEncoder

README = """---
license: cc-by-sa-4.0
configs:
- config_name: bird
  data_files:
  - split: test
    path: data/bird/bird.tsv
- config_name: turney
  data_files:
  - split: test
    path: data/turney/turney.tsv
- config_name: conll
  data_files:
  - split: test
    path: data/conll/conll.tsv
- config_name: autofj
  data_files:
  - split: test
    path: data/autofj/autofj.tsv
- config_name: ppdb
  data_files:
  - split: test
    path: data/ppdb/ppdb.tsv
- config_name: yago
  data_files:
  - split: test
    path: data/yago/yago_test_samples.tsv
- config_name: umls
  data_files:
  - split: umls
    path: data/umls/umls_test_samples.tsv
- config_name: kb
  data_files:
  - split: umls
    path: data/kb/umls_kb.tsv
  - split: yago
    path: data/kb/yago_kb.tsv
---
# pearl benchmark (test copy)
"""

FILES = {
    "data/bird/bird.tsv": "pair\tterm1\tterm2\tterm2: unigram or bigram\tsource\trelation\trelatedness score\tpos\n"
    "(a b, c d)\ta b\tc d\tbigram\tx\tNone\t0.9\tn-n\n(a b, e)\ta b\te\tunigram\tx\tNone\t0.1\tn-n\n"
    "(f g, null)\tf g\tnull\tunigram\tx\tNone\t0.5\tn-n\n",
    "data/turney/turney.tsv": "query\tlabel\tcandidate_1\tcandidate_2\tcandidate_3\tcandidate_4\n"
    "double star\tbinary\tdual\tlumen\tneutralism\tkeratoplasty\n",
    "data/conll/conll.tsv": "entity\tlabel\nJapan\tLOC\nNadim Ladki\tPER\nAsian Cup\tMISC\nNA\tORG\n",
    "data/autofj/autofj.tsv": "Dataset\nAmphibian\n",
    "data/ppdb/ppdb.tsv": "phrase_1\tphrase_2\tlabel\nthanking you\tthank you\tpos\nthanking you\tinvited\tneg\n",
    "data/yago/yago_test_samples.tsv": "query\tlabel\n(523) Ada\t523 Ada\nBill Lumpkins\tWilliam Lumpkins\n",
    "data/umls/umls_test_samples.tsv": "query\tlabel\nserum sickness\tSerum Sickness\n",
    "data/kb/yago_kb.tsv": "entity_name\n523 Ada\nWilliam Lumpkins\nNew York\n",
    "data/kb/umls_kb.tsv": "entity_name\nSerum Sickness\n",
}


@pytest.fixture(scope="module")
def hub_folder(tmp_path_factory):
    """The folder, and a fresh datasets cache (datasets keys its cache on the folder name, not the contents)."""
    root = tmp_path_factory.mktemp("pearl_benchmark")
    (root / "README.md").write_text(README)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return str(root), str(tmp_path_factory.mktemp("hf_cache"))


def test_rows_convert_to_task_formats(hub_folder):
    folder, cache = hub_folder
    bird = load_hub_benchmark("bird", path=folder, cache_dir=cache)
    assert isinstance(bird, PairScoreData) and bird.left == ["a b", "a b", "f g"] and bird.scores == [0.9, 0.1, 0.5]
    assert bird.right[2] == "null"  # kept as text, not turned into a missing value
    turney = load_hub_benchmark("turney", path=folder, cache_dir=cache)
    assert isinstance(turney, MultipleChoiceData)
    assert turney.candidates == [["binary", "dual", "lumen", "neutralism", "keratoplasty"]]
    conll = load_hub_benchmark("conll", path=folder, cache_dir=cache)
    assert isinstance(conll, ClusteringData) and conll.labels == ["LOC", "PER", "ORG"]  # MISC dropped
    assert conll.phrases[-1] == "NA"
    ppdb = load_hub_benchmark("ppdb", path=folder, cache_dir=cache)
    assert ppdb.labels == [1, 0]
    yago = load_hub_benchmark("yago", path=folder, cache_dir=cache)
    assert yago.gold == ["523 Ada", "William Lumpkins"] and yago.kb is None
    umls = load_hub_benchmark("umls", path=folder, cache_dir=cache)  # its only split is called "umls"
    assert umls.mentions == ["serum sickness"]
    assert load_hub_benchmark("kb", split="yago", path=folder, cache_dir=cache) == [
        "523 Ada",
        "William Lumpkins",
        "New York",
    ]
    [table] = load_hub_benchmark("autofj", path=folder, cache_dir=cache)
    assert table.name == "Amphibian" and table.left
    with pytest.raises(ValueError):
        load_hub_benchmark("kb", path=folder, cache_dir=cache)


def test_evaluate_with_hub_source(hub_folder, tmp_path):
    enc = FakeEncoder(
        {"binary": [1, 0], "double star": [1, 0.1]}
        | {w: [0, 1] for w in ("dual", "lumen", "neutralism", "keratoplasty")}
    )
    doc = evaluate(enc, tasks="turney,bird", source="hub", hub_kwargs={"path": hub_folder[0], "cache_dir": hub_folder[1]}, benchmarks_dir=tmp_path,
                   progress=False)  # fmt: skip
    values = {r["task"]: r["value"] for r in doc["results"]}
    assert values["turney"] == 1.0 and -1.0 <= values["bird"] <= 1.0
    encoded = [t for call in enc.calls for t in call]
    assert len(encoded) == len(set(encoded))  # each string encoded once across tasks
    assert {"double star", "a b"} <= set(encoded)
