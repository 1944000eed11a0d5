"""Phrase-BERT's training sets on hand-made inputs: the no-overlap rule, paraphrases, corruptions, masked contexts."""

from __future__ import annotations

import random

import pytest

from phrasezoo.data.lexical.paraphrase import (
    ConstrainedHubParaphraser,
    DiverseLexicalParaphraser,
    content_tokens,
    meets_no_overlap_rule,
    shares_content_token,
)
from phrasezoo.data.lexical.synonyms import SynonymTable
from phrasezoo.methods.phrase_bert.data import (
    build_phrase_bert_data,
    context_window,
    corrupt_phrase,
    get_diverse_paraphraser,
    make_context_triples,
    make_paraphrase_triples,
    mask_phrase,
    paraphrase_stats,
)

pytestmark = pytest.mark.usefixtures("fresh_cache")  # every test starts from an empty cache

TABLE = SynonymTable(
    {
        "complete": ["full", "complete"],
        "control": ["controls", "command", "power"],
        "fluid": ["liquid"],
        "prime minister": ["premier", "PM"],
        "house": ["home", "abode"],
        "big": ["large"],
        "united states": ["United States of America", "USA"],
        "army": ["ground forces"],
    }
)

TEXT = """The old army marched to the river. The old army crossed the river at night.
A big house stood near the river. The big house belonged to the prime minister.
The prime minister lived in the big house for years. Later the old army burned the big house."""


def test_content_tokens_ignore_stop_words_and_compare_stems():
    assert content_tokens("the controls of the army") == {"control", "armi"}
    assert shares_content_token("complete control", "full controls")  # same stem
    assert not shares_content_token("the war", "the warfare of the")  # only stop words in common
    assert meets_no_overlap_rule("complete control", "full command")
    assert not meets_no_overlap_rule("complete control", "Complete Control")
    assert not meets_no_overlap_rule("complete control", "  ")


def test_offline_paraphrases_replace_every_content_word_without_overlap():
    paraphraser = DiverseLexicalParaphraser(TABLE, num_candidates=3, seed=0, progress=False)
    out = dict(
        zip(
            P := ["complete control", "the prime minister", "a big house", "a house", "green house"],
            paraphraser.paraphrase(P),
        )
    )
    assert out["complete control"] and all(
        meets_no_overlap_rule("complete control", p) for p in out["complete control"]
    )
    assert set(out["complete control"]) <= {"full command", "full power"}  # "controls" and "complete" are banned
    assert set(out["the prime minister"]) <= {"the premier", "PM", "the PM"} and out["the prime minister"]
    assert {"a large home", "a large abode"} >= set(out["a big house"])
    assert out["a house"] and set(out["a house"]) <= {"a home", "an abode"}  # article agrees with the new word
    assert out["green house"] == []  # "green" has no synonym: no paraphrase is made up
    assert paraphraser.paraphrase(P) == list(out.values())  # seeded per phrase


def test_corrupt_phrase_replaces_one_content_word():
    rng = random.Random(3)
    for _ in range(20):
        corrupted = corrupt_phrase("complete control of the army", ["fluid", "house", "control"], rng)
        words = corrupted.split()
        original = ["complete", "control", "of", "the", "army"]
        assert len(words) == len(original)
        changed = [i for i, (a, b) in enumerate(zip(words, original)) if a != b]
        assert len(changed) == 1 and original[changed[0]] in {"complete", "control", "army"}
        assert words[changed[0]] in {"fluid", "house"}  # "control" would overlap with the phrase
    assert corrupt_phrase("of the", ["fluid"], rng) is None


class ListParaphraser:
    """Returns fixed candidates, some of which break the rule (as a real model's would)."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = 0

    def paraphrase(self, phrases):
        self.calls += 1
        return [list(self.answers.get(p, [])) for p in phrases]


def test_paraphrase_triples_obey_the_rule_and_are_counted():
    answers = {
        "complete control": ["complete command", "full command"],  # the first one overlaps
        "big house": ["large home"],
        "green house": ["green home"],  # only overlapping candidates
    }
    corrupted_answers = {f"{w} control": [f"{w}-free power"] for w in ("fluid", "house")}
    corrupted_answers.update({f"{w} house": ["liquid abode"] for w in ("fluid", "control")})
    corrupted_answers.update({f"big {w}": ["liquid abode"] for w in ("fluid", "control")})
    corrupted_answers.update({f"complete {w}": ["entire liquid"] for w in ("fluid", "house")})
    paraphraser = ListParaphraser({**answers, **corrupted_answers})
    table = make_paraphrase_triples(
        ["complete control", "big house", "green house"], paraphraser, ["fluid", "house", "control"], seed=1
    )
    rows = {r["anchor"]: r for r in table}
    assert rows["complete control"]["positives"] == ["full command"]
    assert rows["green house"]["positive"] == "" and rows["green house"]["negative"] == ""
    for row in table:
        if row["positive"] and row["negative"]:
            assert meets_no_overlap_rule(row["anchor"], row["positive"])
            assert meets_no_overlap_rule(row["anchor"], row["negative"])
            assert meets_no_overlap_rule(row["corrupted"], row["negative"])
    stats = paraphrase_stats(table)
    assert stats["anchors"] == 3 and stats["paraphrase candidates"] == 4
    assert stats["candidates meeting the no-overlap rule"] == 2 and stats["anchors with a positive"] == 2


def test_constrained_hub_paraphraser_never_emits_banned_words():
    from tests.data.lexical.test_paraphrase import tiny_t5

    model, tokenizer = tiny_t5()
    hub = ConstrainedHubParaphraser(
        "tiny", model=model, tokenizer=tokenizer, device="cpu", max_new_tokens=6, num_return_sequences=4, progress=False
    )
    banned = hub.banned_token_ids("the new york times")
    assert [tokenizer.convert_tokens_to_ids("york")] in banned and [
        tokenizer.convert_tokens_to_ids("the")
    ] not in banned
    out = hub.paraphrase(["the new york times", "a big house"])
    assert len(out) == 2
    for phrase, candidates in zip(["the new york times", "a big house"], out):
        for candidate in candidates:
            assert not shares_content_token(phrase, candidate, stem=False)
    assert hub.paraphrase(["a big house"]) == out[1:]  # seeded per phrase
    assert isinstance(get_diverse_paraphraser("some/hub-model"), ConstrainedHubParaphraser)
    with pytest.raises(ValueError, match="SynonymTable"):
        get_diverse_paraphraser("offline")


def test_mask_phrase_hides_every_occurrence():
    text = "The Prime Minister met the prime  minister of Spain; prime ministers agree."
    masked = mask_phrase(text, "prime minister", "[MASK]", span=(4, 18))
    assert masked == "The [MASK] met the [MASK] of Spain; prime ministers agree."
    assert mask_phrase("an army of ants", "army", "<mask>") == "an <mask> of ants"
    assert mask_phrase("the armyworm", "army", "<mask>") == "the armyworm"


def test_context_window_grows_within_the_paragraph_and_crops_long_sentences():
    sentences = ["one two three.", "four five six seven.", "eight nine.", "other paragraph here."]
    same_paragraph = [True, True, False]
    text, (start, end) = context_window(sentences, 1, (0, 4), same_paragraph, max_words=9)
    assert text == "one two three. four five six seven. eight nine."
    assert text[start:end] == "four"
    text, _ = context_window(sentences, 1, (0, 4), same_paragraph, max_words=5)
    assert text == "four five six seven."  # a neighbour is added only whole
    long = " ".join(f"w{i}" for i in range(300))
    start = long.index("w150")
    text, (s, e) = context_window([long], 0, (start, start + 4), [], max_words=120)
    assert len(text.split()) == 120 and text[s:e] == "w150"
    assert abs(text.split().index("w150") - 60) <= 1


@pytest.fixture
def tiny_corpus(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text(TEXT + "\n")
    return str(path)


def test_context_triples_from_a_parsed_corpus(tiny_corpus):
    from phrasezoo.data import parse_corpus

    sentences = parse_corpus(tiny_corpus, n_process=1, progress=False)
    phrases = ["the big house", "the old army", "the prime minister", "the river"]
    table = make_context_triples(sentences, phrases, "[MASK]", max_words=12, seed=0, progress=False)
    assert len(table) >= 3
    for row in table:
        assert "[MASK]" in row["context"]
        assert row["phrase"].lower() not in row["context"].lower()
        assert row["phrase"].lower() not in row["negative_context"].lower()
        assert row["negative_row"] != row["row"] and len(row["context"].split()) <= 12


class ConstantParaphraser:
    """Paraphrases everything as the same unrelated words: every anchor then yields a triple (plumbing check)."""

    def paraphrase(self, phrases):
        return [["lorem ipsum"] for _ in phrases]


def test_build_phrase_bert_data_end_to_end(tiny_corpus):
    data = build_phrase_bert_data(
        tiny_corpus, min_freq=2, paraphraser=ConstantParaphraser(), n_process=1, progress=False, mask_token="<mask>"
    )
    anchors = data.stats["anchors"]
    assert anchors >= 3 and "the big house" in data.paraphrase["anchor"]
    assert data.stats["paraphrase triples (positive and negative meet the rule)"] == anchors
    assert len(data.paraphrase_triples()) == anchors
    assert 1 <= data.stats["context triples"] == len(data.context) <= anchors  # a negative context must lack the phrase
    assert all("<mask>" in context for _, context, _ in data.context_triples())
    only_context = build_phrase_bert_data(tiny_corpus, objectives=["context"], n_process=1, progress=False)
    assert only_context.paraphrase is None and only_context.paraphrase_triples() == []
    with pytest.raises(ValueError, match="objectives"):
        build_phrase_bert_data(tiny_corpus, objectives=["words"], progress=False)


def test_pivot_and_offline_paraphrasers_chain(monkeypatch: pytest.MonkeyPatch):
    """``"pivot+offline"`` merges the pivot table's candidates (first) with the offline substitutions per phrase."""
    from phrasezoo.data.lexical import pivot
    from phrasezoo.methods.phrase_bert import data as phrase_bert_data

    class FakePivot:
        cache_key = "fake-pivot"

        def __init__(self, progress: bool = True) -> None:
            pass

        def paraphrase(self, phrases: list[str]) -> list[list[str]]:
            return [["chief of government"] if p == "prime minister" else [] for p in phrases]

    monkeypatch.setattr(phrase_bert_data, "PivotParaphraser", FakePivot)
    chain = get_diverse_paraphraser("pivot+offline", synonyms=TABLE, progress=False)
    assert isinstance(chain, pivot.ChainParaphraser)
    assert [type(p) for p in chain.paraphrasers] == [FakePivot, DiverseLexicalParaphraser]
    merged = chain.paraphrase(["prime minister", "big house"])
    assert merged[0][0] == "chief of government" and len(merged[0]) > 1  # the offline "premier"/"PM" follow
    assert merged[1] == DiverseLexicalParaphraser(TABLE, progress=False).paraphrase(["big house"])[0]
    assert chain.cache_key.startswith("chain:") and "fake-pivot" in chain.cache_key
