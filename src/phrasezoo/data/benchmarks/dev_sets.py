"""The data of the phrase dev suite: small item sets built only from offline resources that no test benchmark uses.

Hyper-parameters, checkpoints and mixing weights are chosen on these sets, never on the reported benchmarks
(Turney, BiRD, PPDB, PPDB-filtered, YAGO, UMLS, CoNLL-2003, BC5CDR, AutoFJ, STS-B-Context). The sources:

* ``pivot``: the dev split of the dict-de-en bilingual-pivot table (:func:`phrasezoo.data.lexical.pivot.is_dev_pivot_pair`;
  training uses the ``"train"`` split, which shares no phrase with it), multi-word pairs first, one pair per phrase;
* ``wiki``: the wiki-leads articles whose title hashes into the dev split
  (:func:`phrasezoo.resources.splits.is_dev_title`): title -> one-line description, title -> topic, and
  realistically corrupted titles (:func:`phrasezoo.data.benchmarks.name_generators.corrupt_title`) -> clean title;
* ``wordsim``: WordSim-353 and SimLex-999 as shipped in gensim's test data;
* ``compound``: WordNet two-word compounds -> their one-word synonym among five candidates, Turney's format
  (:mod:`phrasezoo.data.lexical.dev_compound`; training synonym tables leave these synsets out);
* ``alias``: real Wikipedia alias pairs, the links ``[[Target title|anchor text]]`` of gensim's embedded dump
  (:mod:`phrasezoo.data.corpus.wiki_links`) whose anchor differs from the title: anchor text -> its target title among
  all dev titles (fuzzy-join / entity-alias proxy, like AutoFJ and YAGO/UMLS).

Every item passes :func:`phrasezoo.data.benchmark_filter.remove_benchmark_items` in ``"strict"`` mode (no string of
an item equals a benchmark string, single words included, and no item holds a benchmark pair). Splits and caps use
stable hashes (BLAKE2b of the normalised key), so two builds are identical on any machine. Built sets are cached as
JSON under ``<cache>/dev_suite/`` keyed by :data:`VERSION`, the cap and the source files' size and time.

The sets are built here, on the shared level, and not in the evaluation workflow that scores on them
(:mod:`phrasezoo.evaluation.dev.suite`): training must leave out exactly their strings
(:func:`phrasezoo.data.benchmarks.held_out.dev_set_strings`), so it must be able to build them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from phrasezoo.core.errors import MissingResourceError
from phrasezoo.resources import cache_dir, corpora, load_wordnet, wordnet_install_hint
from phrasezoo.resources.splits import ALIAS_DEV_MODULUS, is_dev_title, stable_hash

from ..benchmark_filter import (
    BenchmarkBlocklist,
    default_benchmarks_dir,
    load_blocklist,
    normalize,
    remove_benchmark_items,
)
from ..corpus.wiki_links import clean_alias_pairs, link_pairs, resolve_wiki_dump
from ..lexical import pivot
from ..lexical.dev_compound import build_compound_dev
from .name_generators import corrupt_title

logger = logging.getLogger(__name__)

VERSION = "1"  # bump when any construction below changes: it keys the cache and is written to results
SOURCES = ("pivot", "wiki", "wordsim", "compound", "alias")
PIVOT_MAX_PAIRS = 1500
PIVOT_MIN_SCORE = 0.2  # pivot probability below this is mostly noise ("floral spray" / "package items")
UNCATEGORIZED = "Uncategorized"  # a wiki-leads topic that is no topic: left out of clustering
WORDNET_DIR = Path("/usr/share/wordnet")  # Debian's wordnet-base (the compound dev set)
WORDSIM_FILES = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}


# ---------------------------------------------------------------------------------------------- pivot pairs
def build_pivot_dev(
    table: Any,
    max_pairs: int | None = PIVOT_MAX_PAIRS,
    min_score: float = PIVOT_MIN_SCORE,
    blocklist: BenchmarkBlocklist | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """The paraphrase-retrieval set from a :class:`~phrasezoo.data.lexical.pivot.PivotTable`'s dev split.

    Candidate pairs (dev split, ``score >= min_score``, benchmark items removed) are ranked: both sides multi-word
    first, then one side, then single words; within a tier by stable hash. Pairs are taken greedily so that no
    phrase (normalised) appears twice, up to ``max_pairs``. Any other table pair between two chosen phrases is kept
    as an extra gold link, so retrieving another true paraphrase is not counted wrong.

    Returns ``{"left": [...], "right": [...], "links": [[i, j], ...], "filter": report}``: ``left[i]`` and
    ``right[i]`` are a pair; ``links`` are extra (left i, right j) paraphrase pairs.
    """
    pool = [
        p
        for p in table.pairs
        if p.score >= min_score and pivot.is_dev_pivot_pair(p.phrase, p.paraphrase) and normalize(p.phrase)
    ]
    pool, report = remove_benchmark_items(
        pool, benchmarks_dir, key=lambda p: (p.phrase, p.paraphrase), blocklist=blocklist, mode="strict", log=False
    )

    def rank(pair) -> tuple[int, int]:
        multi = (" " in pair.phrase.strip()) + (" " in pair.paraphrase.strip())
        return (2 - multi, stable_hash(f"{pair.phrase}\t{pair.paraphrase}", "pivot-pair"))

    left: list[str] = []
    right: list[str] = []
    used: set[str] = set()
    for pair in sorted(pool, key=rank):
        a, b = normalize(pair.phrase), normalize(pair.paraphrase)
        if a in used or b in used or a == b:
            continue
        used.update((a, b))
        # orient by hash, so neither side is systematically the dictionary's first entry
        first, second = (pair.phrase, pair.paraphrase)
        if stable_hash(first, "pivot-side") % 2:
            first, second = second, first
        left.append(first)
        right.append(second)
        if max_pairs is not None and len(left) >= max_pairs:
            break
    position = {normalize(t): ("left", i) for i, t in enumerate(left)}
    position.update({normalize(t): ("right", i) for i, t in enumerate(right)})
    links: set[tuple[int, int]] = set()
    for pair in table.pairs:  # every paraphrase relation between chosen phrases, whatever its split or score
        a, b = position.get(normalize(pair.phrase)), position.get(normalize(pair.paraphrase))
        if a is None or b is None or a[0] == b[0]:
            continue
        i, j = (a[1], b[1]) if a[0] == "left" else (b[1], a[1])
        if i != j:
            links.add((i, j))
    return {"left": left, "right": right, "links": sorted([i, j] for i, j in links), "filter": report.as_dict()}


def build_wiki_dev(
    leads: Any,
    max_items: int | None = None,
    blocklist: BenchmarkBlocklist | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """The three wiki-leads dev sets from the dev articles (:func:`is_dev_title`), in stable-hash order.

    An article is kept when its title, description and corrupted title pass the strict benchmark filter, the
    corrupted title differs from every dev title (normalised), and its title is unique (normalised). ``max_items``
    caps the articles (the first ones in hash order, so a smaller cap is a subset of a larger one).

    Returns ``{"description": {"queries", "candidates", "gold"}, "topics": {"texts", "labels"},
    "fuzzy": {"queries", "candidates", "gold"}, "filter": report}`` (``gold[i]``: index into ``candidates``).
    """
    dev = sorted((lead for lead in leads if is_dev_title(lead.title)), key=lambda x: stable_hash(x.title, "wiki"))
    items = [(lead, corrupt_title(lead.title)) for lead in dev]
    items = [(lead, noisy) for lead, noisy in items if normalize(noisy) != normalize(lead.title)]
    items, report = remove_benchmark_items(
        items,
        benchmarks_dir,
        key=lambda item: [s for s in (item[0].title, item[0].description, item[1]) if s],
        blocklist=blocklist,
        mode="strict",
        log=False,
    )
    titles = {normalize(lead.title) for lead, _ in items}
    kept, seen = [], set()
    for lead, noisy in items:
        key = normalize(lead.title)
        if key in seen or normalize(noisy) in titles:
            continue
        seen.add(key)
        kept.append((lead, noisy))
        if max_items is not None and len(kept) >= max_items:
            break
    described = [(lead.title, lead.description) for lead, _ in kept if lead.description]
    descriptions = list(dict.fromkeys(d for _, d in described))
    slot = {d: i for i, d in enumerate(descriptions)}
    topical = [(lead.title, lead.topic) for lead, _ in kept if lead.topic and lead.topic != UNCATEGORIZED]
    return {
        "description": {
            "queries": [t for t, _ in described],
            "candidates": descriptions,
            "gold": [slot[d] for _, d in described],
        },
        "topics": {"texts": [t for t, _ in topical], "labels": [label for _, label in topical]},
        "fuzzy": {
            "queries": [noisy for _, noisy in kept],
            "candidates": [lead.title for lead, _ in kept],
            "gold": list(range(len(kept))),
        },
        "filter": report.as_dict(),
    }


# ---------------------------------------------------------------------------------------------- word pairs
def wordsim_dir() -> Path:
    """gensim's ``test/test_data`` folder (found without importing gensim, which takes seconds)."""
    spec = importlib.util.find_spec("gensim")
    if spec is None or spec.origin is None:
        raise MissingResourceError(
            "dev_wordsim reads WordSim-353 and SimLex-999 from gensim's test data: pip install gensim"
        )
    folder = Path(spec.origin).parent / "test" / "test_data"
    missing = [name for name in WORDSIM_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise MissingResourceError(f"{', '.join(missing)} missing from {folder}; reinstall gensim: pip install gensim")
    return folder


def read_word_pairs(path: str | os.PathLike) -> list[tuple[str, str, float]]:
    """``(word1, word2, human score)`` rows of a WordSim/SimLex tab-separated file (``#`` lines are comments)."""
    rows = []
    with open(path, encoding="utf8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(fields) < 3 or not fields[0].strip():
                continue
            rows.append((fields[0].strip(), fields[1].strip(), float(fields[2])))
    return rows


def build_wordsim_dev(
    folder: str | os.PathLike | None = None,
    max_items: int | None = None,
    blocklist: BenchmarkBlocklist | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """WordSim-353 + SimLex-999 pairs that pass the strict benchmark filter (most do not: their words are Turney,
    BiRD or PPDB items). ``max_items`` caps the pairs (stable-hash order). Returns ``{"left", "right", "gold",
    "source", "filter"}``; gold scores are the datasets' own (both 0..10)."""
    folder = Path(folder) if folder is not None else wordsim_dir()
    rows = [
        (a, b, score, name) for name, file in WORDSIM_FILES.items() for a, b, score in read_word_pairs(folder / file)
    ]
    rows, report = remove_benchmark_items(
        rows, benchmarks_dir, key=lambda r: (r[0], r[1]), blocklist=blocklist, mode="strict", log=False
    )
    rows.sort(key=lambda r: stable_hash(f"{r[3]}\t{r[0]}\t{r[1]}", "wordsim"))
    if max_items is not None:
        rows = rows[:max_items]
    return {
        "left": [r[0] for r in rows],
        "right": [r[1] for r in rows],
        "gold": [r[2] for r in rows],
        "source": [r[3] for r in rows],
        "filter": report.as_dict(),
    }


# -------------------------------------------------------------------------------------------- alias pairs
def build_alias_dev(
    pairs: Any, blocklist: BenchmarkBlocklist, max_items: int | None = None, split: str | None = "dev"
) -> dict[str, Any]:
    """The alias-retrieval set from ``(anchor text, target title)`` link pairs: each anchor retrieves its title.

    Only the dev titles' pairs are used (``split="dev"``, :func:`phrasezoo.resources.splits.is_dev_alias_title`: training
    may read the others; ``None`` keeps all), after the rules of :func:`phrasezoo.data.corpus.wiki_links.clean_alias_pairs` (short, numeric, same-text and
    benchmark pairs dropped). Queries are the distinct anchors (normalised; the
    alphabetically first spelling is shown). A query whose text equals a candidate title it does not link to is
    ambiguous ("Brazil" linked to "Empire of Brazil" while "Brazil" is a candidate) and dropped. ``max_items`` caps
    the queries (stable-hash order, so a smaller cap is a subset of a larger one); candidates are the distinct
    titles of the kept queries, in stable-hash order.

    Returns ``{"queries", "candidates", "gold", "filter", "dropped"}``: ``gold[i]`` lists the indices of every
    candidate that query ``i`` links to; ``filter`` is the benchmark filter's report, ``dropped`` counts the pairs
    (queries, for ``ambiguous``) that the other rules dropped.
    """
    valid, report, dropped = clean_alias_pairs(pairs, blocklist, split=split)
    dropped["ambiguous"] = 0
    spellings: dict[str, set[str]] = {}
    links: dict[str, set[str]] = {}
    for anchor, title in valid:
        spellings.setdefault(normalize(anchor), set()).add(anchor)
        spellings.setdefault(normalize(title), set()).add(title)
        links.setdefault(normalize(anchor), set()).add(normalize(title))
    titles = {t for linked in links.values() for t in linked}
    keys = []
    for key in sorted(links, key=lambda k: (stable_hash(k, "alias"), k)):
        if key in titles:  # never its own title: same-text pairs are gone
            dropped["ambiguous"] += 1
            continue
        keys.append(key)
    if max_items is not None:
        keys = keys[:max_items]
    targets = sorted({t for k in keys for t in links[k]}, key=lambda t: (stable_hash(t, "alias-title"), t))
    slot = {t: i for i, t in enumerate(targets)}
    return {
        "queries": [min(spellings[k]) for k in keys],
        "candidates": [min(spellings[t]) for t in targets],
        "gold": [sorted(slot[t] for t in links[k]) for k in keys],
        "filter": report,
        "dropped": dropped,
    }


# -------------------------------------------------------------------------------------------------- caching
def _file_signature(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def _source_signature(source: str) -> str:
    """Identifies the input files of one source (raises MissingResourceError with the install hint if absent)."""
    if source == "pivot":
        if not pivot.DICT_PATH.is_file():
            raise MissingResourceError(
                f"dev_paraphrase needs the German-English dictionary {pivot.DICT_PATH}: {pivot.INSTALL_HINT}"
            )
        return f"{_file_signature(pivot.DICT_PATH)}:pivot-v{pivot.VERSION}:mod{pivot.DEV_MODULUS}"
    if source == "wiki":
        return _file_signature(corpora.wiki_leads_path())
    if source == "wordsim":
        folder = wordsim_dir()
        return "|".join(_file_signature(folder / name) for name in WORDSIM_FILES.values())
    if source == "compound":
        return _file_signature(WORDNET_DIR / "data.noun")
    if source == "alias":
        try:
            return f"{_file_signature(resolve_wiki_dump('embedded'))}:dev-titles-of-{ALIAS_DEV_MODULUS}"
        except FileNotFoundError as err:
            raise MissingResourceError(f"dev_alias reads the links of gensim's embedded Wikipedia dump: {err}") from err
    raise ValueError(f"Unknown dev source {source!r}; use one of {SOURCES}.")


def _build(source: str, max_items: int | None, blocklist: BenchmarkBlocklist, progress: bool) -> dict[str, Any]:
    if source == "pivot":
        table = pivot.load_pivot_table(pivot.DICT_PATH, progress=progress)
        return build_pivot_dev(table, max_pairs=max_items or PIVOT_MAX_PAIRS, blocklist=blocklist)
    if source == "wiki":
        return build_wiki_dev(corpora.load_wiki_leads(), max_items=max_items, blocklist=blocklist)
    if source == "compound":
        wordnet = load_wordnet(str(WORDNET_DIR))
        if wordnet is None:
            raise MissingResourceError(f"The 'compound' dev set needs WordNet. {wordnet_install_hint()}")
        return build_compound_dev(wordnet, blocklist, max_items=max_items)
    if source == "alias":
        return build_alias_dev(link_pairs("embedded", progress=progress), blocklist, max_items=max_items)
    return build_wordsim_dev(max_items=max_items, blocklist=blocklist)


def load_dev_set(
    source: str,
    max_items: int | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
    rebuild: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """One source's dev sets (see the ``build_*_dev`` functions), from the JSON cache or built (no network).

    Raises :class:`~phrasezoo.core.errors.MissingResourceError` (install hint in the message) when the source's files are
    not installed, and ``FileNotFoundError`` when the benchmark files needed to check disjointness are not found
    (``benchmarks_dir``, default ``$PHRASEZOO_BENCHMARKS`` or ``../shared/benchmarks``).
    """
    if source not in SOURCES:
        raise ValueError(f"Unknown dev source {source!r}; use one of {SOURCES}.")
    if max_items is not None and max_items < 1:
        raise ValueError(f"max_items must be a positive number or None, got {max_items}.")
    bench = Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    key = f"{VERSION}|{source}|{max_items}|{_source_signature(source)}|{bench.resolve()}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    target = cache_dir() / "dev_suite" / f"{source}-v{VERSION}-{digest}.json"
    if target.is_file() and not rebuild:
        with open(target, encoding="utf8") as handle:
            return json.load(handle)["sets"]
    sets = _build(source, max_items, load_blocklist(bench), progress)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf8") as handle:
        json.dump({"version": VERSION, "source": source, "key": key, "sets": sets}, handle, ensure_ascii=False)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    logger.info("dev suite: %s dev sets cached in %s", source, target)
    return sets
