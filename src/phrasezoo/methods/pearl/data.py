"""PEARL's training table and its augmenter: the entry points the training code calls.

``build_pearl_dataset()`` runs the whole pipeline (cached stage by stage):

1. :func:`~phrasezoo.data.corpus.phrases.parse_corpus` -- spaCy parse and typed phrase mentions (cached);
2. :func:`~phrasezoo.data.corpus.phrases.phrase_table` -- phrases seen at least ``min_freq`` times, type labels/ids;
3. :func:`~phrasezoo.data.lexical.synonym_tables.load_synonym_table` -- WordNet + GloVe synonyms for the table's words (cached as JSON);
4. paraphrases -- one list per phrase from the paraphraser (``"offline"``: :class:`LexicalParaphraser`);
5. :func:`~phrasezoo.methods.pearl.hard_negatives.mine_hard_negatives` -- edit-distance look-alikes with low similarity
   under the base encoder (the paraphrases are excluded).

The result (cached as a whole when every component has a ``cache_key``) has one row per phrase: ``phrase``,
``phrase_class``, ``entity_type``, ``type_label``, ``type_id``, ``lemma``, ``count``, ``paraphrases``,
``hard_negatives``. ``build_augmenter(dataset)`` returns the :class:`Augmenter` that matches it (same synonym table,
the ``paraphrases`` column, the official augmentation mix).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import contextmanager

from datasets import Dataset, Features, List, Value

from phrasezoo.data.cache import cached_dataset, code_version
from phrasezoo.data.corpus import phrases as _phrases_module
from phrasezoo.data.corpus.phrases import parse_corpus, parse_params, phrase_table
from phrasezoo.data.corpus.spans import MiningOptions
from phrasezoo.data.lexical import paraphrase as _paraphrase_module
from phrasezoo.data.lexical import synonyms as _synonyms_module
from phrasezoo.data.lexical.paraphrase import Paraphraser, get_paraphraser
from phrasezoo.data.lexical.synonym_tables import DEFAULT_SYNONYM_OPTIONS, load_synonym_table
from phrasezoo.data.lexical.synonyms import SynonymTable

from . import augment as _augment_module
from . import hard_negatives as _hard_negatives_module
from .augment import Augmenter
from .hard_negatives import Encoder, MiningEncoder, mine_hard_negatives

logger = logging.getLogger(__name__)

#: Bump when the meaning of the PEARL table changes (the code digest covers ordinary edits).
PEARL_DATA_VERSION = "1"


@contextmanager
def _stage(name: str, timings: dict | None):
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    logger.info("%s: %.1f s", name, seconds)
    if timings is not None:
        timings[name] = round(seconds, 2)


def build_pearl_dataset(
    corpus: str = "embedded",
    spacy_model: str = "en_core_web_sm",
    min_freq: int = 2,
    max_phrases: int | None = None,
    glove: str | None = "glove-6b-50d",
    paraphraser: str | Paraphraser | None = "offline",
    hard_negatives_per_anchor: int = 2,
    encoder: Encoder | str | None = None,
    cache: bool = True,
    progress: bool = True,
    *,
    max_documents: int | None = None,
    n_process: int | None = None,
    mining_options: MiningOptions | None = None,
    use_wordnet: bool = True,
    synonym_options: Mapping | None = None,
    hard_negative_options: Mapping | None = None,
    timings: dict | None = None,
) -> Dataset:
    """Build PEARL's phrase table with paraphrases and hard negatives (see the module docstring).

    Args:
        corpus, spacy_model, max_documents, n_process, mining_options: passed to :func:`parse_corpus`.
        min_freq: drop phrases seen fewer times (paper: 2). max_phrases: keep the most frequent ones only.
        glove: word vectors for synonyms (``None``: WordNet only). use_wordnet: also use WordNet when installed.
        paraphraser: ``"offline"`` (rules, default), ``"none"``, a Hub id/local folder for a seq2seq paraphraser
            (e.g. ``"prithivida/parrot_paraphraser_on_T5"``, needs a network), or a :class:`Paraphraser`.
        hard_negatives_per_anchor: hard negatives per phrase (PEARL: 2); 0 gives empty lists.
        encoder: base encoder for hard negatives: ``None`` (MiniLM mean pooling), a backbone name/path, or a
            callable ``encode(texts) -> L2-normalised array``.
        cache: reuse cached stages and the final table (``cache_dir()/datasets/pearl-<hash>``). The final table is
            cached only when the paraphraser and the encoder expose a ``cache_key`` (the built-in ones do).
        progress: progress bars.
        synonym_options: overrides of :data:`DEFAULT_SYNONYM_OPTIONS`.
        hard_negative_options: extra arguments of :func:`mine_hard_negatives` (``score_cutoff``, ``max_candidates``,
            ``max_similarity``, ``fallback``, ``seed``).
        timings: a dict that receives the seconds spent per stage.

    Returns:
        A ``datasets.Dataset`` sorted by frequency: ``phrase``, ``phrase_class``, ``entity_type``, ``type_label``,
        ``type_id`` (index in ``DEFAULT_TYPE_LABELS``), ``lemma``, ``count``, ``paraphrases`` (list[str]),
        ``hard_negatives`` (list[str], at most ``hard_negatives_per_anchor``).
    """
    args = dict(locals())  # every argument, passed on to _build
    if isinstance(encoder, str):
        args["encoder"] = encoder = MiningEncoder(encoder, progress=progress)
    args["hard_negative_options"] = dict(hard_negative_options or {})
    para_key = _component_key(paraphraser, "paraphraser")
    enc_key = _component_key(encoder or MiningEncoder(progress=False), "encoder")
    params = _cache_params(args, para_key, enc_key)
    cacheable = cache and para_key is not None and enc_key is not None
    with _stage("total", timings):
        return cached_dataset("pearl", params, lambda: _build(**args), enabled=cacheable)


def _cache_params(args: dict, para_key: str | None, enc_key: str | None) -> dict:
    """What identifies a PEARL table in the cache: the build's arguments that shape it and the code's digest."""
    return {
        "parse": parse_params(args["corpus"], args["spacy_model"], args["max_documents"], args["mining_options"]),
        "min_freq": args["min_freq"],
        "max_phrases": args["max_phrases"],
        "glove": args["glove"],
        "wordnet": args["use_wordnet"],
        "synonyms": {**DEFAULT_SYNONYM_OPTIONS, **dict(args["synonym_options"] or {})},
        "paraphraser": para_key,
        "hard_negatives": {
            "per_anchor": args["hard_negatives_per_anchor"],
            "encoder": enc_key,
            **args["hard_negative_options"],
        },
        "code": code_version(
            PEARL_DATA_VERSION,
            [_phrases_module, _synonyms_module, _paraphrase_module, _hard_negatives_module, _augment_module, _build],
        ),
    }


def _component_key(component, what: str) -> str | None:
    if component is None or isinstance(component, str):
        return str(component)
    key = getattr(component, "cache_key", None)
    if key is None:
        logger.info("The %s has no cache_key: the PEARL table will be rebuilt on every call.", what)
    return key


def _build(
    corpus: str,
    spacy_model: str,
    min_freq: int,
    max_phrases: int | None,
    glove: str | None,
    paraphraser: str | Paraphraser | None,
    hard_negatives_per_anchor: int,
    encoder: Encoder | None,
    cache: bool,
    progress: bool,
    max_documents: int | None,
    n_process: int | None,
    mining_options: MiningOptions | None,
    use_wordnet: bool,
    synonym_options: Mapping | None,
    hard_negative_options: Mapping,
    timings: dict | None,
) -> Dataset:
    """The uncached pipeline behind :func:`build_pearl_dataset` (stages 1-5 of the module docstring)."""
    with _stage("parse", timings):
        sentences = parse_corpus(
            corpus, spacy_model, max_documents, n_process, mining_options, cache=cache, progress=progress
        )
    with _stage("phrase_table", timings):
        table = phrase_table(sentences, min_freq=min_freq, max_phrases=max_phrases)
    phrases = list(table["phrase"])
    with _stage("synonyms", timings):
        synonyms = load_synonym_table(phrases, glove, use_wordnet, synonym_options, cache=cache)
    with _stage("paraphrases", timings):
        kwargs = {"progress": progress} if isinstance(paraphraser, str) and paraphraser != "none" else {}
        paraphrases = get_paraphraser(paraphraser, synonyms=synonyms, **kwargs).paraphrase(phrases)
    with _stage("hard_negatives", timings):
        if hard_negatives_per_anchor > 0:
            negatives = mine_hard_negatives(
                phrases,
                encoder,
                per_anchor=hard_negatives_per_anchor,
                exclude=paraphrases,
                progress=progress,
                **dict(hard_negative_options),
            )
        else:
            negatives = [[] for _ in phrases]
    features = Features(
        {**table.features, "paraphrases": List(Value("string")), "hard_negatives": List(Value("string"))}
    )
    columns = {name: table[name] for name in table.column_names}
    return Dataset.from_dict({**columns, "paraphrases": paraphrases, "hard_negatives": negatives}, features=features)


def build_augmenter(
    dataset: Dataset | None = None,
    glove: str | None = "glove-6b-50d",
    mix: Mapping[str, float] | None = None,
    synonyms: SynonymTable | None = None,
    paraphraser: Paraphraser | str | None = None,
    use_wordnet: bool = True,
    synonym_options: Mapping | None = None,
    cache: bool = True,
) -> Augmenter:
    """The :class:`Augmenter` consistent with a table from :func:`build_pearl_dataset`.

    Args:
        dataset: the PEARL table; its ``phrase`` column fixes the synonym vocabulary and its ``paraphrases`` column
            feeds phrase-level augmentation. ``None`` gives an augmenter without a vocabulary (give ``synonyms``).
        glove, use_wordnet, synonym_options: as for :func:`build_pearl_dataset` (pass the same values to get the
            same synonym table; it is then read from the cache).
        mix: augmentation weights (default: the official code's char 0.10, synonym 0.30, paraphrase 0.50, swap
            0.05, none 0.05).
        synonyms: a ready table (skips building one).
        paraphraser: fallback for phrases without a ``paraphrases`` entry (``"offline"`` or an object); default none.
    """
    phrases = list(dataset["phrase"]) if dataset is not None else []
    if synonyms is None:
        synonyms = load_synonym_table(phrases, glove, use_wordnet, synonym_options, cache) if phrases else None
    paraphrases = None
    if dataset is not None and "paraphrases" in dataset.column_names:
        paraphrases = dict(zip(phrases, dataset["paraphrases"]))
    fallback = get_paraphraser(paraphraser, synonyms=synonyms, progress=False) if paraphraser else None
    return Augmenter(synonyms=synonyms, paraphrases=paraphrases, mix=mix, paraphraser=fallback)


def alias_groups(pairs) -> dict[str, set[str]]:
    """Per alias phrase, every phrase linked to it through any chain of pairs (one entity's names: an anchor, its
    title and the title's other anchors), so that no name of an entity is mined as a negative of another."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, set[str]] = {}
    for x in parent:
        members.setdefault(root(x), set()).add(x)
    return {x: members[root(x)] for x in parent}


def mine_alias_negatives(pairs, per_anchor: int, encode: Encoder | None = None, **options) -> dict[str, list[str]]:
    """Look-alike names of *other* entities for each alias phrase ("Showtime (TV network)" -> "Showcase (TV
    channel)"): PEARL's hard-negative mining (:func:`mine_hard_negatives`) run over the alias phrases, with the whole
    entity group of a phrase (:func:`alias_groups`) excluded. A fuzzy join within one entity type (AutoFJ) has to
    tell exactly these apart; without them alias rows have in-batch negatives only."""
    groups = alias_groups(pairs)
    phrases = sorted(groups)
    negatives = mine_hard_negatives(
        phrases, encode, per_anchor=per_anchor, exclude=[sorted(groups[p]) for p in phrases], progress=False, **options
    )
    return {p: n for p, n in zip(phrases, negatives) if n}


def add_alias_rows(
    dataset: Dataset,
    pairs,
    repeat: int = 1,
    negatives: Mapping[str, list[str]] | None = None,
    typed: bool = False,
) -> tuple[Dataset, dict]:
    """The PEARL table plus alias rows: each ``(anchor, title)`` pair gives the rows ``anchor -> [title]`` and
    ``title -> [anchor]`` (paraphrase positives; by default of unknown type and without hard negatives), each
    ``repeat`` times; a phrase already in the table gets the alias added to its ``paraphrases`` instead of a second
    row.

    Real aliases are what the paper's phrase-level paraphraser is for ("The New York Times" -> "The Times"); offline,
    Wikipedia's link anchors give them ("I-20" -> "Interstate 20 in Alabama"). ``negatives`` (e.g. from
    :func:`mine_alias_negatives`) gives the new rows hard negatives. ``typed`` gives a new row the phrase type that
    the table holds for another name of the same entity (:func:`alias_groups`; the most frequent one), so the type
    term sees alias rows too. Returns ``(table, counts)``.
    """
    negatives = negatives or {}
    if repeat < 1:
        raise ValueError(f"alias_pairs.repeat must be >= 1, got {repeat}.")
    aliases: dict[str, list[str]] = {}
    for anchor, title in pairs:
        for phrase, other in ((anchor, title), (title, anchor)):
            known = aliases.setdefault(phrase, [])
            if other not in known:
                known.append(other)
    rows = dataset.to_dict()
    position = {phrase: i for i, phrase in enumerate(rows["phrase"])}
    extended = 0
    for phrase, others in aliases.items():
        if phrase in position:
            current = rows["paraphrases"][position[phrase]]
            rows["paraphrases"][position[phrase]] = current + [o for o in others if o not in current]
            extended += 1
    new = [p for p in aliases if p not in position]
    untyped = ("NP", "", "", -100)
    types = _group_types(pairs, rows, position) if typed else {}
    for _ in range(repeat):
        for phrase in new:
            phrase_class, entity_type, type_label, type_id = types.get(phrase, untyped)
            for column, value in (
                ("phrase", phrase), ("phrase_class", phrase_class), ("entity_type", entity_type),
                ("type_label", type_label), ("type_id", type_id), ("lemma", phrase.lower()), ("count", 0),
                ("paraphrases", aliases[phrase]), ("hard_negatives", list(negatives.get(phrase, []))),
            ):  # fmt: skip
                rows[column].append(value)
    table = Dataset.from_dict(rows, features=dataset.features)
    counts = {"alias phrases": len(aliases), "alias rows": len(new) * repeat, "table phrases extended": extended}
    if negatives:
        counts["alias rows with a hard negative"] = sum(bool(negatives.get(p)) for p in new) * repeat
    if typed:
        counts["alias rows with a phrase type"] = sum(p in types for p in new) * repeat
    return table, counts


def _group_types(pairs, rows: dict, position: dict[str, int]) -> dict[str, tuple[str, str, str, int]]:
    """Per alias phrase, the most frequent typed ``(phrase_class, entity_type, type_label, type_id)`` among the
    table rows of its entity's names (ties: the smallest), for phrases whose group has one."""
    out = {}
    for phrase, group in alias_groups(pairs).items():
        found = Counter(
            (rows["phrase_class"][i], rows["entity_type"][i], rows["type_label"][i], rows["type_id"][i])
            for i in (position[name] for name in group if name in position)
            if rows["type_id"][i] >= 0
        )
        if found:
            out[phrase] = min(found, key=lambda t: (-found[t], t))
    return out
