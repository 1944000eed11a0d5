"""The name benchmark: four domains of name variants, each linked against a knowledge base of look-alike siblings.

Domains (each with a ``dev`` and a ``test`` split; ``train`` entities are left for training data, never scored):

* ``acronyms``: an acronym or initialism -> its expansion ("ANSI" -> "American National Standard Institute");
* ``aliases``: another name of a named thing -> its canonical name ("big blue" -> "International Business
  Machines", "Mayetiola destructor" -> "Hessian fly", "Jean Harlow" -> "Harlean Carpenter");
* ``short-names``: a short form of a person's or company's name -> the full name ("Dickens" -> "Charles Dickens",
  "Bill Gates" -> "William Gates", "Siemens AG" -> "Siemens");
* ``noisy``: a name with typos, a dropped word or abbreviated words -> the name ("Intl Busness Machines").

**Splits by entity.** Every entity of :mod:`phrasezoo.data.benchmarks.name_sources` falls in one bucket by a stable hash of its
source and key: 10% ``dev``, 30% ``test``, 60% ``train``. A string (any name of an entity, in normal form) belongs to
one bucket only: an entity sharing a string with an entity of an earlier bucket (dev, then test, then train) is
dropped. So no entity and no alias string is in two splits.

**Knowledge bases of look-alike siblings.** One KB per domain and split: the gold names of its queries, each query's
siblings (the nearest canonical names of the split's other entities by character TF-IDF to the gold name and to the
query, and names sharing the gold's rarest content words: the hard cases, not random names), filled up to
:data:`MIN_KB` names with the split's canonical names nearest to the golds. A query that names another KB entry as
well (an acronym spelling another name's initials, a surname another KB person has) is ambiguous and dropped.

The build is deterministic and cached (``cache_dir()/name-benchmark/v<VERSION>``): :func:`load_benchmark` returns
every :class:`NameTask` (queries, golds, KB). The benchmark is built on the shared level, not in the evaluation
workflow, because training must leave out exactly its scored strings (:mod:`phrasezoo.data.benchmarks.held_out`:
``scored_strings``, ``training_entities``); the evaluation reads a domain's split and the ``calib`` split through
:mod:`phrasezoo.evaluation.datasets.names`. The name variants and the sibling miner are
:mod:`phrasezoo.data.benchmarks.name_generators`.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from phrasezoo.resources import cache_dir, load_wordnet
from phrasezoo.resources.corpora import load_wiki_leads
from phrasezoo.resources.splits import normalize, stable_hash

from . import name_sources as sources
from .name_generators import SiblingMiner, company_variant, noisy_variant, person_short
from .name_sources import NameEntity, initials, is_acronym

VERSION = "3"
DOMAINS = ("acronyms", "aliases", "short-names", "noisy")
SPLITS = ("dev", "test")
MIN_KB = 2000
MAX_QUERIES = {"dev": 600, "test": 2000, "calib": 2000}
CALIB = "calib"  # a third split from train entities, for threshold calibration only (never fitted, never scored)
SIBLINGS_GOLD, SIBLINGS_QUERY, SIBLINGS_WORDS = 6, 3, 3


@dataclass
class NameTask:
    """One domain's split: ``queries[i]`` names ``gold[i]``, an entry of ``kb``; ``kinds[i]`` the variant kind and
    ``sources[i]`` the entity's source; ``stats`` the build's counts."""

    domain: str
    split: str
    queries: list[str]
    gold: list[str]
    kb: list[str]
    kinds: list[str]
    sources: list[str]
    stats: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"names-{self.domain}-{self.split}"


def bucket_of(entity: NameEntity) -> str:
    """``dev`` (10%), ``test`` (30%) or ``train`` (60%) by a stable hash of the entity's source and key."""
    value = stable_hash(f"{entity.source}:{entity.key}", "name-benchmark") % 10
    return "dev" if value == 0 else "test" if value <= 3 else "train"


def entity_strings(entity: NameEntity) -> set[str]:
    return {normalize(entity.canonical)} | {normalize(name) for name, _ in entity.aliases}


def split_entities(entities: list[NameEntity]) -> dict[str, list[NameEntity]]:
    """Entities by bucket, an entity dropped when one of its strings belongs to an entity of an earlier bucket."""
    by_bucket: dict[str, list[NameEntity]] = {"dev": [], "test": [], "train": []}
    for entity in entities:
        by_bucket[bucket_of(entity)].append(entity)
    taken: set[str] = set()
    out: dict[str, list[NameEntity]] = {}
    for bucket in ("dev", "test", "train"):
        kept = [e for e in by_bucket[bucket] if not (entity_strings(e) & taken)]
        for entity in kept:
            taken |= entity_strings(entity)
        out[bucket] = kept
    return out


# ----------------------------------------------------------------------------------------------------- queries
def domain_queries(domain: str, entity: NameEntity, extras: dict) -> tuple[str, str] | None:
    """The query ``(string, kind)`` an entity gives ``domain`` (``None`` when it gives none): one per entity,
    chosen by a seed of the entity, so that every entity counts once."""
    rng = random.Random(stable_hash(f"{entity.source}:{entity.key}", f"query-{domain}"))
    if domain == "acronyms":
        found = [(n, k) for n, k in entity.aliases if k == "acronym"]
    elif domain == "aliases":
        found = [(n, k) for n, k in entity.aliases if k == "other" and sum(c.isalpha() for c in n) >= 3
                 and normalize(n) not in normalize(entity.canonical).split()]  # fmt: skip
    elif domain == "short-names":
        found = [(n, k) for n, k in entity.aliases if k == "short"]
        if entity.kind == "person":  # WordNet's short lemmas and the written forms: initial, nickname, first + last
            made = person_short(entity.canonical, rng, extras["nicknames"])
            found += [made] if made else []
        elif not found and entity.kind == "company" and len(entity.canonical) >= 3:
            found = [company_variant(entity.canonical, rng, extras["legal_forms"])]
    else:
        if len(entity.canonical.split()) < 2 or len(entity.canonical) > 80:
            return None
        variant = noisy_variant(entity.canonical, rng)
        found = [(variant, "noisy")] if variant else []
    found = [(n, k) for n, k in found if normalize(n) and normalize(n) != normalize(entity.canonical)]
    return rng.choice(found) if found else None


def ambiguous(query: str, kind: str, name: str) -> bool:
    """Whether ``query`` names ``name`` as well as its gold: an acronym spelling ``name``'s initials, or a short
    person name whose words ``name`` ends with."""
    if kind == "acronym" and is_acronym(query):
        return initials(name) == re.sub(r"[^a-z0-9]", "", query.lower())
    if kind in ("short", "initial", "nickname"):
        q, n = normalize(query).split(), normalize(name).split()
        return bool(q) and len(n) > len(q) and n[-1] == q[-1] and (len(q) == 1 or n[0][0] == q[0][0])
    return False


# --------------------------------------------------------------------------------------------------- build
def build_task(domain: str, split: str, entities: list[NameEntity], pool: list[str], extras: dict,
               taken: frozenset[str] = frozenset(), miner: SiblingMiner | None = None) -> NameTask:  # fmt: skip
    """One domain's split from the split's entities and name pool (see the module docstring); a made query whose
    normal form is in ``taken`` (an earlier split's queries and golds) is not used. ``miner``: the pool's
    :class:`SiblingMiner`, when the caller builds several domains from one pool (the same result, fitted once)."""
    rows, seen = [], Counter()
    for entity in entities:
        found = domain_queries(domain, entity, extras)
        if found is not None and normalize(found[0]) not in taken:
            rows.append((found[0], found[1], entity))
            seen[normalize(found[0])] += 1
    rows = [r for r in rows if seen[normalize(r[0])] == 1]  # a query string two entities give is ambiguous
    order = sorted(range(len(rows)), key=lambda i: stable_hash(rows[i][0], f"order-{domain}-{split}"))
    rows = [rows[i] for i in order[: MAX_QUERIES[split] * 5 // 4]]
    miner = miner if miner is not None else SiblingMiner(pool)
    near_gold = miner.nearest([e.canonical for _, _, e in rows], SIBLINGS_GOLD + 1)
    near_query = miner.nearest([q for q, _, _ in rows], SIBLINGS_QUERY + 1)
    kb: dict[str, None] = {}
    for (_query, _kind, entity), g_rows, q_rows in zip(rows, near_gold, near_query):
        own = entity_strings(entity)
        kb[entity.canonical] = None
        words = miner.sharing_words(entity.canonical, SIBLINGS_WORDS + 1)
        picked = [j for j in g_rows if normalize(pool[j]) not in own][:SIBLINGS_GOLD]
        picked += [j for j in q_rows if normalize(pool[j]) not in own][:SIBLINGS_QUERY]
        picked += [j for j in words if normalize(pool[j]) not in own][:SIBLINGS_WORDS]
        for j in picked:
            kb.setdefault(pool[j], None)
    siblings = len(kb)
    if len(kb) < MIN_KB:
        fill = miner.nearest(list(kb), 8)
        for j in (j for row in zip(*[iter(r + [-1] * 8) for r in fill]) for j in row):
            if len(kb) >= MIN_KB:
                break
            if j >= 0:
                kb.setdefault(pool[j], None)
    kb_names = list(kb)
    kb_norm = {normalize(n): n for n in kb_names}
    by_last: dict[str, list[str]] = defaultdict(list)  # the KB names an acronym or a short name could also name
    for norm, name in kb_norm.items():
        by_last[norm.split()[-1] if norm else ""].append(norm)
        by_last["#" + initials(name)].append(norm)
    kept, dropped = [], 0
    for query, kind, entity in rows:
        own = entity_strings(entity)
        key = (
            "#" + re.sub(r"[^a-z0-9]", "", query.lower())
            if kind == "acronym"
            else (normalize(query).split() or [""])[-1]
        )
        if kind in ("acronym", "short", "initial", "nickname") and any(
            ambiguous(query, kind, kb_norm[norm]) for norm in by_last.get(key, ()) if norm not in own
        ):
            dropped += 1
            continue
        if normalize(query) in kb_norm:  # the query itself is another KB entry
            dropped += 1
            continue
        kept.append((query, kind, entity))
    kept = kept[: MAX_QUERIES[split]]
    stats = {"queries": len(kept), "kb": len(kb_names), "kb_golds_and_siblings": siblings,
             "dropped_ambiguous": dropped, "kinds": dict(Counter(k for _, k, _ in kept)),
             "sources": dict(Counter(e.source for _, _, e in kept))}  # fmt: skip
    return NameTask(domain, split, [q for q, _, _ in kept], [e.canonical for _, _, e in kept], kb_names,
                    [k for _, k, _ in kept], [e.source for _, _, e in kept], stats)  # fmt: skip


def all_entities() -> list[NameEntity]:
    """Every entity of every source, in a fixed order."""
    wordnet = load_wordnet()
    if wordnet is None:
        raise sources.SourceMissing(
            "The name benchmark needs WordNet: apt-get install wordnet-base wordnet-sense-index"
        )
    entities = list(sources.vera_entities()) + list(sources.foldoc_entities())
    entities += list(sources.wordnet_entities(wordnet)) + list(sources.wiki_lead_entities(load_wiki_leads()))
    return entities


def query_extras() -> dict:
    """What :func:`domain_queries` needs beyond an entity: the given names' nicknames and the companies' legal
    forms (read from their packages)."""
    return {"nicknames": sources.nickname_table(), "legal_forms": sources.legal_forms()}


def build_benchmark() -> dict[str, NameTask]:
    """Every domain's dev and test task (uncached; :func:`load_benchmark` caches)."""
    extras = query_extras()
    buckets = split_entities(all_entities())
    out: dict[str, NameTask] = {}
    taken: set[str] = set()  # made queries (a surname, an initial) may repeat across splits: the first split keeps it
    for split in SPLITS:
        pool = list({normalize(e.canonical): e.canonical for e in buckets[split]}.values())
        miner = SiblingMiner(pool)
        for domain in DOMAINS:
            task = build_task(domain, split, buckets[split], pool, extras, frozenset(taken), miner)
            out[task.name] = task
        taken |= {normalize(s) for task in out.values() for s in task.queries + task.gold}
    return out


def _cache_file() -> Path:
    return cache_dir() / "name-benchmark" / f"v{VERSION}.json"


def cached_tasks(path: Path, build: Callable[[], dict[str, NameTask]]) -> dict[str, NameTask]:
    """Tasks read from the JSON cache ``path``, or built by ``build()`` and written there atomically."""
    if path.exists():
        return {name: NameTask(**row) for name, row in json.loads(path.read_text()).items()}
    tasks = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({name: asdict(task) for name, task in tasks.items()}))
    tmp.replace(path)
    return tasks


def load_benchmark() -> dict[str, NameTask]:
    """Every task, built once and cached as JSON."""
    return cached_tasks(_cache_file(), build_benchmark)
