"""data.benchmark_filter for UCTopic: mention instances that touch a test-benchmark item are dropped."""

from __future__ import annotations

from datasets import Dataset

from phrasezoo.data.benchmark_filter import BenchmarkBlocklist
from phrasezoo.methods.uctopic.assembly import drop_benchmark_instances


def test_instances_with_a_benchmark_mention_or_sentence_are_dropped():
    tiny = BenchmarkBlocklist.build(
        {
            "autofj": (["New Delhi", "Delhi"], [], []),
            "conll2003": ([], [], ["Germany beat England in the final on Sunday"]),
        }
    )
    sentences = [
        "New Delhi is the capital of India.",  # mention "New Delhi": an AutoFJ title
        "Delhi is a large city.",  # one word: kept in multiword mode
        "Germany beat England in the final on Sunday , he said .",  # contains a test sentence
        "Mumbai is a port city.",
    ]
    spans = [(0, 9), (0, 5), (0, 7), (0, 6)]
    data = Dataset.from_dict(
        {
            "sentence": sentences,
            "start": [s for s, _ in spans],
            "end": [e for _, e in spans],
            "key": ["entity:New Delhi", "entity:Delhi", "entity:Germany", "entity:Mumbai"],
        }
    )
    kept, facts = drop_benchmark_instances(data, tiny, "multiword")
    assert kept["key"] == ["entity:Delhi", "entity:Mumbai"]
    assert facts == {"instances dropped by the benchmark filter (multiword)": "2 of 4"}
    strict, _ = drop_benchmark_instances(data, tiny, "strict")
    assert strict["key"] == ["entity:Mumbai"]
