"""The machine this process runs on: how many cores and how much memory it may use, and whether bf16 pays off.

One place for these, because the workflows that size their processes by the machine (the soup's runs side by side
in training, the teacher's embedding pool, the evaluation's two processes) must count the same cores and memory,
and the code that picks a mixed precision (the training loop, the teacher, CCL finetuning) must agree, while those
workflows may not import each other. On CPUs without AVX512-BF16/AMX, bf16 matmuls are emulated and a training step
is many times slower than in float32, so a recipe's ``bf16`` falls back to float32 there.
"""

from __future__ import annotations

import os
import platform
from typing import TYPE_CHECKING

try:  # psutil is optional: it estimates free memory where /proc/meminfo is missing (off Linux)
    import psutil
except ImportError:  # pragma: no cover
    psutil = None

if TYPE_CHECKING:  # torch is imported where a device is asked about: counting cores (the matcher's) needs no torch
    import torch


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` knows: for benchmark records."""
    try:
        with open("/proc/cpuinfo", encoding="utf8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity where the platform has one (a container or ``taskset`` can
    give fewer cores than the machine has), else ``os.cpu_count()``; at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def env_count(name: str) -> int | None:
    """The whole number >= 1 that the environment variable ``name`` sets (a worker count a user forces), or None when
    it is unset or empty; anything else is an error that names the variable."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r} (unset it to let phrasezoo choose).")
    return int(value)


def available_memory() -> int | None:
    """Bytes this process can still take without swapping, None when unknown: the kernel's ``MemAvailable``, capped
    by the headroom under its cgroup's limit (a container's or a job scheduler's, which the kernel's figure does not
    see; reclaimable page cache counts as free there too); psutil's estimate off Linux."""
    free = _meminfo_available()
    if free is None:
        if psutil is None:
            return None
        try:
            free = int(psutil.virtual_memory().available)
        except OSError:
            return None
    headroom = _cgroup_headroom()
    return free if headroom is None else min(free, headroom)


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf8") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_headroom() -> int | None:
    """The limit minus the usage of this process's memory cgroup (v2, else v1), page cache it can drop excepted;
    None without a limit."""
    files = {2: ("memory.max", "memory.current", "inactive_file"),
             1: ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")}  # fmt: skip
    for version, folder in _memory_cgroups():
        limit_file, usage_file, cache_key = files[version]
        limit, usage = _read_int(f"{folder}/{limit_file}"), _read_int(f"{folder}/{usage_file}")
        if limit is None or usage is None or limit >= 1 << 60:  # "max", or v1's "unlimited" (a huge number)
            continue
        return max(0, limit - usage + _stat_value(f"{folder}/memory.stat", cache_key))
    return None


def _memory_cgroups(
    cgroups: str = "/proc/self/cgroup", mounts_file: str = "/proc/self/mounts"
) -> list[tuple[int, str]]:
    """``(version, folder)`` of this process's memory cgroups: its cgroup v2 folder under the cgroup2 mount and its
    v1 ``memory`` folder, for each hierarchy the machine mounts (a hybrid machine mounts both)."""
    try:
        with open(cgroups, encoding="utf8") as handle:
            lines = [line.strip().split(":", 2) for line in handle if line.count(":") >= 2]
        with open(mounts_file, encoding="utf8") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return []
    paths = {(2 if hid == "0" else 1): path for hid, controllers, path in lines
             if hid == "0" or "memory" in controllers.split(",")}  # fmt: skip
    found = []
    for fields in mounts:
        if len(fields) < 4:
            continue
        version = (
            2 if fields[2] == "cgroup2" else 1 if fields[2] == "cgroup" and "memory" in fields[3].split(",") else 0
        )
        if version in paths:
            found.append((version, fields[1].rstrip("/") + paths[version].rstrip("/")))
    return sorted(found, reverse=True)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="utf8") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def _stat_value(path: str, key: str) -> int:
    try:
        with open(path, encoding="utf8") as handle:
            for line in handle:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def has_fast_bf16(device: torch.device) -> bool:
    """Whether bf16 autocast speeds ``device`` up: a CUDA GPU with bf16, or a CPU with AVX512-BF16/AMX units.

    On other CPUs bf16 matmuls are emulated and a training step is ~15x *slower* than in float32 (measured: 56 s
    vs 3.4 s for a uctopic-mini pretraining step on an AVX2-only AMD EPYC).
    """
    if device.type == "cuda":
        import torch  # lazy: keeps torch off core (the matcher counts cores without it)

        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf8") as handle:
            flags = handle.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
