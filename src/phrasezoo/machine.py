"""The machine this process may use: how many cores, for the workflows that size their processes and threads by it.

One place for it, because the soup's runs side by side (training) and the evaluation's two processes (evaluation) must
count the same cores, and those two workflows may not import each other.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity where the platform has one (a container or ``taskset`` can
    give fewer cores than the machine has), else ``os.cpu_count()``; at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
