"""data.benchmark_filter for Phrase-BERT: triples that touch a test-benchmark item are dropped before training."""

from __future__ import annotations

from phrasezoo.data.benchmark_filter import BenchmarkBlocklist
from phrasezoo.methods.phrase_bert.assembly import Triples, drop_benchmark_triples


def test_triples_touching_a_benchmark_item_are_dropped():
    tiny = BenchmarkBlocklist.build(
        {
            "ppdb": (["tax rates", "levies"], [("tax rates", "levies")], []),
            "conll2003": (["Germany"], [], ["Germany beat England in the final on Sunday"]),
        }
    )
    paraphrase = [
        ("tax rates", "duty levels", "red cars"),  # a benchmark phrase
        ("tax levels", "levies", "Germany"),  # one-word strings stay in multiword mode
        ("income tax", "taxes on income", "fast cars"),
    ]
    context = [
        ("final", "[MASK] beat England in the final on Sunday", "a quiet [MASK] morning"),
        ("final", "Germany beat England in the final on Sunday .", "a quiet [MASK] morning"),  # a test sentence
    ]
    kept, facts = drop_benchmark_triples(Triples(paraphrase, context, {}), tiny, "multiword")
    assert kept.paraphrase == paraphrase[1:] and kept.context == context[:1]
    assert facts == {"triples dropped by the benchmark filter (multiword)": "paraphrase 1 of 3, context 1 of 2"}
    strict, _ = drop_benchmark_triples(Triples(paraphrase, context, {}), tiny, "strict")
    assert strict.paraphrase == paraphrase[2:]
