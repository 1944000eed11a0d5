"""The name benchmark: its sources' readers, the variants it makes, and the built benchmark's split guarantees."""

from __future__ import annotations

import gzip
import random

import pytest

from phrasezoo.data import name_benchmark as nb
from phrasezoo.data import name_sources as ns
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


def test_noisy_variant_changes_the_name_and_keeps_it_recognisable():
    rng = random.Random(3)
    for name in ["International Business Machines Corporation", "University of Chicago", "Leonardo da Vinci"]:
        variant = nb.noisy_variant(name, random.Random(rng.random()))
        assert variant is not None and normalize(variant) != normalize(name)
    assert nb.noisy_variant("Bo", random.Random(0)) is None  # nothing to corrupt
    assert nb.ABBREVIATIONS["international"] == "Intl"


def test_split_entities_keep_strings_in_one_split():
    a = ns.NameEntity("s", "a", "Alpha Beta", [("AB", "acronym")])
    b = ns.NameEntity("t", "b", "Alpha Beta Gamma", [("AB", "acronym")])
    buckets = nb.split_entities([a, b])
    seen = [s for entities in buckets.values() for e in entities for s in nb.entity_strings(e)]
    assert len(seen) == len(set(seen))


@pytest.fixture(scope="module")
def built():
    try:
        return nb.load_benchmark()
    except ns.SourceMissing as err:  # the Debian dictionaries (bootstrap installs them as root)
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def train_entities(built) -> list:
    """The train entities (reading the sources takes ~20 s: once per module)."""
    return nb.training_entities()


@pytest.fixture(scope="module")
def train_strings(train_entities) -> set[str]:
    return {s for e in train_entities for s in nb.entity_strings(e)}


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


@pytest.mark.slow
def test_training_entities_hold_no_dev_or_test_string(built, train_strings):
    scored = {normalize(s) for task in built.values() for s in task.queries + task.gold}
    assert nb.scored_strings() == scored
    assert train_strings and not scored & train_strings


@pytest.mark.slow
def test_calibration_split_holds_only_train_entities_and_no_scored_string(built, train_entities, train_strings):
    scored = nb.scored_strings()
    train = train_strings
    tasks = nb.build_calibration(train_entities)  # what load_name_task(domain, "calib") caches
    for domain in nb.DOMAINS:
        task = tasks[f"names-{domain}-{nb.CALIB}"]
        strings = {normalize(s) for s in task.queries + task.gold}
        assert not strings & scored, domain  # no dev or test query or gold
        assert {normalize(g) for g in task.gold} <= train, domain  # golds are train entities' names
        assert set(task.gold) <= set(task.kb) and len(task.queries) >= 1000, domain
    with pytest.raises(ValueError, match="dev, test, calib"):
        nb.load_name_task("acronyms", "train")


def test_sibling_mining_does_not_depend_on_the_hash_seed():
    """Equally rare words once went in set order, so two processes could mine different siblings (and builds of
    the benchmark differed by a few KB names)."""
    import subprocess
    import sys

    code = (
        "from phrasezoo.data.name_benchmark import SiblingMiner\n"
        "pool = ['amber birch', 'amber cedar', 'birch delta', 'cedar ember', 'delta fjord', 'ember fjord']\n"
        "print(SiblingMiner(pool).sharing_words('amber birch cedar delta ember fjord', 2))"  # six words, all tied
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": seed},
                       capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2", "3", "4", "5")
    }  # fmt: skip
    assert len(outputs) == 1
