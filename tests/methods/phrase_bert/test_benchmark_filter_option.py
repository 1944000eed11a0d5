"""data.benchmark_filter for Phrase-BERT: triples that touch a test-benchmark item are dropped before training."""

from __future__ import annotations

from phrasezoo.data import benchmark_filter
from phrasezoo.data.benchmark_filter import BenchmarkBlocklist
from phrasezoo.methods.phrase_bert.task import drop_benchmark_triples


def test_triples_touching_a_benchmark_item_are_dropped(monkeypatch):
    tiny = BenchmarkBlocklist.build(
        {
            "ppdb": (["tax rates", "levies"], [("tax rates", "levies")], []),
            "conll2003": (["Germany"], [], ["Germany beat England in the final on Sunday"]),
        }
    )
    monkeypatch.setattr(benchmark_filter, "load_blocklist", lambda *a, **k: tiny)
    paraphrase = [
        ("tax rates", "duty levels", "red cars"),  # a benchmark phrase
        ("tax levels", "levies", "Germany"),  # one-word strings stay in multiword mode
        ("income tax", "taxes on income", "fast cars"),
    ]
    context = [
        ("final", "[MASK] beat England in the final on Sunday", "a quiet [MASK] morning"),
        ("final", "Germany beat England in the final on Sunday .", "a quiet [MASK] morning"),  # a test sentence
    ]
    kept_p, kept_c, dropped = drop_benchmark_triples(paraphrase, context, "multiword")
    assert kept_p == paraphrase[1:] and kept_c == context[:1]
    assert dropped == "paraphrase 1 of 3, context 1 of 2"
    strict_p, _, _ = drop_benchmark_triples(paraphrase, context, "strict")
    assert strict_p == paraphrase[2:]
