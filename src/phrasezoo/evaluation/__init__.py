"""Benchmark suite of the zoo: PEARL's nine phrase tasks plus STS-B-Context, for any model through one interface.

Python API::

    from phrasezoo.evaluation import evaluate, format_report
    doc = evaluate("baseline:minilm-l6", tasks="pearl", benchmarks_dir="../shared/benchmarks",
                   output="results/baselines/baseline-minilm-l6.json")
    print(format_report([doc]))

CLI: ``phrasezoo evaluate ...`` / ``phrasezoo report ...`` (see :mod:`phrasezoo.evaluation.commands`).
"""

from phrasezoo.encoders import Encoder, load_encoder

from .harness import evaluate
from .model_index import to_model_index
from .report import format_report
from .results import read_results, write_results
from .tasks import GROUPS, TASKS, register_task, resolve_tasks
from .tasks.base import load_hub_benchmark

__all__ = [
    "GROUPS",
    "TASKS",
    "Encoder",
    "evaluate",
    "format_report",
    "load_encoder",
    "load_hub_benchmark",
    "read_results",
    "register_task",
    "resolve_tasks",
    "to_model_index",
    "write_results",
]
