"""Stable train/dev splits of the offline resources: a hash of the item, the same in every process and machine.

The dev suite (:mod:`phrasezoo.data.benchmarks.dev_sets`) scores models on the dev part of a resource; training data built
from the same resource must read only the train part (e.g. the ``wiki-leads-train`` corpus), so that a choice made
on dev data is not made on data the model was trained on.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
WIKI_DEV_MODULUS = 10  # 1 article in 10 (by title) is a dev article


def normalize(text: str) -> str:
    """The matching form of a string: NFKC, lower case, every run of non-alphanumerics to one space, stripped (the
    benchmark filter's and the splits' one rule)."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def stable_hash(text: str, namespace: str) -> int:
    """A 64-bit hash of ``namespace:normalize(text)`` (BLAKE2b), the same in every process (unlike ``hash()``)."""
    digest = hashlib.blake2b(f"{namespace}:{normalize(text)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def is_dev_title(title: str) -> bool:
    """Whether a wiki-leads article is in the dev split (by its title). Training data built from the wiki leads
    should leave these articles out when it is used to pick checkpoints on ``dev_description`` / ``dev_fuzzy``."""
    return stable_hash(title, "wiki") % WIKI_DEV_MODULUS == 0


#: alias pairs (Wikipedia link anchor -> target title) are split by their title: 1 title in 2 is a dev title
ALIAS_DEV_MODULUS = 2


def is_dev_alias_title(title: str) -> bool:
    """Whether the aliases of a Wikipedia title belong to ``dev_alias`` (else a recipe may train on them)."""
    return stable_hash(title, "alias-split") % ALIAS_DEV_MODULUS == 0
