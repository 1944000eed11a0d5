"""UCTopic's evaluation tasks (importing this package registers them; the evaluation workflow does, through
:func:`phrasezoo.zoo.registry.method_parts`).

``clustering``: ``conll2003_context_ccl`` and ``bc5cdr_context_ccl``, context clustering after cluster-assisted
contrastive finetuning (CCL).
"""

from . import clustering  # noqa: F401  (registration)
