"""Benchmark items leave a PEARL phrase table, and the views drawn from it, when ``data.benchmark_filter`` is set."""

from __future__ import annotations

import random

from datasets import Dataset

from phrasezoo.data.benchmark_filter import BenchmarkBlocklist, remove_benchmark_items
from phrasezoo.methods.pearl.decontaminate import filter_table, guard_views


def _blocklist() -> BenchmarkBlocklist:
    return BenchmarkBlocklist.build(
        {
            "ppdb": (["tax rates", "levies", "car"], [("tax rates", "levies")], []),
            "autofj": (["New Delhi", "Delhi"], [], []),
        }
    )


def _table() -> Dataset:
    return Dataset.from_dict(
        {
            "phrase": ["tax rates", "tax levels", "Delhi", "the capital", "new cars", "income tax"],
            "paraphrases": [["levies"], ["levies"], ["capital of India"], ["New Delhi"], ["car"], ["taxes"]],
            "hard_negatives": [[""], ["tax rises"], ["Mumbai"], [""], [""], ["tax rates"]],
            "count": [5, 4, 3, 2, 2, 1],
        }
    )


def test_multiword_filter_drops_rows_touching_a_benchmark_and_keeps_the_rest():
    kept, report = filter_table(_table(), _blocklist(), "multiword")
    # "tax rates" (a PPDB phrase and pair), "New Delhi" (a paraphrase) and "tax rates" as a hard negative go;
    # one-word strings stay in multiword mode ("Delhi", "car"); the other columns travel with their rows
    assert kept["phrase"] == ["tax levels", "Delhi", "new cars"]
    assert kept["count"] == [4, 3, 2]
    assert report["dropped"] == 3 and report["dropped_per_benchmark"] == {"ppdb": 2, "autofj": 1}


def test_strict_filter_drops_one_word_benchmark_strings_too():
    kept, report = filter_table(_table(), _blocklist(), "strict")
    # every row holds a benchmark string once single words count: "levies", "Delhi", "car"...
    assert len(kept) == 0 and report["dropped"] == 6


def test_guarded_views_fall_back_to_the_anchor_when_a_view_touches_a_benchmark():
    views = {"tax levels": "tax rates", "income tax": "income taxes", "Delhi": "Delhi city"}
    guarded = guard_views(lambda phrase, rng: views[phrase], _blocklist(), "multiword")
    rng = random.Random(0)
    assert guarded("tax levels", rng) == "tax levels"  # the view is a benchmark phrase
    assert guarded("income tax", rng) == "income taxes"
    assert guarded("Delhi", rng) == "Delhi city"


def test_a_key_returning_one_string_is_read_as_one_string():
    kept, report = remove_benchmark_items(
        ["car", "tax rates", "income tax"], key=lambda s: s, blocklist=_blocklist(), log=False
    )
    assert kept == ["income tax"] and report.dropped == 2
