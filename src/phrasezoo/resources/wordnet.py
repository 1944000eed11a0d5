"""WordNet 3.0 from Debian's ``wordnet-base`` files, read with NLTK's reader (optional everywhere in the zoo)."""

from __future__ import annotations

import logging
import shutil
import warnings
from functools import lru_cache
from pathlib import Path

from .packages import cache_dir

logger = logging.getLogger(__name__)


LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
_LEX_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


@lru_cache(maxsize=1)
def load_wordnet(source: str = "/usr/share/wordnet"):
    """Return NLTK's WordNet reader over Debian's `wordnet-base` files, or ``None`` when they are absent.

    NLTK's reader wants the files under an ``nltk_data/corpora/wordnet`` folder plus the standard ``lexnames``
    file that Debian omits; both are prepared once in the cache. NLTK >= 3.10 only reads corpora under its
    registered data roots, so the cache root is registered in ``nltk.data.path``. Any failure means "no WordNet":
    WordNet is optional everywhere in the zoo.
    """
    src = Path(source)
    if not (src / "data.noun").exists():
        return None
    try:
        import nltk.corpus.reader.wordnet  # lazy: NLTK, an optional dependency (no NLTK: no WordNet)
    except ImportError:
        return None
    root = cache_dir() / "nltk_data"
    target = root / "corpora" / "wordnet"
    try:
        if not (target / "lexnames").exists():
            target.mkdir(parents=True, exist_ok=True)
            for file in src.iterdir():
                if file.is_file():
                    shutil.copy(file, target / file.name)
            lines = [f"{i:02d}\t{name}\t{_LEX_POS[name.split('.')[0]]}" for i, name in enumerate(LEXNAMES)]
            (target / "lexnames").write_text("\n".join(lines) + "\n")
        if str(root) not in nltk.data.path:
            nltk.data.path.append(str(root))
        with warnings.catch_warnings():  # "multilingual functions are not available": we only use English
            warnings.simplefilter("ignore", UserWarning)
            reader = nltk.corpus.reader.wordnet.WordNetCorpusReader(str(target), None)
            reader.synsets("dog")  # open the lazy reader's files now, not in the middle of a run
        return reader
    except (OSError, LookupError, ValueError) as err:
        logger.warning("WordNet is unavailable (%s); continuing without it. %s", err, wordnet_install_hint())
        return None


def wordnet_install_hint() -> str:
    return "WordNet is optional; to use it: apt-get install wordnet-base wordnet-sense-index"
