"""Keep test-benchmark items out of a PEARL phrase table and out of the views drawn from it during training.

The table is mined from the offline corpora, which name many benchmark strings ("New Delhi" is an AutoFJ title,
"tax rates" a PPDB phrase). With ``data.benchmark_filter`` set, a row goes when its phrase, paraphrases or hard
negatives touch a benchmark item in that mode of :mod:`phrasezoo.data.benchmark_filter` (``"multiword"``: a
benchmark string of two or more words, or two strings of the row that form a benchmark pair; ``"strict"``: single
words too), and a view drawn at training time that would touch one (a synonym swap that lands on a PPDB pair) is
replaced by the phrase itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from datasets import Dataset

from phrasezoo.data.benchmark_filter import remove_benchmark_items


def row_strings(row: dict) -> list[str]:
    """The strings one table row trains on: its phrase, paraphrases and hard negatives."""
    return [row["phrase"], *row["paraphrases"], *(h for h in row["hard_negatives"] if h.strip())]


def filter_table(dataset: Dataset, blocklist, mode: str) -> tuple[Dataset, dict]:
    """The table without the rows that touch a benchmark item, and the filter's report (``as_dict()``)."""
    columns = {name: dataset[name] for name in ("phrase", "paraphrases", "hard_negatives")}
    rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    indices, report = remove_benchmark_items(
        range(len(rows)), key=lambda i: row_strings(rows[i]), blocklist=blocklist, mode=mode, log=False
    )
    return dataset.select(indices), report.as_dict()


def drop_benchmark_rows(dataset: Dataset, blocklist, mode: str) -> tuple[Dataset, dict]:
    """:func:`filter_table` for the benchmark filter part (:class:`phrasezoo.zoo.assembly.BenchmarkFilter`): the table
    and the card's facts (rows dropped, in all and per benchmark)."""
    dataset, report = filter_table(dataset, blocklist, mode)
    return dataset, {
        f"table rows dropped by the benchmark filter ({mode})": report["dropped"],
        "table rows dropped, per benchmark": ", ".join(
            f"{name} {count}" for name, count in report["dropped_per_benchmark"].items() if count
        ),
    }


def guard_views(
    augment: Callable[[str, random.Random], str], blocklist, mode: str
) -> Callable[[str, random.Random], str]:
    """``augment`` whose views never touch a benchmark item with their anchor (the anchor itself instead)."""

    def guarded(phrase: str, rng: random.Random) -> str:
        view = augment(phrase, rng)
        return phrase if view != phrase and blocklist.pair_matches(phrase, view, mode) else view

    return guarded
