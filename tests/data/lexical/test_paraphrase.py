"""Paraphrasers: the offline rules on known examples, the factory, and the Hub code path with a tiny random T5."""

from __future__ import annotations

import pytest

from phrasezoo.data.lexical.paraphrase import (
    HubParaphraser,
    LexicalParaphraser,
    NoParaphraser,
    clean_paraphrases,
    get_paraphraser,
)
from phrasezoo.data.lexical.synonyms import SynonymTable

TABLE = SynonymTable(
    {
        "united states": ["United States of America", "US", "the States"],
        "new york": ["New York City"],
        "big": ["large"],
        "house": ["home"],
        "prime minister": ["premier"],
        "prime": ["premier"],
        "minister": ["curate"],
    }
)


@pytest.fixture
def offline() -> LexicalParaphraser:
    return LexicalParaphraser(TABLE, wordnet=None)


def test_offline_rules(offline):
    para = dict(zip(P := [
        "the United States", "the history of Alabama", "Israel's first president", "The New York Times",
        "the Department of Homeland Security", "in New York", "a big house", "left-wing politics", "prime minister",
    ], offline.paraphrase(P)))  # fmt: skip
    assert para["the United States"][:3] == ["United States of America", "US", "the States"]
    assert {"Alabama history", "Alabama's history", "history of Alabama"} <= set(para["the history of Alabama"])
    assert para["Israel's first president"] == ["the first president of Israel"]
    assert para["The New York Times"] == ["NYT", "New York Times"]  # "New York" inside a name is not replaced
    assert "DHS" in para["the Department of Homeland Security"]
    assert para["in New York"] == ["in New York City"]  # no acronym for "in New York"
    assert para["a big house"] == ["a large home", "big house"]
    assert para["left-wing politics"] == ["left wing politics"]
    assert para["prime minister"] == ["premier"]  # a multiword unit is not split into words
    for phrase, outs in para.items():
        assert phrase not in outs and all(o.strip() for o in outs)
    assert offline.paraphrase(list(para)) == list(para.values())  # deterministic


def test_offline_with_wordnet(wordnet):
    if wordnet is None:
        pytest.skip("WordNet is not installed (optional)")
    from phrasezoo.data.lexical.synonyms import SynonymTable

    table = SynonymTable.build(["united states"], vectors=None)
    outs = LexicalParaphraser(table, wordnet=wordnet).paraphrase(["the United States"])[0]
    assert "United States of America" in outs and "US" in outs


def test_clean_and_factory():
    assert clean_paraphrases("New York", ["new york", " NYC ", "NYC", "", "New  York City"]) == ["NYC", "New York City"]
    assert get_paraphraser("none").paraphrase(["a", "b"]) == [[], []]
    assert isinstance(get_paraphraser(None), NoParaphraser)
    assert isinstance(get_paraphraser("offline", synonyms=TABLE, wordnet=None), LexicalParaphraser)
    hub = get_paraphraser("someone/some-paraphraser")
    assert isinstance(hub, HubParaphraser) and hub.model is None  # nothing is loaded before the first call
    custom = NoParaphraser()
    assert get_paraphraser(custom) is custom
    with pytest.raises(TypeError):
        get_paraphraser(42)


def tiny_t5():
    """A randomly initialised 1-layer T5 and a word-level tokenizer built in memory (no download)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    words = ["<pad>", "</s>", "<unk>", "paraphrase:", "the", "new", "york", "times", "city", "big", "house", "a"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(words), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
    )  # fmt: skip
    return T5ForConditionalGeneration(config), tokenizer


def test_hub_paraphraser_code_path():
    model, tokenizer = tiny_t5()
    hub = HubParaphraser(
        "tiny-random-t5", model=model, tokenizer=tokenizer, device="cpu", batch_size=2, max_new_tokens=4,
        num_return_sequences=3, progress=False,
    )  # fmt: skip
    phrases = ["the new york times", "a big house", "city"]
    out = hub.paraphrase(phrases)
    assert len(out) == len(phrases)
    for phrase, paraphrases in zip(phrases, out):
        assert isinstance(paraphrases, list) and len(paraphrases) <= 3
        assert all(isinstance(p, str) and p.strip() and p.lower() != phrase for p in paraphrases)
    assert hub.paraphrase(phrases) == out  # beam search: deterministic
    assert hub.paraphrase([]) == []
