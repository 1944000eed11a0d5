"""Bilingual-pivot paraphrases over the real Debian dict-de-en dictionary."""

from __future__ import annotations

import gzip

import pytest

from phrasezoo.data.lexical.paraphrase import Paraphraser
from phrasezoo.data.lexical.pivot import (
    DICT_PATH,
    PivotParaphraser,
    build_pivot_table,
    clean_english,
    english_phrases,
    german_terms,
    is_surface_variant,
    iter_dictionary,
    load_pivot_table,
)
from phrasezoo.resources import MissingResourceError

pytestmark = pytest.mark.skipif(
    not DICT_PATH.exists(), reason="Debian dict-de-en is not installed (optional): apt-get install dict-de-en"
)

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# German translations whose real entries make the small dictionary below
_GERMAN = ("Auto {n}", "Mobiltelefon", "den Löffel abgeben", "Farbe {f}", "Bügelechtheit", "Aalleiter")


def _b64(n: int) -> str:
    out = ""
    while True:
        out = _B64[n % 64] + out
        n //= 64
        if n == 0:
            return out


@pytest.fixture(scope="module")
def small_dictionary(tmp_path_factory):
    """A dictd file + index holding the real entries (verbatim) whose German text names one of ``_GERMAN``."""
    with gzip.open(DICT_PATH) as handle:
        raw = handle.read()
    index = DICT_PATH.with_name("english-german.index")
    blocks = []
    for line in index.read_text(encoding="utf8").splitlines():
        key, off, length = line.split("\t")
        start = end = 0
        for c in off:
            start = start * 64 + _B64.index(c)
        for c in length:
            end = end * 64 + _B64.index(c)
        block = raw[start : start + end]
        if any(g.encode() in block for g in _GERMAN):
            blocks.append((key, block))
    folder = tmp_path_factory.mktemp("dict")
    data, rows, offset = bytearray(), [], 0
    for key, block in blocks:
        rows.append(f"{key}\t{_b64(offset)}\t{_b64(len(block))}")
        data += block
        offset += len(block)
    (folder / "small.dict").write_bytes(bytes(data))
    (folder / "small.index").write_text("\n".join(rows) + "\n", encoding="utf8")
    return folder / "small.dict"


def test_entries_are_read_with_their_wrapped_english_and_german(small_dictionary):
    entries = list(iter_dictionary(small_dictionary))
    assert ("car", "Auto {n}; Wagen {m}; Kraftwagen {m} [auto]") in entries or any(
        e == "car" and "Auto {n}" in g for e, g in entries
    )
    # dictfmt cuts a headword at its first bracket: the rest is on the note line and must stay with the English
    assert any(e.startswith("colour [Br.]/color [Am.] fastness") for e, _ in entries)


def test_english_and_german_cleaning():
    assert clean_english("to kick the bucket") == "kick the bucket"
    assert clean_english("eel ladder (water engineering)") == "eel ladder"
    assert clean_english("colour [Br.]/color [Am.] fastness to hot pressing (dye)") is None  # alternatives
    assert clean_english("to give sth. to sb.") is None  # placeholders
    assert clean_english("How are you doing apart from that?") is None
    assert clean_english("'Death Fugue'") == "Death Fugue"
    assert clean_english("one two three four five six seven", max_words=6) is None
    assert english_phrases("to kick the bucket, to bite the dust") == ["kick the bucket", "bite the dust"]
    assert german_terms("Aalmolche {pl}; Fischmolche {pl} (Amphiuma) (zoologische Gattung) [zool.] <Aalmolch>") == [
        "Aalmolche",
        "Fischmolche",
    ]
    assert german_terms("abfahren {vi; vt}; losfahren | fuhr ab") == ["abfahren", "losfahren", "fuhr ab"]


def test_surface_variants_are_spelling_inflection_or_form_only():
    for a, b in [
        ("colour", "color"),
        ("anodise", "anodize"),
        ("eel ladder", "eel ladders"),
        ("travelled", "traveled"),
        ("e-mail", "email"),
        ("the centre", "center"),
        ("cell phone", "cellphone"),
        ("judgement", "judgment"),
    ]:
        assert is_surface_variant(a, b), (a, b)
    for a, b in [("car", "automobile"), ("kick the bucket", "bite the dust"), ("mobile phone", "cellphone")]:
        assert not is_surface_variant(a, b), (a, b)


def test_small_table_pairs_share_a_german_translation_and_are_scored(small_dictionary):
    table = build_pivot_table(small_dictionary, progress=False)
    assert table.stats["entries"] == len(list(iter_dictionary(small_dictionary)))
    assert {"auto", "automobile"} <= set(table.paraphrases("car"))
    assert "bite the dust" in table.paraphrases("kick the bucket")
    assert "color" not in table.paraphrases("colour")  # spelling variant filtered
    assert table.stats["surface_variant_pairs"] > 0
    for pair in table.pairs:
        assert 0 < pair.score <= 1 and pair.shared >= 1 and pair.phrase != pair.paraphrase
    assert [p.score for p in table.pairs] == sorted((p.score for p in table.pairs), reverse=True)
    unfiltered = build_pivot_table(small_dictionary, filter_variants=False, progress=False)
    assert "color" in unfiltered.paraphrases("colour") and len(unfiltered) > len(table)


def test_table_is_cached_and_reloads_identically(small_dictionary, isolated_cache):
    built = load_pivot_table(small_dictionary, progress=False)
    files = sorted(p.name for p in (isolated_cache / "pivot").iterdir())
    assert len(files) == 2 and files[0].endswith(".json") and files[1].endswith(".tsv.gz")
    again = load_pivot_table(small_dictionary, progress=False)
    assert again.pairs == built.pairs and again.stats == built.stats


def test_paraphraser_follows_the_protocol_and_filters_benchmark_items(small_dictionary, benchmarks_dir):
    table = build_pivot_table(small_dictionary, progress=False)
    strict = PivotParaphraser(table=table, benchmarks_dir=benchmarks_dir, progress=False)
    assert isinstance(strict, Paraphraser)
    out = strict.paraphrase(["kick the bucket", "qzxv"])
    assert "bite the dust" in out[0] and out[1] == []
    # "car" is a Turney/BiRD word: strict mode removes its pairs, multiword mode keeps them
    assert strict.paraphrase(["car"]) == [[]] and strict.filter_report.dropped_per_benchmark["turney"] > 0
    lenient = PivotParaphraser(table=table, benchmarks_dir=benchmarks_dir, filter_mode="multiword", progress=False)
    assert "automobile" in lenient.paraphrase(["car"])[0]
    assert lenient.filter_report.dropped < strict.filter_report.dropped
    assert strict.cache_key != lenient.cache_key
    unfiltered = PivotParaphraser(table=table, exclude_benchmarks=False, max_paraphrases=2, progress=False)
    assert len(unfiltered.paraphrase(["car"])[0]) == 2
    # a phrase missing from the table is retried without its article, which goes back on lower-case paraphrases
    with_article = unfiltered.paraphrase(["The car"])[0]
    assert with_article and all(p.startswith("The ") for p in with_article)


def test_missing_dictionary_names_the_debian_package(tmp_path):
    with pytest.raises(MissingResourceError, match="apt-get install dict-de-en"):
        load_pivot_table(tmp_path / "english-german.dict.dz")


def test_chain_merges_paraphrasers_in_order(small_dictionary):
    from phrasezoo.data.lexical.pivot import ChainParaphraser

    table = build_pivot_table(small_dictionary, progress=False)
    first = PivotParaphraser(table=table, exclude_benchmarks=False, max_paraphrases=1, progress=False)
    second = PivotParaphraser(table=table, exclude_benchmarks=False, max_paraphrases=3, progress=False)
    chain = ChainParaphraser([first, second], max_paraphrases=3)
    assert chain.paraphrase(["car"]) == [second.paraphrase(["car"])[0]]  # first's output is second's first
    assert chain.cache_key.startswith("chain:3:pivot:")


@pytest.mark.slow
def test_full_dictionary_gives_hundreds_of_thousands_of_pivot_pairs(benchmarks_dir, monkeypatch):
    from phrasezoo.data.lexical.paraphrase import get_paraphraser
    from phrasezoo.data.lexical.pivot import ChainParaphraser

    table = load_pivot_table(progress=False)
    stats = table.stats
    assert stats["entries"] == 542_820
    assert stats["pivot_groups"] > 150_000 and stats["pairs"] > 700_000 and stats["multiword_pairs"] > 300_000
    assert {"auto", "automobile"} <= set(table.paraphrases("car")[:5])
    # recipes name it: paraphraser: pivot (cached table, benchmark items removed) or offline+pivot
    monkeypatch.setenv("PHRASEZOO_BENCHMARKS", str(benchmarks_dir))
    pivot = get_paraphraser("pivot", progress=False)
    assert isinstance(pivot, PivotParaphraser) and pivot.filter_report.dropped > 100_000
    assert "bite the dust" in pivot.paraphrase(["kick the bucket"])[0]
    chained = get_paraphraser("none+pivot", progress=False)
    assert isinstance(chained, ChainParaphraser) and chained.paraphrase(["kick the bucket"]) == pivot.paraphrase(
        ["kick the bucket"]
    )
