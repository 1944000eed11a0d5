"""The benchmark filter drops real items of every test benchmark from training data, and nothing else."""

from __future__ import annotations

import csv
import json
from dataclasses import fields, is_dataclass

import pytest

from phrasezoo.data.benchmark_filter import (
    BENCHMARKS,
    default_benchmarks_dir,
    load_blocklist,
    normalize,
    remove_benchmark_items,
)


@pytest.fixture(scope="module")
def blocklist(benchmarks_dir):
    return load_blocklist(benchmarks_dir)


def _shout(text: str) -> str:
    """The same item with other case, spacing and punctuation: must still match."""
    return "  " + text.upper().replace(" ", "  ") + " !"


def test_normal_form_ignores_case_whitespace_and_punctuation():
    assert normalize("  New York-based\tU.S. firm’s ") == normalize("new york based u s firm s")
    assert normalize("Café") == "café"


def test_resolution_of_the_benchmarks_folder_is_the_harness_rule(monkeypatch, tmp_path):
    from phrasezoo.evaluation.tasks import default_benchmarks_dir as harness_rule

    monkeypatch.delenv("PHRASEZOO_BENCHMARKS", raising=False)
    assert default_benchmarks_dir() == harness_rule()
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(tmp_path))
    assert default_benchmarks_dir() == harness_rule() == tmp_path


def test_real_items_of_every_benchmark_are_dropped(benchmarks_dir, blocklist):
    ppdb = json.loads((benchmarks_dir / "ppdb" / "ppdb.json").read_text(encoding="utf8"))
    ppdb_f = json.loads((benchmarks_dir / "ppdb" / "ppdb_filtered.json").read_text(encoding="utf8"))
    turney = (benchmarks_dir / "turney" / "turney.txt").read_text(encoding="utf8").splitlines()[0].split(" | ")
    with open(benchmarks_dir / "bird" / "bird.tsv", encoding="utf8") as handle:
        bird = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))[10]
    yago = (benchmarks_dir / "yago" / "yago_test_samples.tsv").read_text(encoding="utf8").splitlines()[5].split("\t")
    umls = (benchmarks_dir / "umls" / "umls_test_samples.tsv").read_text(encoding="utf8").splitlines()[7].split("\t")
    conll = json.loads((benchmarks_dir / "conll2003" / "test.jsonl").read_text(encoding="utf8").splitlines()[3])
    tokens, spans = conll["sentences"][0], conll["ner"][0]
    mention = " ".join(tokens[spans[0][0] : spans[0][1] + 1])
    cdr_lines = (benchmarks_dir / "bc5cdr" / "test.jsonl").read_text(encoding="utf8").splitlines()
    cdr_sentence = next(" ".join(s) for line in cdr_lines for s in json.loads(line)["sentences"] if len(s) >= 10)
    with open(benchmarks_dir / "stsb_context" / "sts-test-sentences-clean.tsv", encoding="cp1252") as handle:
        sts = list(csv.DictReader(handle, delimiter="\t"))[1]
    import pandas as pd

    from phrasezoo.data.benchmark_filter import autofj_root

    autofj_title = pd.read_csv(autofj_root() / "Country" / "right.csv")["title"].iloc[3]

    cases = {
        "ppdb": [_shout(ppdb[0][0]), (ppdb[5][1], "unrelated words here")],
        "ppdb_filtered": [(ppdb_f[3][0], ppdb_f[3][1]), _shout(ppdb_f[-1][1])],
        "turney": [turney[0], _shout(turney[1]), turney[-1]],
        "bird": [(bird["term1"], bird["term2"]), _shout(bird["term2"])],
        "yago": [yago[0], _shout(yago[1])],
        "umls": [umls[0], _shout(umls[1])],
        "conll2003": [mention, f"Some text before. {' '.join(tokens)} And after."],
        "bc5cdr": [f"A document that quotes: {cdr_sentence} and goes on."],
        "autofj": [_shout(autofj_title)],
        "stsb_context": [
            sts["line"],
            f"A longer training passage in which {sts['paraphrase'].lower().rstrip('.')} is hidden.",
            _shout(sts["passage"]),
        ],
    }
    for benchmark, items in cases.items():
        kept, report = remove_benchmark_items(items, blocklist=blocklist)
        assert kept == [], (benchmark, kept)
        assert report.dropped_per_benchmark[benchmark] == len(items), (benchmark, report)
        assert report.dropped == report.total == len(items)


def test_unrelated_training_items_are_kept_in_order(blocklist):
    items = [
        "qzxv wobbly lantern fish",
        ("plorkish phrase one", "plorkish phrase two"),
        "A long document about plorkish lantern fish that shares no sentence with any benchmark at all.",
    ]
    kept, report = remove_benchmark_items(items, blocklist=blocklist)
    assert kept == items and report.dropped == 0 and report.kept == 3
    assert "dropped 0 of 3" in str(report)


def test_short_items_are_not_matched_inside_longer_text(blocklist, benchmarks_dir):
    turney = (benchmarks_dir / "turney" / "turney.txt").read_text(encoding="utf8").splitlines()[0].split(" | ")
    assert blocklist.matches(turney[0])
    assert not blocklist.matches(f"plorkish {turney[0]} wobbly qzxv")


def test_every_string_the_harness_loads_is_blocked(benchmarks_dir, blocklist):
    """Completeness: the filter's readers see every phrase/name/sentence the evaluation harness reads."""
    from phrasezoo.evaluation.tasks import TaskContext, get_task

    ctx = TaskContext(benchmarks_dir=benchmarks_dir)

    def strings(data):
        if isinstance(data, list):
            for x in data:
                yield from strings(x)
        elif isinstance(data, str):
            yield data
        elif is_dataclass(data):
            for f in fields(data):
                if f.name not in {"labels", "types", "gold", "name"} or data.__class__.__name__ == "RetrievalData":
                    yield from strings(getattr(data, f.name))
        elif isinstance(data, dict):
            for k, v in data.items():
                yield from strings(k)
                yield from strings(v)

    for name in BENCHMARKS:
        loaded = [s for s in strings(get_task(name).load_local(ctx)) if normalize(s)]
        missing = [s for s in loaded if name not in blocklist.matches(s)]
        assert loaded and not missing, (name, len(loaded), missing[:5])


def test_unknown_benchmark_and_missing_folder_raise_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="Unknown benchmark"):
        load_blocklist(benchmarks=["nope"])
    with pytest.raises(FileNotFoundError, match="PHRASEZOO_BENCHMARKS"):
        load_blocklist(tmp_path, benchmarks=["turney"])
    with pytest.raises(ValueError, match="key="):
        remove_benchmark_items([{"a": 1}], blocklist=load_blocklist(benchmarks=[]))


def test_multiword_mode_keeps_single_benchmark_words_unless_paired(blocklist, benchmarks_dir):
    turney = (benchmarks_dir / "turney" / "turney.txt").read_text(encoding="utf8").splitlines()[0].split(" | ")
    query, answer, distractor = turney[0], turney[1], turney[-1]
    items = [(answer, "plorkish synonym"), (query, distractor), query, (answer, "qzxv"), (query, answer)]
    kept, report = remove_benchmark_items(items, blocklist=blocklist, mode="multiword")
    assert kept == [(answer, "plorkish synonym"), (answer, "qzxv")]
    assert report.mode == "multiword" and report.dropped_per_benchmark["turney"] == 3
    kept, report = remove_benchmark_items(items, blocklist=blocklist)
    assert kept == [] and report.mode == "strict"
    with pytest.raises(ValueError, match="mode"):
        remove_benchmark_items(items, blocklist=blocklist, mode="loose")
