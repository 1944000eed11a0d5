"""Phrase-BERT's two training sets (Wang et al., 2021, section 3), built from a corpus mined with spaCy.

1. **Lexically diverse paraphrase triples** ``(anchor, positive, negative)``. Anchors are mined phrases of the
   classes NP, VP, ADJP and ADVP (no PP, as in the paper), most frequent first. The positive is a paraphrase that
   shares no content (non-stop-word) token with the anchor. The negative corrupts the anchor first (one random
   content word replaced by a random vocabulary word, "complete control" -> "fluid control") and paraphrases the
   corrupted phrase the same way, so it keeps the anchor's shape but not its meaning, and shares no content token
   with the anchor either.
2. **Phrase-in-context triples** ``(phrase, context, negative_context)``: one context of up to ``context_words``
   (120) words around a mention of the phrase, with the phrase replaced by the model's mask token, and the masked
   context of a random other phrase (one that does not contain the phrase).

**The no-overlap rule** (:func:`phrasezoo.data.lexical.paraphrase.shares_content_token`) compares lower-cased word tokens
that are not spaCy stop words, after Porter stemming, so "control"/"controls" count as shared: stricter than the
paper's token identity.

**Paraphrasers** (in :mod:`phrasezoo.data.lexical.paraphrase`). The paper decodes a GPT-2 paraphraser (Krishna et al., 2020)
with nucleus sampling under lexical constraints. Offline, :class:`~phrasezoo.data.lexical.paraphrase.DiverseLexicalParaphraser`
builds paraphrases by substitution: multiword units and content words are replaced by entries of the zoo's
:class:`~phrasezoo.data.lexical.synonyms.SynonymTable` (WordNet synonyms and multiword lemmas when WordNet has them, GloVe
neighbours otherwise), stop words are kept. Online, :class:`~phrasezoo.data.lexical.paraphrase.ConstrainedHubParaphraser`
samples from any Hub seq2seq paraphraser with the anchor's content words banned (``bad_words_ids``). Whatever produced
them, candidates are filtered by the rule, and the counts are reported.
"""

from __future__ import annotations

import logging
import random
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datasets import Dataset, Features, List, Value
from tqdm.auto import tqdm

from phrasezoo.data.cache import cache_key, cached_dataset, code_version
from phrasezoo.data.corpus import phrases as _phrases_module
from phrasezoo.data.corpus.phrases import parse_corpus, parse_params, phrase_contexts, phrase_table
from phrasezoo.data.corpus.spans import MiningOptions
from phrasezoo.data.lexical import paraphrase as _paraphrase_module
from phrasezoo.data.lexical import synonyms as _synonyms_module
from phrasezoo.data.lexical.paraphrase import (
    DEFAULT_HUB_PARAPHRASER,
    ConstrainedHubParaphraser,
    DiverseLexicalParaphraser,
    Paraphraser,
    content_tokens,
    fix_articles,
    meets_no_overlap_rule,
    phrase_seed,
)
from phrasezoo.data.lexical.pivot import ChainParaphraser, PivotParaphraser
from phrasezoo.data.lexical.synonym_tables import load_synonym_table
from phrasezoo.data.lexical.synonyms import STOP_WORDS, SynonymTable
from phrasezoo.resources import load_word_vectors

logger = logging.getLogger(__name__)

#: Bump when the meaning of the Phrase-BERT tables changes (the code digest covers ordinary edits).
PHRASE_BERT_DATA_VERSION = "1"
#: The paper's phrase classes (prepositional phrases are left out: they overlap heavily with noun phrases).
PHRASE_CLASSES = ("NP", "VP", "ADJP", "ADVP")
OBJECTIVES = ("paraphrase", "context")
#: Candidates kept per phrase when paraphrasers are chained (``"pivot+offline"``): room for both sources' outputs.
PIVOT_CHAIN_CANDIDATES = 10


def get_diverse_paraphraser(
    spec: str | Paraphraser, synonyms: SynonymTable | None = None, seed: int = 0, progress: bool = True, **kwargs
) -> Paraphraser:
    """``"offline"`` -> :class:`DiverseLexicalParaphraser` over ``synonyms``; ``"pivot"`` ->
    :class:`~phrasezoo.data.lexical.pivot.PivotParaphraser` (the dict-de-en bilingual-pivot table, PPDB's construction, train
    split, test-benchmark pairs removed); ``"hub"`` or a Hub id / local folder -> :class:`ConstrainedHubParaphraser`;
    specs joined by ``+`` (``"pivot+offline"``) merge their candidates per phrase, in that order; an object with
    ``paraphrase`` is returned as is. ``kwargs`` go to the class (in a chain: to the offline or Hub part)."""
    if not isinstance(spec, str):
        if not callable(getattr(spec, "paraphrase", None)):
            raise TypeError(f"Cannot use {spec!r} as a paraphraser: it has no paraphrase(phrases) method.")
        return spec
    if "+" in spec:
        parts = [get_diverse_paraphraser(p.strip(), synonyms, seed, progress, **kwargs) for p in spec.split("+")]
        return ChainParaphraser(parts, max_paraphrases=PIVOT_CHAIN_CANDIDATES)
    if spec == "pivot":
        return PivotParaphraser(progress=progress)
    if spec == "offline":
        if synonyms is None:
            raise ValueError("The offline paraphraser needs a SynonymTable (synonyms=...).")
        return DiverseLexicalParaphraser(synonyms, seed=seed, progress=progress, **kwargs)
    if spec in ("", "none"):
        raise ValueError("Phrase-BERT's paraphrase objective needs a paraphraser: use 'offline' or a Hub id.")
    model_id = DEFAULT_HUB_PARAPHRASER if spec == "hub" else spec
    return ConstrainedHubParaphraser(model_id, seed=seed, progress=progress, **kwargs)


# -------------------------------------------------------------------------------------------- paraphrase triples
def corrupt_phrase(phrase: str, vocabulary: Sequence[str], rng: random.Random) -> str | None:
    """The phrase with one random content word replaced by a random vocabulary word sharing no content token with
    the phrase ("complete control" -> "fluid control"); ``None`` when the phrase has no content word."""
    words = phrase.split()
    positions = [i for i, w in enumerate(words) if content_tokens(w)]
    if not positions or not vocabulary:
        return None
    banned = content_tokens(phrase)
    for _ in range(20):
        replacement = vocabulary[rng.randrange(len(vocabulary))]
        if not content_tokens(replacement) & banned:
            break
    else:
        return None
    position = rng.choice(positions)
    return fix_articles(words[:position] + [replacement] + words[position + 1 :])


PARAPHRASE_FEATURES = Features(
    {
        "anchor": Value("string"),
        "count": Value("int32"),
        "n_candidates": Value("int32"),
        "positives": List(Value("string")),
        "positive": Value("string"),
        "corrupted": Value("string"),
        "negative": Value("string"),
    }
)


def make_paraphrase_triples(
    anchors: Sequence[str],
    paraphraser: Paraphraser,
    vocabulary: Sequence[str],
    counts: Sequence[int] | None = None,
    negative_attempts: int = 3,
    seed: int = 0,
) -> Dataset:
    """One row per anchor: every candidate the paraphraser gave (``n_candidates``), those that meet the no-overlap
    rule (``positives``), the chosen ``positive``, the ``corrupted`` anchor and its paraphrase, the ``negative``
    (empty strings where none was found). Rows with both a positive and a negative are the training triples.

    The negative must meet the rule against the corrupted phrase and against the anchor. Up to
    ``negative_attempts`` corruptions are tried per anchor (all paraphrased in one batched call per round).
    """
    anchors = list(anchors)
    raw = paraphraser.paraphrase(anchors)
    rows: list[dict[str, Any]] = []
    for i, (anchor, candidates) in enumerate(zip(anchors, raw)):
        positives = [c for c in candidates if meets_no_overlap_rule(anchor, c)]
        rng = random.Random(phrase_seed(seed, anchor))
        rows.append(
            {
                "anchor": anchor,
                "count": int(counts[i]) if counts is not None else 0,
                "n_candidates": len(candidates),
                "positives": positives,
                "positive": rng.choice(positives) if positives else "",
                "corrupted": "",
                "negative": "",
                "_rng": rng,
            }
        )
    pending = [row for row in rows if row["positive"]]
    for _ in range(negative_attempts):
        if not pending:
            break
        corrupted = [corrupt_phrase(row["anchor"], vocabulary, row["_rng"]) for row in pending]
        asked = [(row, c) for row, c in zip(pending, corrupted) if c]
        outputs = paraphraser.paraphrase([c for _, c in asked]) if asked else []
        still = []
        for (row, corrupt), candidates in zip(asked, outputs):
            valid = [
                c for c in candidates if meets_no_overlap_rule(corrupt, c) and meets_no_overlap_rule(row["anchor"], c)
            ]
            if valid:
                row["corrupted"], row["negative"] = corrupt, row["_rng"].choice(valid)
            else:
                still.append(row)
        pending = still
    for row in rows:
        del row["_rng"]
    return Dataset.from_list(rows, features=PARAPHRASE_FEATURES)


# ----------------------------------------------------------------------------------------------- context triples
def mask_phrase(text: str, phrase: str, mask_token: str, span: tuple[int, int] | None = None) -> str:
    """``text`` with the mention at ``span`` and every other occurrence of ``phrase`` (case-insensitive, whole
    words) replaced by ``mask_token``, so the masked context never shows the phrase."""
    if span is not None:
        start, end = span
        text = f"{text[:start]}{mask_token}{text[end:]}"
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"(?!\w)", re.IGNORECASE)
    return pattern.sub(mask_token, text)


def context_window(
    sentences: Sequence[str],
    row: int,
    span: tuple[int, int],
    same_paragraph: Sequence[bool],
    max_words: int = 120,
) -> tuple[str, tuple[int, int]]:
    """A context of at most ``max_words`` whitespace words around the mention at character ``span`` of sentence
    ``row``: the sentence, grown by whole neighbouring sentences of the same paragraph (previous and next in turn)
    while it fits, or cut to a window centred on the mention when the sentence alone is too long.

    ``same_paragraph[i]`` tells whether sentence ``i`` and ``i + 1`` belong to one paragraph. Returns the context
    and the mention's character span in it.
    """
    sentence = sentences[row]
    start, end = span
    words_before = sentence[:start].split()
    mention_words = sentence[start:end].split()
    words_after = sentence[end:].split()
    if len(words_before) + len(mention_words) + len(words_after) > max_words:
        room = max(0, max_words - len(mention_words))
        left = min(len(words_before), room // 2)
        right = min(len(words_after), room - left)
        left = min(len(words_before), room - right)
        before = " ".join(words_before[len(words_before) - left :])
        prefix = f"{before} " if before else ""
        text = prefix + " ".join(mention_words) + (" " + " ".join(words_after[:right]) if right else "")
        return text, (len(prefix), len(prefix) + len(" ".join(mention_words)))
    parts, offset, total = [sentence], 0, len(sentence.split())
    lo, hi = row, row
    grew = True
    while grew:
        grew = False
        if lo > 0 and same_paragraph[lo - 1]:
            n = len(sentences[lo - 1].split())
            if total + n <= max_words:
                lo -= 1
                parts.insert(0, sentences[lo])
                offset += len(sentences[lo]) + 1
                total += n
                grew = True
        if hi + 1 < len(sentences) and same_paragraph[hi]:
            n = len(sentences[hi + 1].split())
            if total + n <= max_words:
                hi += 1
                parts.append(sentences[hi])
                total += n
                grew = True
    return " ".join(parts), (offset + start, offset + end)


CONTEXT_FEATURES = Features(
    {
        "phrase": Value("string"),
        "row": Value("int64"),
        "context": Value("string"),
        "negative_row": Value("int64"),
        "negative_context": Value("string"),
    }
)


def make_context_triples(
    sentences: Dataset,
    phrases: Sequence[str],
    mask_token: str = "[MASK]",
    max_words: int = 120,
    seed: int = 0,
    progress: bool = True,
) -> Dataset:
    """One row per phrase seen in ``sentences``: the masked ``context`` of one mention (chosen with ``seed``) and
    the masked context of a random other phrase (``negative_context``) that does not contain the phrase and comes
    from another sentence. See :func:`context_window` and :func:`mask_phrase`."""
    phrases = list(phrases)
    found = phrase_contexts(sentences, phrases, max_contexts=1, seed=seed)
    texts = sentences["sentence"]
    docs, paras = sentences["doc_id"], sentences["para_id"]
    same_paragraph = [docs[i] == docs[i + 1] and paras[i] == paras[i + 1] for i in range(len(texts) - 1)]
    masked: list[tuple[str, int, str]] = []
    for phrase, contexts in tqdm(
        zip(phrases, found["contexts"]), total=len(phrases), desc="contexts", disable=not progress
    ):
        if not contexts:
            continue
        ctx = contexts[0]
        window, span = context_window(texts, ctx["row"], (ctx["start"], ctx["end"]), same_paragraph, max_words)
        masked.append((phrase, ctx["row"], mask_phrase(window, phrase, mask_token, span)))
    rows = []
    for i, (phrase, row, context) in enumerate(masked):
        rng = random.Random(phrase_seed(seed + 1, phrase))
        negative = None
        for _ in range(20):
            j = rng.randrange(len(masked))
            other_row, other_context = masked[j][1], masked[j][2]
            if j != i and other_row != row and mask_phrase(other_context, phrase, "\0") == other_context:
                negative = (other_row, other_context)
                break
        if negative is None:
            continue
        rows.append(
            {
                "phrase": phrase,
                "row": row,
                "context": context,
                "negative_row": negative[0],
                "negative_context": negative[1],
            }
        )
    return Dataset.from_list(rows, features=CONTEXT_FEATURES)


# ------------------------------------------------------------------------------------------------- entry point
@dataclass
class PhraseBertData:
    """The two training sets and the facts about them (``stats``: counts for the model card and the report)."""

    paraphrase: Dataset | None
    context: Dataset | None
    stats: dict[str, Any] = field(default_factory=dict)

    def paraphrase_triples(self) -> list[tuple[str, str, str]]:
        """``(anchor, positive, negative)`` for the anchors that got both."""
        if self.paraphrase is None:
            return []
        return [
            (a, p, n)
            for a, p, n in zip(self.paraphrase["anchor"], self.paraphrase["positive"], self.paraphrase["negative"])
            if p and n
        ]

    def context_triples(self) -> list[tuple[str, str, str]]:
        """``(phrase, masked context, random other masked context)``."""
        if self.context is None:
            return []
        return list(zip(self.context["phrase"], self.context["context"], self.context["negative_context"]))


def paraphrase_stats(table: Dataset) -> dict[str, Any]:
    """How many anchors got a rule-abiding positive, a negative, both; how many raw candidates met the rule."""
    n = len(table)
    n_candidates = sum(table["n_candidates"])
    n_valid = sum(len(p) for p in table["positives"])
    with_positive = sum(bool(p) for p in table["positive"])
    triples = sum(bool(p and q) for p, q in zip(table["positive"], table["negative"]))
    return {
        "anchors": n,
        "paraphrase candidates": n_candidates,
        "candidates meeting the no-overlap rule": n_valid,
        "anchors with a positive": with_positive,
        "paraphrase triples (positive and negative meet the rule)": triples,
        "share of anchors giving a triple": round(triples / n, 4) if n else 0.0,
    }


def build_phrase_bert_data(
    corpus: str = "embedded",
    spacy_model: str = "en_core_web_sm",
    min_freq: int = 2,
    max_phrases: int | None = None,
    max_context_phrases: int | None = None,
    classes: Sequence[str] = PHRASE_CLASSES,
    objectives: Sequence[str] = OBJECTIVES,
    paraphraser: str | Paraphraser = "offline",
    paraphraser_options: Mapping | None = None,
    glove: str | None = "glove-6b-50d",
    use_wordnet: bool = True,
    synonym_options: Mapping | None = None,
    negative_attempts: int = 3,
    context_words: int = 120,
    mask_token: str = "[MASK]",
    seed: int = 0,
    cache: bool = True,
    progress: bool = True,
    *,
    max_documents: int | None = None,
    n_process: int | None = None,
    mining_options: MiningOptions | None = None,
) -> PhraseBertData:
    """Mine ``corpus`` and build the training sets of the requested ``objectives`` (cached per set).

    Args:
        corpus, spacy_model, max_documents, n_process, mining_options: passed to :func:`parse_corpus`.
        min_freq, classes: phrase-table filter (the paper keeps NP/VP/ADJP/ADVP). max_phrases: anchors of the
            paraphrase set (most frequent first); max_context_phrases: phrases of the context set.
        objectives: ``("paraphrase", "context")`` for Phrase-BERT, one of them for the ablations.
        paraphraser: ``"offline"`` (:class:`DiverseLexicalParaphraser`), ``"pivot"`` (the bilingual-pivot table),
            ``"hub"`` / a Hub id / a folder (:class:`ConstrainedHubParaphraser`), ``+``-joined specs
            (``"pivot+offline"``: candidates of both), or an object; ``paraphraser_options`` go to its constructor, except
            ``max_word_rank`` (offline only): replacements must be among the that many most frequent ``glove`` words.
        glove, use_wordnet, synonym_options: the synonym table of the offline paraphraser (see
            :func:`phrasezoo.data.lexical.synonym_tables.load_synonym_table`).
        negative_attempts: corruptions tried per anchor. context_words: context length in words (paper: 120).
        mask_token: the model's mask token (``[MASK]`` for BERT-style tokenizers, ``<mask>`` for MPNet).
        seed: all sampling (paraphrases, corruptions, contexts, negative contexts) derives from it.
    """
    unknown = set(objectives) - set(OBJECTIVES)
    if unknown or not objectives:
        raise ValueError(f"objectives must be a non-empty subset of {OBJECTIVES}, got {list(objectives)}.")
    sentences = parse_corpus(
        corpus, spacy_model, max_documents, n_process, mining_options, cache=cache, progress=progress
    )
    table = phrase_table(sentences, min_freq=min_freq, classes=classes)
    phrases, counts = list(table["phrase"]), list(table["count"])
    base = {
        "parse": parse_params(corpus, spacy_model, max_documents, mining_options),
        "min_freq": min_freq,
        "classes": list(classes),
        "seed": seed,
        "code": code_version(
            PHRASE_BERT_DATA_VERSION, [_phrases_module, _synonyms_module, _paraphrase_module, _this_module()]
        ),
    }
    stats: dict[str, Any] = {"corpus": corpus, "mined phrases (NP/VP/ADJP/ADVP, min_freq)": len(phrases)}
    paraphrase_set = context_set = None
    if "paraphrase" in objectives:
        anchors = phrases[:max_phrases] if max_phrases else phrases
        engine, synonyms = paraphrase_engine(
            paraphraser, paraphraser_options, phrases, glove, use_wordnet, synonym_options, seed, cache, progress
        )
        vocabulary = random_word_vocabulary(synonyms, phrases)
        paraphrase_set = paraphrase_set_of(
            anchors, counts[: len(anchors)], engine, vocabulary, synonyms, base, negative_attempts, seed, cache
        )
        stats.update(paraphrase_stats(paraphrase_set))
    if "context" in objectives:
        chosen = phrases[:max_context_phrases] if max_context_phrases else phrases
        params = {**base, "phrases": cache_key({"p": chosen}), "mask": mask_token, "words": context_words}

        def build_contexts() -> Dataset:
            return make_context_triples(sentences, chosen, mask_token, context_words, seed, progress)

        context_set = cached_dataset("phrase-bert-context", params, build_contexts, enabled=cache)
        stats["context triples"] = len(context_set)
    return PhraseBertData(paraphrase=paraphrase_set, context=context_set, stats=stats)


def paraphrase_engine(
    paraphraser: str | Paraphraser,
    paraphraser_options: Mapping | None,
    phrases: Sequence[str],
    glove: str | None,
    use_wordnet: bool,
    synonym_options: Mapping | None,
    seed: int,
    cache: bool,
    progress: bool,
) -> tuple[Paraphraser, SynonymTable | None]:
    """The paraphraser of the spec (see :func:`build_phrase_bert_data`) and, when the offline one takes part, the
    synonym table of the mined ``phrases`` it substitutes from (``None`` otherwise)."""
    synonyms = None
    parts = paraphraser.split("+") if isinstance(paraphraser, str) else []
    if "offline" in parts:
        synonyms = load_synonym_table(phrases, glove, use_wordnet, synonym_options, cache=cache)
    options = dict(paraphraser_options or {})
    max_word_rank = options.pop("max_word_rank", None)
    if max_word_rank and "offline" in parts:
        options["common_words"] = common_words(glove, max_word_rank)
    engine = get_diverse_paraphraser(paraphraser, synonyms=synonyms, seed=seed, progress=progress, **options)
    return engine, synonyms


def paraphrase_set_of(
    anchors: list[str],
    counts: list[int],
    engine: Paraphraser,
    vocabulary: list[str],
    synonyms: SynonymTable | None,
    base: dict[str, Any],
    negative_attempts: int,
    seed: int,
    cache: bool,
) -> Dataset:
    """The paraphrase triples of ``anchors`` (cached when the paraphraser has a cache key: its output is then a
    function of the key and the anchors)."""
    key = getattr(engine, "cache_key", None)
    params = {
        **base,
        "anchors": cache_key({"anchors": anchors}),
        "paraphraser": key,
        "synonyms": None if synonyms is None else synonyms.params,
        "negative_attempts": negative_attempts,
        "vocabulary": cache_key({"words": vocabulary}),
    }

    def build_paraphrases() -> Dataset:
        return make_paraphrase_triples(anchors, engine, vocabulary, counts, negative_attempts, seed)

    return cached_dataset("phrase-bert-paraphrase", params, build_paraphrases, enabled=cache and bool(key))


def common_words(vectors: str | None, max_rank: int) -> frozenset[str]:
    """The ``max_rank`` most frequent words of a word-vector table (GloVe rows are in frequency order)."""
    if not vectors:
        raise ValueError("max_word_rank needs word vectors (glove) to rank words by frequency.")
    return frozenset(load_word_vectors(vectors).words[:max_rank])


def random_word_vocabulary(synonyms: SynonymTable | None, phrases: Sequence[str]) -> list[str]:
    """Words that may replace an anchor word in a negative: lower-case alphabetic non-stop words of the mined
    phrases, restricted to words with synonyms when a table is given (so the corrupted phrase can be paraphrased)."""
    words = sorted({w for p in phrases for w in p.split() if w.isalpha() and w.islower() and w not in STOP_WORDS})
    if synonyms is not None:
        words = [w for w in words if synonyms.get(w)]
    return words


def _this_module():
    return sys.modules[__name__]
