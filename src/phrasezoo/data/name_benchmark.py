"""The name benchmark: four domains of name variants, each linked against a knowledge base of look-alike siblings.

Domains (each with a ``dev`` and a ``test`` split; ``train`` entities are left for training data, never scored):

* ``acronyms``: an acronym or initialism -> its expansion ("ANSI" -> "American National Standard Institute");
* ``aliases``: another name of a named thing -> its canonical name ("big blue" -> "International Business
  Machines", "Mayetiola destructor" -> "Hessian fly", "Jean Harlow" -> "Harlean Carpenter");
* ``short-names``: a short form of a person's or company's name -> the full name ("Dickens" -> "Charles Dickens",
  "Bill Gates" -> "William Gates", "Siemens AG" -> "Siemens");
* ``noisy``: a name with typos, a dropped word or abbreviated words -> the name ("Intl Busness Machines").

**Splits by entity.** Every entity of :mod:`phrasezoo.data.name_sources` falls in one bucket by a stable hash of its
source and key: 10% ``dev``, 30% ``test``, 60% ``train``. A string (any name of an entity, in normal form) belongs to
one bucket only: an entity sharing a string with an entity of an earlier bucket (dev, then test, then train) is
dropped. So no entity and no alias string is in two splits.

**Knowledge bases of look-alike siblings.** One KB per domain and split: the gold names of its queries, each query's
siblings (the nearest canonical names of the split's other entities by character TF-IDF to the gold name and to the
query, and names sharing the gold's rarest content words: the hard cases, not random names), filled up to
:data:`MIN_KB` names with the split's canonical names nearest to the golds. A query that names another KB entry as
well (an acronym spelling another name's initials, a surname another KB person has) is ambiguous and dropped.

The build is deterministic and cached (``cache_dir()/name-benchmark/v<VERSION>``); :func:`load_name_task` returns a
:class:`NameTask` (queries, golds, KB), :func:`training_entities` the ``train`` bucket for training recipes.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

import numpy as np

from phrasezoo.resources import cache_dir
from phrasezoo.resources.splits import normalize, stable_hash

from .name_sources import STOP_WORDS, WORD, NameEntity, initials, is_acronym

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
#: abbreviations of words as catalogues write them (the ``noisy`` domain)
ABBREVIATIONS = {"international": "Intl", "corporation": "Corp", "company": "Co.", "university": "Univ.",
                 "association": "Assn", "department": "Dept.", "incorporated": "Inc", "limited": "Ltd",
                 "national": "Natl", "institute": "Inst.", "technology": "Tech", "saint": "St.", "mount": "Mt.",
                 "brothers": "Bros.", "manufacturing": "Mfg", "services": "Svcs", "systems": "Sys.",
                 "management": "Mgmt", "government": "Govt", "american": "Amer.", "european": "Eur.",
                 "laboratory": "Lab", "laboratories": "Labs", "engineering": "Eng.", "development": "Dev.",
                 "communications": "Comms", "research": "Res.", "society": "Soc.", "general": "Gen.",
                 "center": "Ctr", "centre": "Ctr", "federal": "Fed.", "network": "Netw.", "standard": "Std",
                 "protocol": "Proto.", "information": "Info", "computer": "Comp.", "interface": "Intf.",
                 "professional": "Prof.", "doctor": "Dr.", "william": "Wm.", "charles": "Chas.",
                 "thomas": "Thos.", "and": "&", "processing": "Proc.", "electronic": "Elec.",
                 "electronics": "Elec."}  # fmt: skip
_KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def _neighbour_key(char: str, rng: random.Random) -> str:
    for row in _KEYBOARD:
        i = row.find(char.lower())
        if i >= 0:
            options = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            return rng.choice(options)
    return char


def typo(word: str, rng: random.Random) -> str:
    """One keyboard typo in a word of 4+ letters: swapped, dropped, doubled or neighbouring-key letter."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:
        return word[:i] + word[i + 1 :]
    if op == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + _neighbour_key(word[i], rng) + word[i + 1 :]


def noisy_variant(name: str, rng: random.Random) -> str | None:
    """``name`` with one or two corruptions: abbreviated words, a typo, a dropped word (of 3+), case folded."""
    words = name.split()
    ops = ["typo", "abbreviate", "drop", "typo2"]
    rng.shuffle(ops)
    done = 0
    for op in ops:
        if done == 2:
            break
        if op == "abbreviate":
            hits = [i for i, w in enumerate(words) if w.lower().strip(",") in ABBREVIATIONS]
            for i in hits:
                words[i] = ABBREVIATIONS[words[i].lower().strip(",")]
            done += bool(hits)
        elif op == "drop" and len(words) >= 3:
            words.pop(rng.randrange(1, len(words)))
            done += 1
        elif op.startswith("typo"):
            long = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
            if long:
                i = rng.choice(long)
                words[i] = typo(words[i], rng)
                done += 1
    if rng.random() < 0.2:
        words = [w.lower() for w in words]
    variant = " ".join(words)
    return variant if done and normalize(variant) != normalize(name) else None


def _person_short(name: str, rng: random.Random, nicknames: dict[str, list[str]]) -> tuple[str, str] | None:
    """A short form of a person's full name: the surname, initials and surname, or a nickname and surname."""
    words = name.split()
    if len(words) < 2:
        return None
    first, last = words[0], words[-1]
    options = [(last, "short"), (f"{first[0]}. {last}", "initial")]
    nick = nicknames.get(first.lower())
    if nick:
        options.append((f"{rng.choice(nick).title()} {last}", "nickname"))
    if len(words) >= 3:
        options.append((f"{first} {last}", "short"))
    return rng.choice(options)


def _company_variant(name: str, rng: random.Random, forms: tuple[str, ...]) -> tuple[str, str]:
    """``name`` without its legal form when it has one ("Apple Inc." -> "Apple"), else with one added."""
    lowered = name.lower().rstrip(".")
    for form in sorted(forms, key=len, reverse=True):
        tail = form.lower().rstrip(".")
        if lowered.endswith(" " + tail) or lowered.endswith(", " + tail):
            return name[: len(name) - len(form)].rstrip(" ,.") if len(name) > len(form) + 2 else name, "legal-form"
    return f"{name} {rng.choice(forms)}", "legal-form"


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
            made = _person_short(entity.canonical, rng, extras["nicknames"])
            found += [made] if made else []
        elif not found and entity.kind == "company" and len(entity.canonical) >= 3:
            found = [_company_variant(entity.canonical, rng, extras["legal_forms"])]
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


# ------------------------------------------------------------------------------------------------ siblings
def _content_words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1]


class SiblingMiner:
    """Look-alike siblings from a pool of names: character TF-IDF neighbours and names sharing rare words."""

    def __init__(self, pool: list[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.pool = pool
        self.vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, dtype=np.float32)
        self.matrix = self.vectorizer.fit_transform(pool).tocsr()
        self.by_word: dict[str, list[int]] = defaultdict(list)
        for i, name in enumerate(pool):
            for word in set(_content_words(name)):
                self.by_word[word].append(i)

    def nearest(self, texts: list[str], k: int) -> list[list[int]]:
        """The ``k`` pool rows nearest each text by character TF-IDF cosine."""
        out = []
        queries = self.vectorizer.transform(texts)
        for start in range(0, len(texts), 512):
            sims = (queries[start : start + 512] @ self.matrix.T).toarray()
            top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
            out.extend([[int(j) for j in row if sims[r, j] > 0] for r, row in enumerate(top)])
        return out

    def sharing_words(self, text: str, k: int) -> list[int]:
        """Up to ``k`` pool rows sharing the rarest content words of ``text`` (most shared words first)."""
        # ties between equally rare words go by the word itself: a set's order follows Python's hash seed
        words = sorted(set(_content_words(text)), key=lambda w: (len(self.by_word.get(w, ())), w))
        counts: Counter = Counter()
        for word in words[:3]:
            rows = self.by_word.get(word, ())
            if 1 < len(rows) <= 200:
                counts.update(rows)
        return [row for row, _ in counts.most_common(k)]


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
    from phrasezoo.resources import load_wordnet
    from phrasezoo.resources.corpora import load_wiki_leads

    from . import name_sources as sources

    wordnet = load_wordnet()
    if wordnet is None:
        raise sources.SourceMissing(
            "The name benchmark needs WordNet: apt-get install wordnet-base wordnet-sense-index"
        )
    entities = list(sources.vera_entities()) + list(sources.foldoc_entities())
    entities += list(sources.wordnet_entities(wordnet)) + list(sources.wiki_lead_entities(load_wiki_leads()))
    return entities


def build_benchmark() -> dict[str, NameTask]:
    """Every domain's dev and test task (uncached; :func:`load_name_task` caches)."""
    from . import name_sources as sources

    extras = {"nicknames": sources.nickname_table(), "legal_forms": sources.legal_forms()}
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


def _cache_file():
    return cache_dir() / "name-benchmark" / f"v{VERSION}.json"


def _cached_tasks(path, build) -> dict[str, NameTask]:
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
    return _cached_tasks(_cache_file(), build_benchmark)


def load_name_task(domain: str, split: str) -> NameTask:
    """One domain's ``dev``, ``test`` or ``calib`` task (see :data:`DOMAINS` and :func:`load_calibration`)."""
    if domain not in DOMAINS:
        raise ValueError(f"Unknown name domain {domain!r}; use one of {', '.join(DOMAINS)}.")
    if split == CALIB:
        return load_calibration()[f"names-{domain}-{split}"]
    if split not in SPLITS:
        raise ValueError(f"Name benchmark split must be one of {', '.join(SPLITS + (CALIB,))}, got {split!r}.")
    return load_benchmark()[f"names-{domain}-{split}"]


def build_calibration(entities: list[NameEntity] | None = None) -> dict[str, NameTask]:
    """Every domain's ``calib`` task: built as dev and test are, from :func:`training_entities` (no dev or test
    string), for calibrating a matcher's thresholds on names it never fitted. A model trained on the train entities
    (a PEARL ``names`` recipe) must not be calibrated on it. ``entities``: :func:`training_entities`' result, when
    the caller has it already."""
    from . import name_sources as sources

    extras = {"nicknames": sources.nickname_table(), "legal_forms": sources.legal_forms()}
    entities = training_entities() if entities is None else entities
    pool = list({normalize(e.canonical): e.canonical for e in entities}.values())
    taken, miner = scored_strings(), SiblingMiner(pool)
    return {(t := build_task(domain, CALIB, entities, pool, extras, taken, miner)).name: t for domain in DOMAINS}


def load_calibration() -> dict[str, NameTask]:
    """The ``calib`` tasks, built once and cached as JSON beside the benchmark."""
    return _cached_tasks(cache_dir() / "name-benchmark" / f"calib-v{VERSION}.json", build_calibration)


def training_entities() -> list[NameEntity]:
    """The ``train`` bucket: entities a training recipe may read (no dev or test entity, no dev or test string: an
    entity one of whose names is a made dev or test query, a surname or a typo, is left out too)."""
    scored = scored_strings()
    return [e for e in split_entities(all_entities())["train"] if not entity_strings(e) & scored]


def scored_strings() -> frozenset[str]:
    """The normal forms of every dev and test query and gold: training data made from ``training_entities()`` (a
    generated short name, a typo) must leave these out."""
    return frozenset(normalize(s) for task in load_benchmark().values() for s in task.queries + task.gold)
