"""Benchmark tasks. Importing this package registers every task; ``resolve_tasks`` expands names and groups.

Groups: ``all`` (the ten tasks below) and ``pearl`` (the nine PEARL tasks: turney, bird, ppdb, ppdb_filtered, yago,
umls, conll2003, bc5cdr, autofj); ``context`` (conll2003_context, bc5cdr_context: mentions clustered in their
sentences) and ``uctopic`` (those two plus their CCL-finetuned variants), see :mod:`.context_clustering`;
``facets_sentence`` and ``facets_phrase`` (models of output kind FACETS), see :mod:`.facets_tasks`. A new task is a :class:`Task` subclass decorated with :func:`register_task` in a
module imported here.
"""

from . import (  # noqa: F401  (registration)
    autofj,
    clustering,
    context_clustering,
    facets_tasks,
    probe,
    retrieval,
    similarity,
    stsb_context,
)
from .base import GROUPS, TASKS, Task, TaskContext, default_benchmarks_dir, get_task, register_task, resolve_tasks

__all__ = [
    "GROUPS",
    "TASKS",
    "Task",
    "TaskContext",
    "default_benchmarks_dir",
    "get_task",
    "register_task",
    "resolve_tasks",
]
