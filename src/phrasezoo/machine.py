"""The machine this process runs on: how many cores it may use, and whether bf16 pays off on a device.

One place for both, because the workflows that size their processes by the cores (the soup's runs side by side in
training, the evaluation's two processes) must count the same cores, and the code that picks a mixed precision (the
training loop, the teacher, CCL finetuning) must agree, while those workflows may not import each other. On CPUs
without AVX512-BF16/AMX, bf16 matmuls are emulated and a training step is many times slower than in float32, so a
recipe's ``bf16`` falls back to float32 there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a device is asked about: counting cores (the matcher's) needs no torch
    import torch


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` knows: for benchmark records."""
    import platform

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


def has_fast_bf16(device: torch.device) -> bool:
    """Whether bf16 autocast speeds ``device`` up: a CUDA GPU with bf16, or a CPU with AVX512-BF16/AMX units.

    On other CPUs bf16 matmuls are emulated and a training step is ~15x *slower* than in float32 (measured: 56 s
    vs 3.4 s for a uctopic-mini pretraining step on an AVX2-only AMD EPYC).
    """
    if device.type == "cuda":
        import torch

        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf8") as handle:
            flags = handle.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
