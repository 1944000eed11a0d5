"""Optional WordNet access for the data pipeline, robust to NLTK's path sandbox.

:func:`phrasezoo.resources.load_wordnet` prepares WordNet under ``cache_dir()/nltk_data``. NLTK >= 3.10 refuses to
read corpora outside its registered data roots (``PermissionError: Security Violation``), so this wrapper registers
that root in ``nltk.data.path`` first. Any failure means "no WordNet": WordNet is optional everywhere.
"""

from __future__ import annotations

import logging
import warnings
from functools import lru_cache

from phrasezoo.resources import cache_dir, load_wordnet

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def get_wordnet():
    """NLTK's WordNet reader over the system WordNet files, or ``None`` when WordNet (or NLTK) is unavailable."""
    try:
        import nltk.data

        root = str(cache_dir() / "nltk_data")
        if root not in nltk.data.path:
            nltk.data.path.append(root)
    except ImportError:
        return None
    try:
        with warnings.catch_warnings():  # "multilingual functions are not available": we only use English
            warnings.simplefilter("ignore", UserWarning)
            wordnet = load_wordnet()
        if wordnet is not None:
            wordnet.synsets("dog")  # force the lazy reader to open its files now, not in the middle of a run
        return wordnet
    except (OSError, PermissionError, LookupError, ValueError) as err:
        logger.warning("WordNet is unavailable (%s); continuing without it.", err)
        return None
