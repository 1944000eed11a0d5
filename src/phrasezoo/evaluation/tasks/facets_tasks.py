"""Evaluation tasks of FACETS models (importing this module registers them).

Groups: ``facets_sentence`` (STS-B subset, held-out reconstruction, summarisation proxy, facet words) and
``facets_phrase`` (Turney(5)/(10), BiRD, held-out reconstruction, facet words). They need a model with
``facets()`` and are not part of ``all``.
"""

from . import (  # noqa: F401  (registration)
    facets_facet_words,
    facets_phrases,
    facets_reconstruction,
    facets_sts,
    facets_summarization,
)
