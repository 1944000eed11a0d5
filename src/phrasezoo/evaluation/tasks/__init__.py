"""Benchmark tasks. Importing this package registers every task; ``resolve_tasks`` expands names and groups.

The suite's groups: ``all`` (the ten tasks below) and ``pearl`` (the nine PEARL tasks: turney, bird, ppdb,
ppdb_filtered, yago, umls, conll2003, bc5cdr, autofj); ``context`` (conll2003_context, bc5cdr_context: mentions
clustered in their sentences), see :mod:`.context_clustering`. A new suite task is a :class:`Task` subclass decorated
with :func:`register_task` in a module imported here.

A method's own tasks live in its home, the package ``phrasezoo/methods/<name>/tasks/``, and register
themselves the same way when this package imports them (:func:`phrasezoo.zoo.registry.method_parts`): e.g. the CCL
variants of the context tasks (group ``context_ccl``) and the facets tasks of FACETS models (groups
``facets_sentence``, ``facets_phrase``).
"""

from phrasezoo.zoo.registry import method_parts

from . import (  # noqa: F401  (registration)
    autofj,
    clustering,
    context_clustering,
    names,
    probe,
    retrieval,
    similarity,
    stsb_context,
)
from .base import (
    GROUPS,
    TASKS,
    Task,
    TaskContext,
    check_task_options,
    default_benchmarks_dir,
    get_task,
    register_task,
    resolve_tasks,
)

method_parts("tasks")  # each method's own tasks register themselves (phrasezoo/methods/<name>/tasks)

__all__ = [
    "GROUPS",
    "TASKS",
    "Task",
    "TaskContext",
    "check_task_options",
    "default_benchmarks_dir",
    "get_task",
    "register_task",
    "resolve_tasks",
]
