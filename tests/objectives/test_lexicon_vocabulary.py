"""WordNet lemma vocabularies for the lexicon term."""

from __future__ import annotations

import pytest

from phrasezoo.objectives.lexicon_vocabulary import lexicon_strings, wordnet_vocabulary


class _Synset:
    def __init__(self, *names):
        self._names = list(names)

    def lemma_names(self):
        return self._names


class _WordNet:
    def __init__(self, by_pos):
        self.by_pos = by_pos

    def all_synsets(self, pos):
        return [_Synset(*names) for names in self.by_pos.get(pos, [])]


FAKE = _WordNet(
    {
        "n": [["double_bass", "contrabass", "bass_fiddle"], ["3-D", "A-one"], ["a_b_c_d"], ["Yangtze", "Chang_Jiang"]],
        "a": [["well-known", "famous"], ["o'clock"]],
        "v": [["look_up"]],
    }
)


def test_wordnet_vocabulary_reads_lemmas_as_text_and_filters_shapes():
    words = wordnet_vocabulary(FAKE)
    assert words == sorted(words)
    assert {"double bass", "contrabass", "Chang Jiang", "well-known", "o'clock", "look up"} <= set(words)
    assert "3-D" not in words and "A-one" in words  # digits stay out, hyphens between letters are kept
    assert "a b c d" not in words  # four words > max_words
    assert "look up" not in wordnet_vocabulary(FAKE, pos="na")
    with pytest.raises(ValueError, match="parts of speech"):
        wordnet_vocabulary(FAKE, pos="x")


def test_lexicon_strings_need_known_sources_and_wordnet():
    assert lexicon_strings(["wordnet"], wordnet=FAKE) == wordnet_vocabulary(FAKE)
    with pytest.raises(ValueError, match="Unknown or empty"):
        lexicon_strings(["glove"], wordnet=FAKE)
    with pytest.raises(ValueError, match="needs WordNet"):
        lexicon_strings(["wordnet"], wordnet=None)
