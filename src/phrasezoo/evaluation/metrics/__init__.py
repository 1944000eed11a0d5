"""The benchmark suite's metrics as local ``evaluate`` modules: one ``evaluate.Metric`` script per metric
(``<name>.py`` in this folder), loaded by path with ``evaluate.load(<script>)``, never from the Hub, so they work
with ``HF_HUB_OFFLINE=1``. What every script shares (its metric info) is :mod:`.metric_base`, which ``evaluate``
copies next to a script it loads (a script may import a module of its own folder only, so the scripts share one
folder). The scripts are modules of ``phrasezoo.evaluation.metrics``, so the wheel ships them like any module
(nothing to copy at build time, unlike the top-level ``hub_configs/``); :func:`metric_path` finds them in a checkout
and in an installed wheel alike.

    from phrasezoo.evaluation.metrics import compute
    compute("pearson", predictions=[0.1, 0.9, 0.4], references=[1.0, 4.5, 2.0])   # {"pearson": 0.99...}

A user can load one without phrasezoo's helpers: ``evaluate.load(str(metric_path("nmi")))``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

METRICS_DIR = Path(__file__).resolve().parent
#: every metric script, by module name
METRICS = (
    "accuracy",
    "tie_split_accuracy",
    "pearson",
    "spearman",
    "nmi",
    "cluster_accuracy",
    "fuzzy_join_accuracy",
    "ranking",
    "top1_accuracy",
    "span_iou",
    "rouge",
    "average",
)

_loaded: dict[str, Any] = {}
_lock = threading.Lock()


def metric_path(name: str) -> Path:
    """The script of metric ``name`` (what ``evaluate.load`` is given)."""
    if name not in METRICS:
        raise ValueError(f"Unknown metric {name!r}; phrasezoo's metrics: {', '.join(METRICS)}.")
    return METRICS_DIR / f"{name}.py"


def load_metric(name: str):
    """The ``evaluate.EvaluationModule`` of ``name``, loaded once per process (in memory: no cache files)."""
    with _lock:
        if name not in _loaded:
            import evaluate  # lazy: `evaluate` takes seconds to import, and only the first compute needs it

            _loaded[name] = evaluate.load(str(metric_path(name)), keep_in_memory=True)
        return _loaded[name]


def compute(name: str, **inputs: Any) -> dict[str, Any]:
    """``load_metric(name).compute(**inputs)``: the metric's result dictionary."""
    module = load_metric(name)
    with _lock:  # one compute at a time per module: a module buffers its inputs while computing
        return module.compute(**inputs)
