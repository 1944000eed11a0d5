"""The codebook method's evaluation tasks, for FACETS models (importing this package registers them; the evaluation
workflow does, through :func:`phrasezoo.zoo.registry.method_parts`).

Groups: ``facets_sentence`` (STS-B subset, held-out reconstruction, summarisation proxy, facet words) and
``facets_phrase`` (Turney(5)/(10), BiRD, held-out reconstruction, facet words). They need a model with
``facets()`` and are not part of ``all``.
"""

from . import (  # noqa: F401  (registration)
    facet_words,
    phrases,
    reconstruction,
    sts,
    summarization,
)
