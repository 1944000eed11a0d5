"""Phrase mentions from a spaCy dependency parse: the five lexical classes of PEARL plus an entity type.

PEARL mines NP/VP/PP/ADVP/ADJP constituents with a constituency parser (Berkeley Neural Parser) and types them with
an OntoNotes NER model. spaCy's small English pipeline has a dependency parser and OntoNotes NER but no
constituency parser, so the classes are approximated from dependency subtrees. Every rule grows a span from a head
token by adding whole child subtrees, nearest child first, and stops at the first child whose relation is not
allowed, so spans are always contiguous (the parse is projective) and never cross a comma, a conjunction or a
clause boundary:

* **NP**: (1) spaCy's ``noun_chunks`` (base NPs: determiner, modifiers, compounds, head noun: "the United
  States", "very different regions"); (2) named-entity spans ("April 1834", "1500 to 2000"); (3) an *extended NP*
  per noun/proper noun: the head with its left modifiers (det, amod, compound, nummod, poss, nmod, quantmod,
  npadvmod, advmod) and right ``prep``/``nummod``/``case`` attachments ("the Republic of Mexico", "member of
  parliament"), emitted only when it differs from the noun chunk and contains no verb.
* **PP**: a preposition (``prep``/``agent`` relation, or any ADP with a ``pobj``/``pcomp`` child) with the whole
  subtree of its object ("in Texas", "between the two world wars"); when that is longer than ``max_tokens``, the
  base PP: the preposition up to the object's head ("in the conduct").
* **VP**: a verb (POS VERB, or an AUX that is not itself an auxiliary, i.e. a copula head) with its right
  dependents among particles, objects and complements (prt, dobj, dative, attr, acomp, oprd, xcomp, prep, agent,
  advmod, npadvmod), added nearest first while the span stays within ``max_tokens`` ("gave up smoking in 1999",
  "was very difficult"). No subject, no auxiliaries. A verb with no right dependent at all is a one-word VP
  (intransitive use); a verb whose right dependents could not be added is skipped (a bare "reported" before a
  long clause is not a constituent). Participles used as adjectives (``amod``) are not VPs.
* **ADJP**: an adjective that is not a plain attributive modifier, i.e. predicative (acomp, oprd, ...) or an
  attributive adjective that has its own modifiers, with its left modifiers (advmod, npadvmod) and right
  complements (prep, xcomp, advmod): "very difficult", "undesirable", "similar to the state".
* **ADVP**: an adverb (not a negation) with its modifiers and complements: "very quickly", "independently of the
  state".

Then: leading/trailing punctuation is trimmed; spans longer than ``max_tokens`` (or ``max_chars``), with
unbalanced brackets/quotes, or cutting a hyphenated word apart ("non" of "non-violent") are dropped; spans made only of punctuation, stop words, pronouns and determiners are
dropped; when two rules give the same span, the first class in the order NP, PP, VP, ADJP, ADVP wins.

**Entity type.** Both the mention and each overlapping entity are reduced to their *core* (leading determiners,
prepositions, particles, coordinators and all punctuation removed). The mention takes the label of the entity with
the largest core overlap when that overlap covers at least ``min_entity_overlap`` of both cores; so "the United
States" gets GPE from "United States" (and vice versa), "in April 1834" is a PP-DATE, "Prime Minister David
Ben-Gurion" is PERSON, while "lead Australia" (half covered) and "York" inside "The New York Times" stay OTHER.
"""

from __future__ import annotations

from dataclasses import dataclass

PHRASE_CLASS_ORDER = ("NP", "PP", "VP", "ADJP", "ADVP")
ENTITY_LABELS = (
    "CARDINAL", "DATE", "PERSON", "NORP", "GPE", "LAW", "PERCENT", "ORDINAL", "MONEY", "WORK_OF_ART", "FAC",
    "TIME", "QUANTITY", "PRODUCT", "LANGUAGE", "ORG", "LOC", "EVENT",
)  # fmt: skip
OTHER = "OTHER"

_NP_LEFT = {"det", "amod", "compound", "nummod", "poss", "nmod", "quantmod", "npadvmod", "advmod", "predet"}
_NP_RIGHT = {"prep", "nummod", "case"}
_PP_OBJECT = {"pobj", "pcomp"}
_PP_DEPS = {"prep", "agent"}
_VP_RIGHT = {"prt", "dobj", "dative", "attr", "acomp", "oprd", "xcomp", "prep", "agent", "advmod", "npadvmod"}
_ADJ_LEFT = {"advmod", "npadvmod"}
_ADJ_RIGHT = {"prep", "xcomp", "advmod"}
_ADV_LEFT = {"advmod", "npadvmod"}
_ADV_RIGHT = {"prep", "advmod"}
_CORE_STRIP_POS = {"DET", "ADP", "PART", "CCONJ", "SCONJ"}
_EMPTY_POS = {"PRON", "DET", "PUNCT", "SPACE", "SYM", "CCONJ", "SCONJ", "PART", "ADP", "AUX", "X"}
_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"))


@dataclass(frozen=True)
class MiningOptions:
    """Knobs of mention extraction (they are part of the cache key of :func:`phrasezoo.data.parse_corpus`).

    Args:
        min_tokens, max_tokens: allowed mention length in spaCy tokens (after trimming punctuation).
        max_chars: allowed mention length in characters.
        min_entity_overlap: share of the mention core and of the entity core that must overlap for the mention to
            take the entity's label (see the module docstring).
        classes: which lexical classes to extract.
    """

    min_tokens: int = 1
    max_tokens: int = 8
    max_chars: int = 80
    min_entity_overlap: float = 0.6
    classes: tuple[str, ...] = PHRASE_CLASS_ORDER


def _grow(head, left_deps: set[str], right_deps: set[str], max_tokens: int | None = None) -> tuple[int, int] | None:
    """Token range [start, end) of ``head`` plus whole child subtrees, nearest child first on each side.

    Stops at the first child (on each side) whose relation is not allowed, which keeps the span contiguous. With
    ``max_tokens`` the right side also stops before a child whose subtree would make the span too long.
    """
    start, end = head.i, head.i + 1
    for child in reversed(list(head.lefts)):
        if child.dep_ not in left_deps or child.right_edge.i != start - 1:
            break
        start = child.left_edge.i
    for child in head.rights:
        if child.dep_ not in right_deps or child.left_edge.i != end:
            break
        if max_tokens is not None and child.right_edge.i + 1 - start > max_tokens:
            break
        end = child.right_edge.i + 1
    return start, end


def _candidate_spans(sent, options: MiningOptions) -> list[tuple[int, int, str]]:
    """(start, end, class) token ranges (document indices) proposed by the rules, in class priority order."""
    spans: list[tuple[int, int, str]] = []
    classes = set(options.classes)
    doc = sent.doc
    if "NP" in classes:
        chunks = list(sent.noun_chunks) if doc.has_annotation("DEP") else []
        for chunk in chunks:
            spans.append((chunk.start, chunk.end, "NP"))
        for ent in sent.ents:
            spans.append((ent.start, ent.end, "NP"))
        for chunk in chunks:
            start, end = _grow(chunk.root, _NP_LEFT, _NP_RIGHT, options.max_tokens)
            if not any(t.pos_ in ("VERB", "AUX") for t in doc[start:end]):
                spans.append((start, end, "NP"))
    if "PP" in classes:
        for tok in sent:
            objects = [c for c in tok.rights if c.dep_ in _PP_OBJECT]
            if not objects or not (tok.dep_ in _PP_DEPS or tok.pos_ == "ADP"):
                continue
            obj = objects[0]
            end = obj.right_edge.i + 1
            if end - tok.i > options.max_tokens:
                end = obj.i + 1  # base PP: preposition ... object head
            spans.append((tok.i, end, "PP"))
    if "VP" in classes:
        for tok in sent:
            is_verb = tok.pos_ == "VERB" or (tok.pos_ == "AUX" and tok.dep_ not in ("aux", "auxpass"))
            if not is_verb or tok.dep_ == "amod":
                continue
            start, end = _grow(tok, set(), _VP_RIGHT, options.max_tokens)
            # A bare verb is a VP only when it has no complement at all (intransitive use); a bare "reported"
            # before a clause too long to fit is not a constituent.
            blocked = end == tok.i + 1 and any(c.dep_ not in ("punct", "cc", "conj") for c in tok.rights)
            if not blocked:
                spans.append((start, end, "VP"))
    if "ADJP" in classes:
        for tok in sent:
            if tok.pos_ != "ADJ":
                continue
            start, end = _grow(tok, _ADJ_LEFT, _ADJ_RIGHT, options.max_tokens)
            if tok.dep_ == "amod" and end - start == 1:
                continue  # a plain attributive adjective belongs to its NP
            spans.append((start, end, "ADJP"))
    if "ADVP" in classes:
        for tok in sent:
            if tok.pos_ != "ADV" or tok.dep_ == "neg":
                continue
            start, end = _grow(tok, _ADV_LEFT, _ADV_RIGHT, options.max_tokens)
            spans.append((start, end, "ADVP"))
    return spans


def _trim(doc, start: int, end: int) -> tuple[int, int]:
    """Drop leading/trailing punctuation and whitespace tokens."""
    while start < end and (doc[start].is_punct or doc[start].is_space):
        start += 1
    while end > start and (doc[end - 1].is_punct or doc[end - 1].is_space):
        end -= 1
    return start, end


_JOINERS = {"-", "–", "/", "_", "+", "@"}


def _splits_word(doc, start: int, end: int) -> bool:
    """True when the span cuts a whitespace-free word apart, e.g. "non" out of "non-violent" or "CH" out of "CH2"."""
    if start > 0:
        left = doc[start - 1]
        if not left.whitespace_ and (left.text in _JOINERS or left.is_alpha or left.is_digit):
            return True
    if end < len(doc) and not doc[end - 1].whitespace_:
        right = doc[end]
        if right.text in _JOINERS or right.is_alpha or right.is_digit:
            return True
    return False


def _balanced(text: str) -> bool:
    if any(text.count(a) != text.count(b) for a, b in _BRACKETS):
        return False
    return text.count('"') % 2 == 0


def _is_empty(tokens) -> bool:
    """True when a span has no content word: only punctuation, stop words, pronouns, determiners and the like."""
    return all(t.is_stop or t.is_punct or t.is_space or t.pos_ in _EMPTY_POS for t in tokens)


def _core(tokens) -> set[int]:
    """Indices of a span's content tokens: leading function words and all punctuation removed."""
    toks = list(tokens)
    i = 0
    while i < len(toks) and toks[i].pos_ in _CORE_STRIP_POS:
        i += 1
    return {t.i for t in toks[i:] if not (t.is_punct or t.is_space)}


def entity_type_of(doc, start: int, end: int, min_overlap: float = 0.6) -> str:
    """OntoNotes label of the entity that (nearly) coincides with tokens [start, end), else ``"OTHER"``."""
    core = _core(doc[start:end])
    if not core:
        return OTHER
    best, best_overlap = OTHER, 0
    for ent in doc.ents:
        if ent.end <= start or ent.start >= end:
            continue
        ent_core = _core(ent)
        overlap = len(core & ent_core)
        if not ent_core or overlap < min_overlap * len(core) or overlap < min_overlap * len(ent_core):
            continue
        if overlap > best_overlap and ent.label_ in ENTITY_LABELS:
            best, best_overlap = ent.label_, overlap
    return best


def normalize_phrase(span) -> str:
    """The phrase-table key of a mention: its text with whitespace collapsed, and sentence-initial capitalisation
    undone when the first token is not a proper noun ("The task" at a sentence start becomes "the task", as it
    would be written mid-sentence; "Texas" stays; all-caps words such as "US" stay)."""
    text = " ".join(span.text.split())
    first = span[0]
    if first.is_sent_start and first.pos_ != "PROPN" and first.text[:1].isupper() and not first.text.isupper():
        text = text[:1].lower() + text[1:]
    return text


def extract_mentions(sent, options: MiningOptions | None = None) -> list[dict]:
    """Phrase mentions of one spaCy sentence (a ``Span`` from ``doc.sents``, or a whole ``Doc``).

    Returns dicts with ``start``/``end`` (character offsets in ``sent.text``), ``text`` (``sent.text[start:end]``),
    ``phrase`` (normalised text, the phrase-table key, see :func:`normalize_phrase`), ``phrase_class``,
    ``entity_type`` and ``lemma`` (lower-cased lemmas joined by spaces), sorted by position.
    """
    options = options or MiningOptions()
    doc = sent.doc if hasattr(sent, "doc") else sent
    base = sent.start_char if hasattr(sent, "start_char") else 0
    seen: dict[tuple[int, int], str] = {}
    for start, end, cls in _candidate_spans(sent, options):
        start, end = _trim(doc, start, end)
        n = end - start
        if n < max(1, options.min_tokens) or n > options.max_tokens or (start, end) in seen:
            continue
        span = doc[start:end]
        text = span.text
        if len(text) > options.max_chars or "\n" in text or not _balanced(text) or _is_empty(span):
            continue
        if _splits_word(doc, start, end):
            continue
        seen[(start, end)] = cls
    mentions = []
    for (start, end), cls in sorted(seen.items()):
        span = doc[start:end]
        mentions.append(
            {
                "start": span.start_char - base,
                "end": span.end_char - base,
                "text": span.text,
                "phrase": normalize_phrase(span),
                "phrase_class": cls,
                "entity_type": entity_type_of(doc, start, end, options.min_entity_overlap),
                "lemma": "".join(t.lemma_.lower() + t.whitespace_ for t in span).strip(),
            }
        )
    return mentions


def extract_entities(sent) -> list[dict]:
    """Named-entity spans of a sentence as dicts ``start``, ``end`` (character offsets in the sentence), ``label``."""
    base = sent.start_char if hasattr(sent, "start_char") else 0
    return [{"start": e.start_char - base, "end": e.end_char - base, "label": e.label_} for e in sent.ents]
