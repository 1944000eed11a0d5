"""Benchmark tasks. Importing this package registers every task; ``resolve_tasks`` expands names and groups.

Groups: ``all`` (the ten tasks below) and ``pearl`` (the nine PEARL tasks: turney, bird, ppdb, ppdb_filtered, yago,
umls, conll2003, bc5cdr, autofj). A new task is a :class:`Task` subclass decorated with :func:`register_task` in a
module imported here.
"""

from . import clustering, fuzzy_join, probe, retrieval, similarity, stsb_context  # noqa: F401  (registration)
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
