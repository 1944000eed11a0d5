"""The name benchmark: its sources' readers, its entity splits and queries, and the built benchmark's split
guarantees."""

from __future__ import annotations

import gzip

import pytest

from phrasezoo.data.benchmarks import name_benchmark as nb
from phrasezoo.data.benchmarks import name_sources as ns
from phrasezoo.resources.splits import normalize


def _dictd(tmp_path, name: str, entries: list[tuple[str, str]]) -> None:
    """A tiny dictd dictionary: an index of base64 offsets and a gzip body, as dictfmt writes them."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def b64(value: int) -> str:
        out = ""
        while True:
            out = alphabet[value % 64] + out
            value //= 64
            if not value:
                return out

    body, index = b"", []
    for head, text in entries:
        data = text.encode()
        index.append(f"{head}\t{b64(len(body))}\t{b64(len(data))}")
        body += data
    (tmp_path / f"{name}.index").write_text("\n".join(index) + "\n")
    with gzip.open(tmp_path / f"{name}.dict.dz", "wb") as handle:
        handle.write(body)


def test_dictd_reader_and_vera(tmp_path, monkeypatch):
    _dictd(tmp_path, "vera", [
        ("00databaseinfo", "header\n"),
        ("ANSI", "ANSI\n       American National Standard Institute (org., USA)\n"),
        ("RAM", "RAM\n       Random Access Memory (RAM, IC)\n"),
        ("RAM", "RAM\n       Rarely Adequate Memory (slang)\n"),
        ("GBE", "GBE\n       GigaBIT Ethernet (ethernet, BIT)\n"),
    ])  # fmt: skip
    assert [h for h, _ in ns.dictd_entries("vera", tmp_path)] == ["ANSI", "RAM", "RAM", "GBE"]
    monkeypatch.setattr(ns, "DICTD", tmp_path)
    monkeypatch.setattr(ns.dictd_entries, "__defaults__", (tmp_path,))
    entities = list(ns.vera_entities())
    by_key = {e.key: e for e in entities}
    assert by_key["ANSI"].canonical == "American National Standard Institute"
    assert by_key["ANSI"].aliases == [("ANSI", "acronym")]
    assert by_key["GBE"].canonical == "Gigabit Ethernet"  # V.E.R.A.'s capitals written plainly
    # an ambiguous acronym gives its expansions as KB names, never as a query
    assert {e.canonical for e in entities if e.key.startswith("RAM#")} == {
        "Random Access Memory",
        "Rarely Adequate Memory",
    }
    assert all(not e.aliases for e in entities if e.key.startswith("RAM#"))


def test_missing_dictionary_says_how_to_install(tmp_path):
    with pytest.raises(ns.SourceMissing, match="apt-get install dict-vera"):
        list(ns.dictd_entries("vera", tmp_path))


def test_acronyms_and_short_forms():
    assert ns.is_acronym("IBM") and ns.is_acronym("AT&T") and ns.is_acronym("W3C")
    assert not ns.is_acronym("Ibm") and not ns.is_acronym("I")
    assert ns.initials("Bank of America") == "ba"
    assert nb.ambiguous("BA", "acronym", "British Airways")
    assert not nb.ambiguous("BA", "acronym", "Bank of Scotland")
    assert nb.ambiguous("Dickens", "short", "Monica Dickens")
    assert not nb.ambiguous("C. Dickens", "initial", "Monica Dickens")


def test_split_entities_keep_strings_in_one_split():
    a = ns.NameEntity("s", "a", "Alpha Beta", [("AB", "acronym")])
    b = ns.NameEntity("t", "b", "Alpha Beta Gamma", [("AB", "acronym")])
    buckets = nb.split_entities([a, b])
    seen = [s for entities in buckets.values() for e in entities for s in nb.entity_strings(e)]
    assert len(seen) == len(set(seen))


@pytest.mark.slow
def test_built_benchmark_splits_are_disjoint_and_sized(built):
    for domain in nb.DOMAINS:
        dev, test = built[f"names-{domain}-dev"], built[f"names-{domain}-test"]
        dev_strings = {normalize(s) for s in dev.queries + dev.gold}
        test_strings = {normalize(s) for s in test.queries + test.gold}
        assert not dev_strings & test_strings, domain  # no entity and no alias string in two splits
        for task in (dev, test):
            assert len(task.kb) >= nb.MIN_KB or len(task.kb) == task.stats["kb"]
            assert set(task.gold) <= set(task.kb)
            assert len(set(task.queries)) == len(task.queries)
            assert not {normalize(q) for q in task.queries} & {normalize(n) for n in task.kb}
        assert len(dev.queries) >= 300, domain
    assert len(built["names-acronyms-test"].queries) >= 1000
