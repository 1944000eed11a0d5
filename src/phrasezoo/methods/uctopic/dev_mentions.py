"""A dev set for context clustering that no benchmark touches: spaCy NER mentions in wiki-leads dev articles.

CCL's options (steps, stopping rule, confident share) must not be chosen on the CoNLL-2003/BC5CDR labels it is scored
on. This set stands in for them: the named entities that ``en_core_web_sm`` finds in the leads of the wiki-leads
articles of the dev split (:func:`phrasezoo.resources.splits.is_dev_title`, 1 article in 10), typed PER (``PERSON``),
LOC (``GPE``/``LOC``) or ORG (``ORG``), like CoNLL's three types. The types are spaCy's predictions (silver labels),
good enough to compare finetuning recipes; mentions are capped per article and overall (stable order), and the
build is cached as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm.auto import tqdm

from phrasezoo.core.progress import progress_enabled
from phrasezoo.resources import cache_dir, load_spacy
from phrasezoo.resources.corpora import iter_wiki_leads
from phrasezoo.resources.splits import is_dev_title

SPACY_TYPES = {"PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "ORG": "ORG"}
DEV_TYPES = ["PER", "LOC", "ORG"]
VERSION = "1"


def build_dev_mentions(
    max_mentions: int = 3000, per_article: int = 8, spacy_model: str = "en_core_web_sm", progress: bool = True
) -> dict:
    """``{"mentions": [[sentence, [start, end]], ...], "labels": [...], "types": DEV_TYPES}`` (see module doc).

    Each lead is split into sentences; an entity keeps its sentence as context, offsets relative to it. At most
    ``per_article`` mentions per article so a few long leads do not dominate.
    """
    leads = [lead.lead for lead in iter_wiki_leads() if is_dev_title(lead.title)]
    nlp = load_spacy(spacy_model)
    mentions, labels = [], []
    docs = nlp.pipe(leads, batch_size=32)
    for doc in tqdm(docs, total=len(leads), desc="dev NER", disable=not progress_enabled(progress)):
        taken = 0
        for ent in doc.ents:
            label = SPACY_TYPES.get(ent.label_)
            if label is None or taken >= per_article:
                continue
            sent = ent.sent
            start = ent.start_char - sent.start_char
            mentions.append([sent.text, [start, start + len(ent.text)]])
            labels.append(label)
            taken += 1
        if len(mentions) >= max_mentions:
            break
    return {"mentions": mentions[:max_mentions], "labels": labels[:max_mentions], "types": DEV_TYPES}


def load_dev_mentions(max_mentions: int = 3000, progress: bool = True) -> dict:
    """:func:`build_dev_mentions`, cached under ``<cache>/dev_suite/uctopic_dev_mentions_<version>_<cap>.json``."""
    path = Path(cache_dir()) / "dev_suite" / f"uctopic_dev_mentions_{VERSION}_{max_mentions}.json"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf8"))
    data = build_dev_mentions(max_mentions, progress=progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf8")
    return data
