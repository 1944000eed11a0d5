"""Phrase mentions of raw documents for topic mining: spaCy noun chunks without lone pronouns (UCTopic section 4.3).

Each noun chunk loses its leading determiner or possessive ("the", "their", ...) as in the official tool, and is
dropped when what remains is a single pronoun ("it", "they") or has unbalanced parentheses. A mention keeps its
sentence and character span (the encoder reads it in context) and a *key*: the lower-cased lemmas of its words
("great burgers" -> ``great burger``), which groups the mentions of one phrase for CCL's majority vote and for the
per-phrase topic distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from tqdm.auto import tqdm

from phrasezoo.data.corpus.text import chunk_text
from phrasezoo.methods.uctopic.keys import LEADING_DETERMINERS, lemma_keys  # noqa: F401  (lemma_keys: part of this API)
from phrasezoo.resources import load_spacy


@dataclass(frozen=True)
class PhraseMention:
    """A phrase in its sentence: ``sentence[start:end] == text``; ``key`` groups mentions of the same phrase."""

    doc_id: int
    sentence: str
    start: int
    end: int
    text: str
    key: str

    @property
    def mention(self) -> tuple[str, tuple[int, int]]:
        """The ``(sentence, (start, end))`` input of a UCTopic encoder."""
        return self.sentence, (self.start, self.end)

    def to_dict(self) -> dict:
        return asdict(self)


#: A phrase extractor turns documents into mentions (injectable into :class:`~.miner.TopicMiner`).
PhraseExtractor = Callable[[Sequence[str]], list[PhraseMention]]


def chunk_mentions(sent, doc_id: int) -> list[PhraseMention]:
    """The noun-chunk mentions of one spaCy sentence (see the module docstring)."""
    mentions = []
    base = sent.start_char
    text = sent.text
    for chunk in sent.noun_chunks:
        tokens = list(chunk)
        while tokens and tokens[0].lower_ in LEADING_DETERMINERS and len(tokens) > 1:
            tokens = tokens[1:]
        while tokens and (tokens[0].is_punct or tokens[0].is_space):
            tokens = tokens[1:]
        while tokens and (tokens[-1].is_punct or tokens[-1].is_space):
            tokens = tokens[:-1]
        if not tokens or (len(tokens) == 1 and tokens[0].pos_ == "PRON"):
            continue
        start, end = tokens[0].idx - base, tokens[-1].idx + len(tokens[-1]) - base
        surface = text[start:end]
        if surface.count("(") != surface.count(")") or not any(c.isalnum() for c in surface):
            continue
        key = " ".join(t.lemma_.lower().strip() for t in tokens if t.lemma_.strip())
        mentions.append(PhraseMention(doc_id, text, start, end, surface, key))
    return mentions


class NounPhraseExtractor:
    """Documents -> noun-chunk mentions, with a spaCy pipeline that has a parser (``en_core_web_sm`` by default).

    Documents are cut into lines (and lines longer than ``max_chars`` at sentence ends) before parsing, so any
    document length works; the ``doc_id`` of a mention is the index of its document.
    """

    def __init__(self, spacy_model: str = "en_core_web_sm", batch_size: int = 64, max_chars: int = 20_000):
        self.spacy_model = spacy_model
        self.batch_size = batch_size
        self.max_chars = max_chars

    def __call__(self, documents: Sequence[str], progress: bool = True) -> list[PhraseMention]:
        nlp = load_spacy(self.spacy_model, disable=("ner",))
        pieces = [
            (doc_id, piece)
            for doc_id, document in enumerate(documents)
            for line in str(document).splitlines()
            if line.strip()
            for piece in chunk_text(" ".join(line.split()), self.max_chars)
        ]
        mentions: list[PhraseMention] = []
        texts = (piece for _, piece in pieces)
        bar = tqdm(total=len(pieces), desc="noun phrases", unit="para", disable=not progress)
        for (doc_id, _), doc in zip(pieces, nlp.pipe(texts, batch_size=self.batch_size)):
            for sent in doc.sents:
                mentions.extend(chunk_mentions(sent, doc_id))
            bar.update(1)
        bar.close()
        return mentions
