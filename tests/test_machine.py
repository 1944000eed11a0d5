"""phrasezoo.core.machine: the cores the soup and the evaluation size their processes by."""

from __future__ import annotations

import os

from phrasezoo.core import machine


def test_usable_cores_follows_the_affinity(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert machine.usable_cores() == 1


def test_usable_cores_without_affinity_counts_the_cpus(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert machine.usable_cores() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one core, never zero
    assert machine.usable_cores() == 1


def test_env_count_reads_a_whole_number_and_names_the_variable_when_it_is_not_one(monkeypatch):
    import pytest

    monkeypatch.delenv("PHRASEZOO_SOME_WORKERS", raising=False)
    assert machine.env_count("PHRASEZOO_SOME_WORKERS") is None
    monkeypatch.setenv("PHRASEZOO_SOME_WORKERS", " 3 ")
    assert machine.env_count("PHRASEZOO_SOME_WORKERS") == 3
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv("PHRASEZOO_SOME_WORKERS", bad)
        with pytest.raises(ValueError, match="PHRASEZOO_SOME_WORKERS must be a whole number >= 1"):
            machine.env_count("PHRASEZOO_SOME_WORKERS")


def test_available_memory_is_capped_by_the_cgroup_limit(tmp_path, monkeypatch):
    gib = 2**30
    v2, v1 = tmp_path / "v2", tmp_path / "v1"
    v2.mkdir(), v1.mkdir()
    (v2 / "memory.max").write_text("max\n")  # no limit in v2: the v1 folder decides
    (v2 / "memory.current").write_text(f"{gib}\n")
    (v1 / "memory.limit_in_bytes").write_text(f"{8 * gib}\n")
    (v1 / "memory.usage_in_bytes").write_text(f"{6 * gib}\n")
    (v1 / "memory.stat").write_text(f"cache 5\ntotal_inactive_file {gib}\n")  # droppable page cache counts as free
    monkeypatch.setattr(machine, "_memory_cgroups", lambda: [(2, str(v2)), (1, str(v1))])
    monkeypatch.setattr(machine, "_meminfo_available", lambda: 20 * gib)
    assert machine.available_memory() == 3 * gib
    (v2 / "memory.max").write_text(f"{4 * gib}\n")  # v2 has a limit: it is the one read
    assert machine.available_memory() == 3 * gib  # 4 GiB less 1 in use (no memory.stat there)
    monkeypatch.setattr(machine, "_memory_cgroups", lambda: [])
    assert machine.available_memory() == 20 * gib


def test_available_memory_on_this_machine_is_a_positive_number():
    free = machine.available_memory()
    assert free is None or free > 0


def test_memory_cgroups_are_found_on_a_hybrid_machine(tmp_path):
    cgroups, mounts = tmp_path / "cgroup", tmp_path / "mounts"
    cgroups.write_text("4:memory:/jobs/42\n3:cpuset:/\n0::/jobs.scope/job-42\n")
    mounts.write_text(
        "proc /proc proc rw 0 0\n"
        "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid 0 0\n"
        "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n"
        "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n"
    )
    assert machine._memory_cgroups(str(cgroups), str(mounts)) == [
        (2, "/sys/fs/cgroup/unified/jobs.scope/job-42"),
        (1, "/sys/fs/cgroup/memory/jobs/42"),
    ]
    cgroups.write_text("0::/\n")  # a pure cgroup v2 machine, the process at the root of its namespace
    mounts.write_text("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")
    assert machine._memory_cgroups(str(cgroups), str(mounts)) == [(2, "/sys/fs/cgroup")]
    assert machine._memory_cgroups(str(tmp_path / "missing"), str(mounts)) == []
