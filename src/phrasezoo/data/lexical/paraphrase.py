"""Phrase-level paraphrasers (PEARL's phrase-level augmentation, SLICE's queries, Phrase-BERT's diverse paraphrases;
computed once per phrase table, sampled later).

Every paraphraser follows one protocol, :class:`Paraphraser`: ``paraphrase(phrases: list[str]) -> list[list[str]]``
(one list per input, best first, never containing the input itself). The implementations here:

* :class:`HubParaphraser`: a ``transformers`` seq2seq model, e.g. Parrot (``prithivida/parrot_paraphraser_on_T5``,
  PEARL's paraphraser), loaded lazily, batched beam search. Needs the Hub (or a local folder).
* :class:`LexicalParaphraser`: the offline default, rules over WordNet and the :class:`SynonymTable`
  (see its docstring for the rules and their order).
* lexically diverse ones, whose paraphrases share no content word with the phrase (the no-overlap rule,
  :func:`shares_content_token`): :class:`ConstrainedHubParaphraser` (a Hub model sampled with the phrase's content
  words banned) and :class:`DiverseLexicalParaphraser` (every content word replaced from the synonym table).

The bilingual-pivot paraphraser and the chain of several are in :mod:`phrasezoo.data.lexical.pivot`.

:func:`get_paraphraser` turns a spec (``"offline"``, ``"none"``, a Hub id or path, or an object) into one.
"""

from __future__ import annotations

import logging
import random
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import torch
from tqdm.auto import tqdm

from .. import cache_keys
from . import pivot
from .synonyms import STOP_WORDS, SynonymTable, _stemmer
from .wordnet import get_wordnet

logger = logging.getLogger(__name__)

DEFAULT_HUB_PARAPHRASER = "prithivida/parrot_paraphraser_on_T5"
_TOKEN = re.compile(r"[^\W_]+")
_ARTICLES = {"a", "an"}


@runtime_checkable
class Paraphraser(Protocol):
    """Anything with ``paraphrase(phrases) -> list[list[str]]`` (one list of paraphrases per input phrase)."""

    def paraphrase(self, phrases: list[str]) -> list[list[str]]: ...


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def clean_paraphrases(phrase: str, candidates: Sequence[str], limit: int | None = None) -> list[str]:
    """Strip, drop empties and the input itself (case/space-insensitive), de-duplicate keeping order, cut to limit."""
    seen = {_norm(phrase)}
    out: list[str] = []
    for candidate in candidates:
        candidate = " ".join(candidate.split())
        key = _norm(candidate)
        if not candidate or key in seen:
            continue
        seen.add(key)
        out.append(candidate)
        if limit is not None and len(out) >= limit:
            break
    return out


class NoParaphraser:
    """A paraphraser that never finds any (phrase-level augmentation then falls back to another kind)."""

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        return [[] for _ in phrases]


# ------------------------------------------------------------------------------------ the no-overlap rule
@lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    stemmer = _stemmer()
    return stemmer.stem(token) if stemmer is not None else token


def content_tokens(text: str, stem: bool = True) -> frozenset[str]:
    """Lower-cased word tokens of ``text`` that are not stop words (Porter-stemmed unless ``stem=False``)."""
    tokens = (t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS)
    return frozenset(_stem(t) if stem else t for t in tokens)


def shares_content_token(a: str, b: str, stem: bool = True) -> bool:
    """Whether two texts share a content token: Phrase-BERT's rule for a lexically diverse paraphrase, stricter
    than its token identity (Porter stems: "control" and "controls" count as shared)."""
    return bool(content_tokens(a, stem) & content_tokens(b, stem))


def meets_no_overlap_rule(anchor: str, candidate: str) -> bool:
    """A usable paraphrase: not empty, not the anchor, and sharing no content token with it."""
    candidate = " ".join(candidate.split())
    return bool(candidate) and candidate.lower() != anchor.lower() and not shares_content_token(anchor, candidate)


# ----------------------------------------------------------------------------------------------------------- Hub
class HubParaphraser:
    """Paraphrases from a ``transformers`` seq2seq model (Parrot/T5 style), loaded on first use.

    Args:
        model_id: Hub id or local folder (default: Parrot, the paraphraser of the PEARL paper).
        prefix: text put before each phrase (Parrot expects ``"paraphrase: "``).
        num_return_sequences, num_beams, max_new_tokens: beam search settings (deterministic decoding).
        batch_size: phrases per ``generate`` call.
        max_paraphrases: cap per phrase after cleaning (identical outputs and the input itself are removed).
        device: ``"cpu"``, ``"cuda"``...; default: CUDA when available.
        model, tokenizer: already-built objects (skip loading), e.g. for tests or a custom model.
        generation_kwargs: extra arguments for ``model.generate``.
    """

    def __init__(
        self,
        model_id: str = DEFAULT_HUB_PARAPHRASER,
        prefix: str = "paraphrase: ",
        num_return_sequences: int = 5,
        num_beams: int = 5,
        max_new_tokens: int = 32,
        batch_size: int = 32,
        max_paraphrases: int = 5,
        device: str | None = None,
        model=None,
        tokenizer=None,
        generation_kwargs: dict | None = None,
        progress: bool = True,
    ) -> None:
        self.model_id = model_id
        self.prefix = prefix
        self.num_return_sequences = num_return_sequences
        self.num_beams = max(num_beams, num_return_sequences)
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.max_paraphrases = max_paraphrases
        self.device = device
        self.model = model
        self.tokenizer = tokenizer
        self.generation_kwargs = dict(generation_kwargs or {})
        self.progress = progress
        self._ready = False

    @property
    def cache_key(self) -> str:
        """Identifies the outputs of this paraphraser in dataset cache keys."""
        return (
            f"hub:{self.model_id}:{self.prefix}:{self.num_return_sequences}:{self.num_beams}:{self.max_new_tokens}"
            f":{self.max_paraphrases}:{sorted(self.generation_kwargs.items())}"
        )

    def _ensure_loaded(self) -> None:
        """Load whatever was not given (tokenizer, model), pick the device, switch to eval mode (once)."""
        if self._ready:
            return
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer  # lazy: seq2seq models, for Hub paraphrasers

        if self.tokenizer is None:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_id)
        if self.model is None:
            self.model = AutoModelForSeq2SeqLM.from_pretrained(self.model_id)
        if self.device is None:
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model.to(self.device).eval()
        self._ready = True

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        """Beam-search paraphrases of each phrase, cleaned (see :func:`clean_paraphrases`)."""
        phrases = list(phrases)
        if not phrases:
            return []
        self._ensure_loaded()
        out: list[list[str]] = []
        batches = range(0, len(phrases), self.batch_size)
        for lo in tqdm(batches, desc="paraphrasing", disable=not self.progress or len(batches) < 2):
            batch = phrases[lo : lo + self.batch_size]
            encoded = self.tokenizer(
                [self.prefix + p for p in batch], padding=True, truncation=True, max_length=64, return_tensors="pt"
            ).to(self.device)
            with torch.inference_mode():
                generated = self.model.generate(
                    **encoded,
                    num_beams=self.num_beams,
                    num_return_sequences=self.num_return_sequences,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    **self.generation_kwargs,
                )
            texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
            n = self.num_return_sequences
            for i, phrase in enumerate(batch):
                out.append(clean_paraphrases(phrase, texts[i * n : (i + 1) * n], self.max_paraphrases))
        return out


class ConstrainedHubParaphraser(HubParaphraser):
    """Paraphrases sampled from a ``transformers`` seq2seq model with the phrase's content words banned.

    Phrase-BERT's paper decodes its paraphraser with nucleus sampling and lexical constraints that forbid the anchor's
    non-stop-word tokens; here the constraint is ``bad_words_ids``: the token ids of every content word of the
    phrase, in lower-case, capitalised and upper-case spellings, with and without a leading space. Loading is
    :class:`HubParaphraser`'s (on first use); one ``generate`` call per phrase (the banned words differ per phrase),
    seeded per phrase.

    Args:
        model_id: Hub id or local folder of a seq2seq paraphraser (default: Parrot T5, prefix ``"paraphrase: "``).
        top_p: nucleus mass. seed: the per-phrase sampling seed's base.
        hub_options: :class:`HubParaphraser`'s (``prefix``, ``num_return_sequences``: samples per phrase,
            ``max_new_tokens``, ``device``, ``model``/``tokenizer``: ready objects, ``progress``; its beam-search
            options are not used here).
    """

    def __init__(self, model_id: str = DEFAULT_HUB_PARAPHRASER, *, top_p: float = 0.8, seed: int = 0, **hub_options):
        super().__init__(model_id=model_id, **hub_options)
        self.top_p = top_p
        self.seed = seed

    @property
    def cache_key(self) -> str:
        return (
            f"constrained-hub:{self.model_id}:{self.prefix}:{self.top_p}:{self.num_return_sequences}:"
            f"{self.max_new_tokens}:{self.seed}"
        )

    def banned_token_ids(self, phrase: str) -> list[list[int]]:
        """Token-id sequences of the phrase's content words in the spellings a decoder could produce."""
        words = {w for w in _TOKEN.findall(phrase) if w.lower() not in STOP_WORDS}
        spellings = {s for w in words for s in (w, w.lower(), w.capitalize(), w.upper())}
        banned: set[tuple[int, ...]] = set()
        for spelling in spellings:
            for text in (spelling, " " + spelling):
                ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
                ids = [i for i in ids if i != self.tokenizer.unk_token_id]
                if ids:
                    banned.add(tuple(ids))
        return [list(ids) for ids in sorted(banned)]

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        phrases = list(phrases)
        if not phrases:
            return []
        self._ensure_loaded()
        out = []
        for phrase in tqdm(phrases, desc="paraphrasing (hub)", disable=not self.progress or len(phrases) < 50):
            encoded = self.tokenizer([self.prefix + phrase], return_tensors="pt").to(self.device)
            banned = self.banned_token_ids(phrase)
            torch.manual_seed(phrase_seed(self.seed, phrase))
            with torch.inference_mode():
                generated = self.model.generate(
                    **encoded,
                    do_sample=True,
                    top_p=self.top_p,
                    top_k=0,
                    num_return_sequences=self.num_return_sequences,
                    max_new_tokens=self.max_new_tokens,
                    bad_words_ids=banned or None,
                )
            texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
            out.append(_distinct(phrase, [" ".join(t.split()) for t in texts if t.strip()], len(texts)))
        return out


# ------------------------------------------------------------------------------------------------------- offline
_DETERMINERS = ("the", "a", "an")
_PREPOSITIONS = frozenset(
    {
        "in", "on", "at", "of", "for", "with", "from", "to", "by", "into", "onto", "over", "under", "about", "after",
        "before", "between", "during", "against", "among", "through", "within", "without", "across", "along",
        "around", "behind", "beyond", "near", "since", "toward", "towards", "upon",
    }
)  # fmt: skip
_NAME_FUNCTION_WORDS = frozenset({"of", "and", "for", "the", "de", "la", "&", "on", "in"})
_POSSESSIVE = re.compile(r"^(.+?)(?:'s|’s|s'|s’)$")
_ALPHA_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


def _is_name_word(word: str) -> bool:
    return word[:1].isupper() and any(c.isalpha() for c in word)


class LexicalParaphraser:
    """Offline rule-based paraphraser over WordNet and a :class:`SynonymTable` (deterministic, no model).

    Rules, in the order their outputs are listed (duplicates, the input itself and empty strings removed, at most
    ``max_paraphrases`` kept):

    1. **whole-phrase synonyms**: the phrase without its leading article looked up in the table, which holds WordNet
       multiword lemmas ("the United States" -> "United States of America", "US", "USA"; "prime minister" ->
       "premier"). The article is kept for lower-case synonyms and dropped for names.
    2. **multiword part synonyms**: an inner n-gram (2-3 words) replaced by a table entry ("in New York" -> "in New
       York City"), unless the rest of the phrase holds other name words (then the n-gram is part of a longer
       name: "New York" in "The New York Times").
    3. **"X of Y" <-> "Y X" / possessives**: "the history of Alabama" -> "Alabama history", "Alabama's history";
       "Israel's first president" -> "the first president of Israel". A leading preposition is kept ("in the
       history of Alabama" -> "in Alabama history"). Only when both sides are short (at most 3 words) and, with
       WordNet, X's last word is a noun.
    4. **several-word synonym substitution**: the replaceable content words (lower-case, not stop words, not inside
       a multiword table entry, with one-word lower-case synonyms; at most ``max_substituted_words``, and at least
       two, since one is the token-level augmentation) replaced at once, rotating through the synonyms to give up to
       ``max_substitutions`` variants.
    5. **acronym** of a capitalised multiword name (after an optional article), inner function words skipped ("The
       New York Times" -> "NYT", "Department of Homeland Security" -> "DHS").
    6. **article drop** ("the task" -> "task") and **hyphen/space variants** ("left-wing" -> "left wing").

    Quality caveat: rules 3 and 5 can produce odd or ambiguous strings ("US" also means other things; "Y X" can be
    clumsy), in the spirit of the paper's "The Times" example; synonyms inherit the table's noise.
    """

    def __init__(
        self,
        synonyms: SynonymTable | None = None,
        wordnet: object | str | None = "auto",
        max_paraphrases: int = 5,
        max_substitutions: int = 2,
        max_substituted_words: int = 3,
        progress: bool = True,
    ) -> None:
        self.synonyms = synonyms if synonyms is not None else SynonymTable()
        self.wordnet = get_wordnet() if wordnet == "auto" else wordnet
        self.max_paraphrases = max_paraphrases
        self.max_substitutions = max_substitutions
        self.max_substituted_words = max_substituted_words
        self.progress = progress
        self._noun_cache: dict[str, bool] = {}

    @property
    def cache_key(self) -> str:
        """Identifies the outputs of this paraphraser in dataset cache keys."""
        return (
            f"lexical:v1:{self.max_paraphrases}:{self.max_substitutions}:{self.max_substituted_words}:{self.wordnet is not None}:"
            f"{sorted(self.synonyms.params.items())}"
        )

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        """Paraphrases of each phrase by the rules of the class docstring."""
        phrases = list(phrases)
        bar = tqdm(phrases, desc="paraphrasing", disable=not self.progress or len(phrases) < 1000)
        return [clean_paraphrases(p, self.candidates(p), self.max_paraphrases) for p in bar]

    # ---------------------------------------------------------------------------------------------------- rules
    def candidates(self, phrase: str) -> list[str]:
        """All rule outputs for one phrase, in rule order (not yet cleaned)."""
        words = phrase.split()
        if not words:
            return []
        out: list[str] = []
        out += self._whole_phrase(words)
        out += self._inner_ngrams(words)
        out += self._of_inversion(words)
        out += self._substitutions(words)
        out += self._acronym(words)
        out += self._surface_variants(words)
        return out

    @staticmethod
    def _split_article(words: list[str]) -> tuple[str | None, list[str]]:
        if len(words) > 1 and words[0].lower() in _DETERMINERS:
            return words[0], words[1:]
        return None, words

    def _whole_phrase(self, words: list[str]) -> list[str]:
        article, core = self._split_article(words)
        out = []
        for synonym in self.synonyms.get(" ".join(core)):
            if article and synonym[:1].islower() and synonym.split()[0].lower() not in _DETERMINERS:
                out.append(f"{article} {synonym}")
            else:
                out.append(synonym)
        return out

    def _multiword_spans(self, words: list[str]) -> list[tuple[int, int, list[str]]]:
        """Inner n-grams (2-3 words, not the whole phrase) with table entries, as (start, end, synonyms)."""
        spans = []
        for n in (3, 2):
            for i in range(len(words) - n + 1):
                if n < len(words):
                    synonyms = self.synonyms.get(" ".join(words[i : i + n]))
                    if synonyms:
                        spans.append((i, i + n, synonyms))
        return spans

    def _inner_ngrams(self, words: list[str]) -> list[str]:
        out = []
        for start, end, synonyms in self._multiword_spans(words):
            outside = words[:start] + words[end:]
            if any(_is_name_word(w) and w.lower() not in _DETERMINERS for w in outside):
                continue  # a part of a longer name ("New York" in "The New York Times") is not replaceable
            for synonym in synonyms[:2]:
                if synonym.lower() not in " ".join(words).lower():
                    out.append(" ".join(words[:start] + [synonym] + words[end:]))
        return out

    def _is_noun(self, word: str) -> bool:
        if self.wordnet is None:
            return True
        key = word.lower()
        if key not in self._noun_cache:
            self._noun_cache[key] = bool(self.wordnet.synsets(key, pos="n")) or _is_name_word(word)
        return self._noun_cache[key]

    def _of_inversion(self, words: list[str]) -> list[str]:
        prefix: list[str] = []
        if words[0].lower() in _PREPOSITIONS and words[0].lower() != "of":
            prefix, words = words[:1], words[1:]
        out = []
        lowered = [w.lower() for w in words]
        if lowered.count("of") == 1:
            i = lowered.index("of")
            _, x = self._split_article(words[:i])
            _, y = self._split_article(words[i + 1 :])
            short = 1 <= len(x) <= 3 and 1 <= len(y) <= 3
            plain = not any(w.lower() in _PREPOSITIONS or w.lower() in STOP_WORDS for w in x + y)
            if short and plain and self._is_noun(x[-1]):
                out.append(" ".join(prefix + y + x))
                if all(_is_name_word(w) for w in y):
                    out.append(" ".join(prefix + y[:-1] + [y[-1] + "'s"] + x))
        match = _POSSESSIVE.match(words[0]) if len(words) >= 2 else None
        if match and _is_name_word(words[0]) and len(words) <= 4:
            owner = match.group(1)
            out.append(" ".join(prefix + ["the"] + words[1:] + ["of", owner]))
        return out

    def _substitutions(self, words: list[str]) -> list[str]:
        in_multiword = {i for start, end, _ in self._multiword_spans(words) for i in range(start, end)}
        if self.synonyms.get(" ".join(self._split_article(words)[1])) and len(words) > 1:
            in_multiword.update(range(len(words)))  # "prime minister" is one lexical unit, not two words
        slots = []
        for i, word in enumerate(words):
            if i in in_multiword or not (word.islower() and word.isalpha()) or word in STOP_WORDS:
                continue
            synonyms = [s for s in self.synonyms.get(word) if s.isalpha() and s.islower()]
            if synonyms:
                slots.append((i, synonyms))
        slots = slots[: self.max_substituted_words]
        if len(slots) < 2:  # a single substitution is the token-level synonym augmentation
            return []
        out = []
        for variant in range(self.max_substitutions):
            new = list(words)
            for rank, (i, synonyms) in enumerate(slots):
                new[i] = synonyms[(variant + rank) % len(synonyms)]
            out.append(" ".join(new))
        return out

    @staticmethod
    def _acronym(words: list[str]) -> list[str]:
        _, core = LexicalParaphraser._split_article(words)
        content = [w for w in core if w.lower() not in _NAME_FUNCTION_WORDS]
        if not content or content[0] != core[0]:
            return []  # "in New York" is not a name
        if len(content) < 2 or len(content) > 6 or not all(_is_name_word(w) and w.isalpha() for w in content):
            return []
        if any(w.isupper() and len(w) > 1 for w in content):
            return []  # already contains an acronym
        return ["".join(w[0].upper() for w in content)]

    def _surface_variants(self, words: list[str]) -> list[str]:
        out = []
        article, core = self._split_article(words)
        if article:
            out.append(" ".join(core))
        text = " ".join(words)
        if _ALPHA_HYPHEN.search(text):
            out.append(_ALPHA_HYPHEN.sub(" ", text))
        return out


class DiverseLexicalParaphraser:
    """Offline paraphraser that replaces every content word of a phrase (stop words stay), without overlap.

    A phrase is segmented left to right into multiword units that have a table entry (3 then 2 words: "prime
    minister", "New York"), single content words and stop words. Each unit that is not a stop word gets a
    replacement from the synonym table whose content tokens do not overlap the phrase's; the phrase as a whole
    (without a leading article) may also be replaced by one of its own entries ("the United States" -> "the USA").
    If some content unit has no usable replacement, the phrase gets no paraphrase: nothing is made up.

    Replacements are drawn with a ``random.Random`` seeded by ``seed`` and the phrase (so results do not depend on
    what else is paraphrased), with weight ``1 / (rank + 1)`` over a unit's candidates, which favours WordNet's
    lemmas of the most frequent sense (listed first) while keeping some diversity, like sampling from a paraphraser.
    Up to ``num_candidates`` distinct paraphrases are returned per phrase. "a"/"an" is fixed before a replaced word.

    ``common_words`` (lower-case words, e.g. the 30k most frequent GloVe words) restricts replacements to common
    words: WordNet also lists rare or archaic lemmas ("unremarkably" for "usually", "geezerhood" for "years") that a
    paraphraser trained on real text would not produce.
    """

    def __init__(
        self,
        synonyms: SynonymTable,
        num_candidates: int = 3,
        seed: int = 0,
        common_words: set[str] | frozenset[str] | None = None,
        progress: bool = True,
    ):
        self.synonyms = synonyms
        self.num_candidates = num_candidates
        self.seed = seed
        self.common_words = frozenset(common_words) if common_words is not None else None
        self.progress = progress

    @property
    def cache_key(self) -> str:
        common = None if self.common_words is None else cache_keys.cache_key({"w": sorted(self.common_words)})
        return f"diverse-lexical:v2:{self.num_candidates}:{self.seed}:{common}:{sorted(self.synonyms.params.items())}"

    def paraphrase(self, phrases: list[str]) -> list[list[str]]:
        phrases = list(phrases)
        bar = tqdm(phrases, desc="paraphrasing", disable=not self.progress or len(phrases) < 1000)
        return [self.candidates(p, random.Random(phrase_seed(self.seed, p))) for p in bar]

    def segment(self, words: list[str]) -> list[tuple[int, int]]:
        """``[start, end)`` word ranges: multiword table entries (longest first, left to right), else single words."""
        units, i = [], 0
        while i < len(words):
            for n in (3, 2):
                if i + n <= len(words) and self.synonyms.get(" ".join(words[i : i + n])):
                    units.append((i, i + n))
                    i += n
                    break
            else:
                units.append((i, i + 1))
                i += 1
        return units

    def _options(self, unit: str, banned: frozenset[str]) -> list[str]:
        options = [s for s in self.synonyms.get(unit) if not (content_tokens(s) & banned)]
        if self.common_words is not None:
            options = [s for s in options if all(t in self.common_words for t in _TOKEN.findall(s.lower()))]
        return options

    def candidates(self, phrase: str, rng: random.Random) -> list[str]:
        """Up to ``num_candidates`` distinct paraphrases of ``phrase`` (all obey the no-overlap rule)."""
        words = phrase.split()
        banned = content_tokens(phrase)
        if not words or not banned:
            return []
        out: list[str] = []
        article = words[0] if len(words) > 1 and words[0].lower() in ("the", "a", "an") else None
        core = words[1:] if article else words
        for synonym in self._options(" ".join(core), banned)[: self.num_candidates]:
            lead = [article] if article and synonym[:1].islower() else []
            out.append(fix_articles(lead + synonym.split()))
        slots: list[tuple[int, int, list[str]]] = []
        for start, end in self.segment(words):
            unit = " ".join(words[start:end])
            if not content_tokens(unit):
                continue  # stop words and punctuation stay as they are
            options = self._options(unit, banned)
            if not options:
                return _distinct(phrase, out, self.num_candidates)
            slots.append((start, end, options))
        for _ in range(self.num_candidates * 3):
            if len(_distinct(phrase, out, self.num_candidates)) >= self.num_candidates:
                break
            new, cursor = [], 0
            for start, end, options in slots:
                new += words[cursor:start]
                weights = [1.0 / (rank + 1) for rank in range(len(options))]
                new += rng.choices(options, weights=weights)[0].split()
                cursor = end
            new += words[cursor:]
            out.append(fix_articles(new))
        return _distinct(phrase, out, self.num_candidates)


def fix_articles(words: list[str]) -> str:
    """Join words, making "a"/"an" agree with the next word's first letter."""
    fixed = list(words)
    for i in range(len(fixed) - 1):
        if fixed[i].lower() in _ARTICLES and fixed[i + 1][:1].isalpha():
            article = "an" if fixed[i + 1][0].lower() in "aeiou" else "a"
            fixed[i] = article.capitalize() if fixed[i][0].isupper() else article
    return " ".join(fixed)


def _distinct(phrase: str, candidates: list[str], limit: int) -> list[str]:
    """The first ``limit`` candidates that differ (case-insensitively) from the phrase and from each other."""
    seen, out = {phrase.lower()}, []
    for candidate in candidates:
        key = candidate.lower()
        if key not in seen:
            seen.add(key)
            out.append(candidate)
    return out[:limit]


def phrase_seed(seed: int, phrase: str) -> int:
    """A per-phrase seed: what is drawn for a phrase does not depend on the other phrases of a call."""
    return seed ^ zlib.crc32(phrase.encode())


# ----------------------------------------------------------------------------------------------------- factory
def get_paraphraser(spec: str | Paraphraser | None, synonyms: SynonymTable | None = None, **kwargs) -> Paraphraser:
    """A paraphraser from a spec: ``"offline"`` (:class:`LexicalParaphraser` over ``synonyms``), ``"none"`` or
    ``None`` (no paraphrases), ``"pivot"`` (:class:`~phrasezoo.data.lexical.pivot.PivotParaphraser`, the dict-de-en pivot
    table without benchmark items), specs joined by ``+`` (``"offline+pivot"``: outputs merged in that order), an
    object with ``paraphrase`` (returned as is), or any other string, taken as a Hub id or local folder for
    :class:`HubParaphraser` (``"hub"`` alone means the default Parrot model). ``kwargs`` go to the constructor."""
    if spec is None or spec == "none":
        return NoParaphraser()
    if isinstance(spec, Paraphraser) and not isinstance(spec, str):
        return spec
    if spec == "pivot":
        return pivot.PivotParaphraser(progress=kwargs.get("progress", True))
    if isinstance(spec, str) and "+" in spec:
        return pivot.ChainParaphraser([get_paraphraser(part.strip(), synonyms, **kwargs) for part in spec.split("+")])
    if spec == "offline":
        return LexicalParaphraser(synonyms, **kwargs)
    if spec == "hub":
        return HubParaphraser(**kwargs)
    if isinstance(spec, str):
        return HubParaphraser(spec, **kwargs)
    raise TypeError(f"Cannot make a paraphraser from {spec!r}: use 'offline', 'none', a Hub id or an object.")
