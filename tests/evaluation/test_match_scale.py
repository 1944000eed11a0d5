"""benchmarks/match_scale.py and match_scale_data.py: the name pool, the seeded corruptions, and every step of the
scale benchmark on a small table (a tiny hashing encoder stands in for MiniLM), down to the docs table."""

from __future__ import annotations

import random
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import match_scale  # noqa: E402
import match_scale_data  # noqa: E402

from tests.integrations.test_splink import LEFT, CountingEncoder  # noqa: E402


def test_corruptions_are_seeded_documented_and_change_the_name():
    names = LEFT + ["aspirin", "New York", "coverup"]
    first = [match_scale_data.corrupt(n, random.Random(7)) for n in names]
    again = [match_scale_data.corrupt(n, random.Random(7)) for n in names]
    assert first == again
    for name, (text, applied) in zip(names, first):
        assert text != name and text.strip()
        assert applied and set(applied) <= set(match_scale_data.OPERATIONS)
        assert len(applied) == len(set(applied))  # each operation at most once
    for seed in range(200):  # a one-word name is never cut short: "coverup" -> "cov." names nothing
        text, applied = match_scale_data.corrupt("coverup", random.Random(seed))
        assert "abbreviate" not in applied and "." not in text


def test_gather_names_deduplicates_in_source_order(monkeypatch):
    sources = {
        "autofj": ["New York", "Bank of America"],
        "yago-umls": ["new york", "Deutsche Bahn", "ab"],  # a duplicate key and a too-short key
        "wiki-titles": ["Berlin", "Paris", "Rome", "Madrid"],
    }
    monkeypatch.setattr(match_scale_data, "source_iterators", lambda benchmarks: dict(sources))
    names, origin = match_scale_data.gather_names(5, Path("."), seed=0)
    assert names[:3] == ["New York", "Bank of America", "Deutsche Bahn"]
    assert origin == ["autofj", "autofj", "yago-umls", "wiki-titles", "wiki-titles"]
    assert set(names[3:]) <= {"Berlin", "Paris", "Rome", "Madrid"}  # the last source is sampled
    with pytest.raises(RuntimeError, match="Only 7 unique names"):
        match_scale_data.gather_names(50, Path("."))


@pytest.fixture
def small_run(tmp_path: Path):
    """A 200-row left/right pair written the way the tables step writes it, encoded by the tiny encoder."""
    rng = random.Random(0)
    left = [f"{name} {i}" for i, name in enumerate(LEFT * 20)]
    order = list(range(len(left)))
    rng.shuffle(order)
    right = [match_scale_data.corrupt(left[i], rng)[0] for i in order]
    pq.write_table(pa.table({"name": left}), tmp_path / "left.parquet")
    pq.write_table(pa.table({"name": right, "truth": np.asarray(order, dtype=np.int64)}), tmp_path / "right.parquet")
    args = Namespace(model=CountingEncoder(64), seed=0, check_sample=50, nprobe=4, query_sample=60,
                     rapidfuzz_sample=40, threads=1, subset=0, spark_rows=100, matcher="tfidf:char",
                     matcher_sample=50)  # fmt: skip
    return args, tmp_path


def test_every_step_on_a_small_table(small_run, monkeypatch):
    args, folder = small_run
    monkeypatch.setattr(match_scale, "CHUNK", 64)  # several chunks, as in the 1M run
    steps = {}
    for name in ("encode", "embed", "tfidf", "rapidfuzz", "matcher"):
        with match_scale.PeakRSS() as rss:
            steps[name] = match_scale.STEP_FUNCTIONS[name](args, folder)
        steps[name]["peak_rss_gib"] = rss.gib()
        match_scale.save_json(folder / match_scale.step_file(name, args), steps[name])
    assert len(list(folder.glob("left-*.npy"))) == 4  # 200 rows in chunks of 64
    again = match_scale.step_encode(args, folder)  # finished chunks are kept: nothing re-encoded
    assert again["rows_encoded_this_run"] == 0
    embed = steps["embed"]
    check = embed["fp16_check"]  # the counting encoder has near-ties that fp16 rounding may flip: a loose bar
    assert 0.0 <= embed["accuracy"] <= 1.0 and check["top1_agreement"] >= 0.85
    assert abs(check["accuracy_fp16"] - check["accuracy_fp32"]) <= 0.1
    assert steps["tfidf"]["extrapolated"] and steps["tfidf"]["accuracy_sample"] == 60
    assert steps["rapidfuzz"]["accuracy"] > 0.5  # corrupted names of distinct entities: rapidfuzz finds most
    matcher = steps["matcher"]  # the step's plumbing, with a fast matcher (the default's own tests are in tests/match)
    assert matcher["extrapolated"] and matcher["accuracy_sample"] == 50 and matcher["accuracy"] > 0.5
    assert matcher["method"] == "matcher tfidf:char"
    assert matcher["neighbourhood_rows"]["computed_for_sample"] == 0  # no per-row statistics outside the hybrid
    seconds = matcher["seconds"]  # searched twice: the second pass times the per-query work
    assert seconds["search_sample_again"] >= 0 and seconds["total_extrapolated"] >= seconds["fit"]
    args.subset = 100  # a subset reuses the chunks and measures on the first 100 right rows and their left rows
    partial = match_scale.step_tfidf(args, folder)
    assert partial["accuracy_sample"] == 60 and match_scale.step_file("tfidf", args) == "step-tfidf-100.json"
    left, right, truth = match_scale.load_tables(folder, 100)
    assert len(left) == len(right) == 100 and sorted(truth.tolist()) == list(range(100))
    full_left, full_right, full_truth = match_scale.load_tables(folder)
    assert all(left[truth[j]] == full_left[full_truth[j]] for j in range(100))
    results = {"size": 200, "steps": steps}
    table = match_scale.table_rows(results)
    assert table.count("\n| ") == 4 and "time extrapolated" in table and "fp16 check" in table
    docs = folder / "page.md"
    docs.write_text("# page\n<!-- match-scale:start -->\n<!-- match-scale:end -->\n")
    from phrasezoo.core.files import write_readme_table

    write_readme_table(docs, table, block="match-scale")
    assert "rapidfuzz cdist token_sort_ratio" in docs.read_text()


def test_help_and_unknown_steps(capsys):
    with pytest.raises(SystemExit):
        match_scale.main(["--help"])
    assert "1,000,000" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        match_scale.main(["--size", "10", "--steps", "tables,teleport", "--workdir", "/tmp/unused-scale"])


def test_encoding_processes_split_the_chunks_and_a_last_pass_finds_them_all(small_run, monkeypatch):
    args, folder = small_run
    monkeypatch.setattr(match_scale, "CHUNK", 64)
    args.shard = "1/2"  # the second of two processes: chunks 1 and 3
    match_scale.step_encode(args, folder)
    assert sorted(p.name for p in folder.glob("left-*.npy")) == ["left-0001.npy", "left-0003.npy"]
    args.shard = "0/2"
    match_scale.step_encode(args, folder)
    args.shard = None  # the pass that writes the step's record encodes nothing new
    assert match_scale.step_encode(args, folder)["rows_encoded_this_run"] == 0
    assert len(list(folder.glob("right-*.npy"))) == 4


def test_the_default_matchers_time_counts_each_rows_neighbourhood_once(small_run):
    """The hybrid matcher computes a reference row's neighbourhood statistics the first time it is a candidate; the
    step's second pass over the sample finds them known, and the estimate counts them once per left row."""
    args, folder = small_run
    args.matcher = "hybrid"
    step = match_scale.step_matcher(args, folder)
    known = step["neighbourhood_rows"]["computed_for_sample"]
    assert 0 < known <= 200 and step["method"].startswith("the default matcher (hybrid:")
    seconds = step["seconds"]
    assert seconds["total_extrapolated"] <= seconds["total_linear"] + 1.0  # never costlier than the linear count
    assert step["accuracy"] > 0.5


def test_fit_builds_the_indexes_before_the_timed_search():
    """The faiss indexes are one-off work: ``Matcher.fit`` builds them, so the step's fit time holds them and the
    first search pass (whose difference from the second is spread over the reference rows as their neighbourhood
    statistics) does not."""
    from phrasezoo.match import Matcher

    matcher = Matcher("hybrid", progress=False).fit(LEFT)
    channels = [c for c in (matcher.scorer.vectors, matcher.scorer.static) if c is not None]
    assert channels and all(c._index is not None for c in channels)
