"""An offline proxy of the lead's held-out alias check: rank a name's true aliases above its near-miss siblings.

The held-out check (DESIGN.md, "Decisions for wave 3") has 60 groups of a name, its true aliases (acronyms, other
names, abbreviations) and near-miss siblings (other years or numbers, related entities), and scores MRR of the first
alias among aliases + siblings. Its data stays with the lead, so the matching choices are checked on this proxy,
built only from offline, non-benchmark data (the benchmark filter's strict mode drops any group touching a benchmark
string):

* ``number``: Wikipedia titles with a number or year (gensim's embedded dump, dev-split titles of
  :func:`phrasezoo.resources.splits.is_dev_alias_title`, never trained on) and their link anchors as aliases ("Interstate
  165" <- "I-165", "The Last Command (1928 film)" <- "The Last Command"); siblings are the dump's titles that differ
  only in their digits ("Interstate 565") plus titles with one number moved by a fixed offset ("The Last Command
  (1931 film)"), the entities that sit next to each other in AutoFJ's tables.
* ``related``: dev-split titles without digits and their anchors; siblings are dump titles sharing at least half of
  the words ("Crash (band)" for "Crash (2004 film)"... and "Labour Party (Norway)" for "Labour Party (UK)").
* ``wordnet``: WordNet noun synsets holding a capitalised name: the first lemma is the name, the other lemmas are its
  aliases (acronyms and other names: "Federal Bureau of Investigation" / "FBI"); siblings are the names of sister
  synsets (same hypernym: "Central Intelligence Agency", "Secret Service"). Note: a zoo recipe may train on WordNet
  names (``wordnet_names``), so this part favours such models; the first two parts are never trained on.

Scores (:func:`alias_mrr`): ``name->alias`` (the held-out check's direction: the name is the query, aliases and
siblings the candidates; reciprocal rank of the best-ranked alias) and ``alias->name`` (the join direction: each
alias is a query against the name and the siblings).

    .venv/bin/python experiments/matching/matching_alias_proxy.py            # build (cached) and print counts + examples
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

VERSION = "2"
MAX_SIBLINGS = 5
DIGITS = re.compile(r"\d+")
ORDINAL = re.compile(r"st|nd|rd|th", re.IGNORECASE)
RANK = re.compile(r"^(?:genus|family|order|class|phylum|division|subgenus|subfamily|suborder|subclass|tribe) ")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOP = frozenset(["a", "an", "and", "at", "by", "de", "for", "from", "in", "la", "le", "of", "on", "or", "the", "to"])


@dataclass
class AliasGroup:
    source: str
    name: str
    aliases: list[str]
    siblings: list[str]
    notes: dict = field(default_factory=dict)

    def strings(self) -> list[str]:
        return [self.name, *self.aliases, *self.siblings]


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def moved_numbers(title: str, count: int = 3) -> list[str]:
    """Titles with one number moved by a fixed, hash-chosen offset (years by 1-4, small numbers by 1-2)."""
    numbers = list(DIGITS.finditer(title))
    out: list[str] = []
    for k in range(count * 3):
        if len(out) == count or not numbers:
            break
        match = numbers[k % len(numbers)]
        value = int(match.group())
        steps = (1, 2, 3, 4, -1, -2, -3, -4) if 1000 <= value <= 2100 else (1, 2, -1, 3, -2, 5, 10)
        step = steps[(_hash(title) + k) % len(steps)]
        moved = value + step
        if moved < 0:
            continue
        suffix = ORDINAL.match(title, match.end())
        if suffix:  # "81st" -> "84th", not "84st"
            end, text = suffix.end(), ordinal(moved)
        else:
            end, text = match.end(), str(moved)
        candidate = title[: match.start()] + text + title[end:]
        if candidate != title and candidate not in out:
            out.append(candidate)
    return out


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def initials(text: str) -> str:
    return "".join(w[0] for w in WORD.findall(text) if w.lower() not in STOP).lower()


def names_the_title(anchor: str, title: str) -> bool:
    """Whether a link anchor is a name of its title rather than context ("in Hungary", "destroyed the tea"): it
    does not start with a preposition and at least half of its words share a stem (first 4 letters) with the title, or it is the title's initials ("WTO", "I-165")."""
    if WORD.findall(anchor.lower())[:1] in (["in"], ["at"], ["on"], ["by"], ["for"], ["from"], ["to"], ["with"]):
        return False
    stems = {w[:4] for w in _words(title)}
    words = _words(anchor)
    if words and sum(w[:4] in stems for w in words) >= len(words) / 2:
        return True
    compact = re.sub(r"[^a-z]", "", anchor.lower())
    return len(compact) >= 2 and compact == initials(title)[: len(compact)] and anchor.upper() == anchor


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def wiki_groups(pairs: list[tuple[str, str]], blocklist) -> list[AliasGroup]:
    """``number`` and ``related`` groups from ``(anchor, title)`` link pairs (dev-split titles only)."""
    from phrasezoo.data.corpus.wiki_links import clean_alias_pairs

    valid, _, _ = clean_alias_pairs(pairs, blocklist, split="dev")
    aliases: dict[str, set[str]] = defaultdict(set)
    for anchor, title in valid:
        if names_the_title(anchor, title):
            aliases[title].add(anchor)
    every_title = sorted({t for _, t in pairs})
    masked: dict[str, set[str]] = defaultdict(set)
    by_word: dict[str, set[str]] = defaultdict(set)
    for title in every_title:
        if DIGITS.search(title):
            masked[DIGITS.sub("#", title)].add(title)
        for word in _words(title):
            by_word[word].add(title)
    groups = []
    for title in sorted(aliases, key=lambda t: (_hash(t), t)):
        alias_list = sorted(aliases[title])
        lowered = {a.lower() for a in alias_list} | {title.lower()}
        if DIGITS.search(title):
            real = sorted(masked[DIGITS.sub("#", title)] - {title}, key=lambda t: (_hash(t), t))
            siblings = [s for s in real if s.lower() not in lowered][:MAX_SIBLINGS]
            siblings += [s for s in moved_numbers(title) if s.lower() not in lowered and s not in siblings]
            source = "number"
        else:
            words = _words(title)
            if len(words) < 2:
                continue
            near = {t for w in words for t in by_word[w]} - {title}
            scored = [(len(words & _words(t)) / len(words | _words(t)), t) for t in near if t.lower() not in lowered]
            siblings = [t for s, t in sorted(scored, key=lambda x: (-x[0], _hash(x[1]), x[1])) if s >= 0.5]
            source = "related"
        siblings = siblings[:MAX_SIBLINGS]
        if siblings:
            groups.append(AliasGroup(source, title, alias_list, siblings))
    return groups


def wordnet_groups(wordnet, max_groups: int = 400) -> list[AliasGroup]:
    """``wordnet`` groups: synsets with a capitalised name and another lemma; siblings from sister synsets."""
    groups = []
    for synset in wordnet.all_synsets("n"):
        names = [" ".join(n.split("_")) for n in synset.lemma_names()]
        names = [n for n in names if not RANK.match(n)]
        if len(names) < 2 or not names[0][:1].isupper() or any(ch.isdigit() for n in names for ch in n):
            continue
        sisters = []
        for hypernym in synset.hypernyms() + synset.instance_hypernyms():
            for sister in hypernym.hyponyms() + hypernym.instance_hyponyms():
                if sister != synset:
                    sisters.append(" ".join(sister.lemma_names()[0].split("_")))
        lowered = {n.lower() for n in names}
        sisters = sorted(
            {s for s in sisters if s[:1].isupper() and s.lower() not in lowered}, key=lambda s: (_hash(s), s)
        )
        if len(sisters) >= 2:
            groups.append(AliasGroup("wordnet", names[0], names[1:], sisters[:MAX_SIBLINGS]))
    groups.sort(key=lambda g: (_hash(g.name), g.name))
    return groups[:max_groups]


def _drop_benchmark_groups(groups: list[AliasGroup], blocklist) -> list[AliasGroup]:
    from phrasezoo.data.benchmark_filter import remove_benchmark_items

    kept, _ = remove_benchmark_items(
        groups, key=lambda g: tuple(g.strings()), blocklist=blocklist, mode="strict", log=False
    )
    return kept


def build_alias_groups(benchmarks_dir: str | None = None) -> list[AliasGroup]:
    from phrasezoo.data.benchmark_filter import default_benchmarks_dir, load_blocklist
    from phrasezoo.data.corpus.wiki_links import link_pairs
    from phrasezoo.resources import load_wordnet

    blocklist = load_blocklist(Path(benchmarks_dir) if benchmarks_dir else default_benchmarks_dir())
    groups = wiki_groups(list(link_pairs("embedded", progress=False)), blocklist)
    wordnet = load_wordnet()
    if wordnet is not None:
        groups += wordnet_groups(wordnet)
    return _drop_benchmark_groups(groups, blocklist)


def load_alias_groups(benchmarks_dir: str | None = None, rebuild: bool = False) -> list[AliasGroup]:
    """The proxy's groups, built once and cached as JSON under ``<cache>/match-alias-proxy-v<VERSION>.json``."""
    from phrasezoo.resources import cache_dir

    path = cache_dir() / f"match-alias-proxy-v{VERSION}.json"
    if path.exists() and not rebuild:
        return [AliasGroup(**g) for g in json.loads(path.read_text())]
    groups = build_alias_groups(benchmarks_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(g) for g in groups], ensure_ascii=False))
    os.replace(tmp, path)
    return groups


def alias_mrr(groups: list[AliasGroup], score) -> dict:
    """MRR of the proxy under ``score(queries, candidates) -> (len(queries), len(candidates))`` similarities.

    ``name->alias``: per group, reciprocal rank of the best-ranked alias among aliases + siblings (ties count
    against the alias). ``alias->name``: per alias, reciprocal rank of the name among name + siblings. Both are
    averaged per group, then over groups, overall and per source.
    """
    per_source: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"name->alias": [], "alias->name": []})
    for group in groups:
        candidates = group.aliases + group.siblings
        s = np.asarray(score([group.name], candidates))[0]
        best_alias = s[: len(group.aliases)].max()
        rank = 1 + int((s[len(group.aliases) :] >= best_alias).sum())
        per_source[group.source]["name->alias"].append(1.0 / rank)
        s = np.asarray(score(group.aliases, [group.name, *group.siblings]))
        ranks = 1 + (s[:, 1:] >= s[:, :1]).sum(1)
        per_source[group.source]["alias->name"].append(float(np.mean(1.0 / ranks)))
    out = {}
    for direction in ("name->alias", "alias->name"):
        values = [v for src in per_source.values() for v in src[direction]]
        out[direction] = round(float(np.mean(values)), 4) if values else float("nan")
        for source, src in sorted(per_source.items()):
            out[f"{direction}:{source}"] = round(float(np.mean(src[direction])), 4)
    out["groups"] = len(groups)
    out["groups_per_source"] = {s: len(v["name->alias"]) for s, v in sorted(per_source.items())}
    return out


def main() -> None:
    rebuild = "--rebuild" in sys.argv
    groups = load_alias_groups(rebuild=rebuild)
    counts = defaultdict(int)
    for g in groups:
        counts[g.source] += 1
    print(dict(counts))
    for source in counts:
        for g in [g for g in groups if g.source == source][:8]:
            print(f"[{source}] {g.name!r} aliases={g.aliases[:3]} siblings={g.siblings[:4]}")


if __name__ == "__main__":
    main()
