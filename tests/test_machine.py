"""phrasezoo.machine: the cores the soup and the evaluation size their processes by."""

from __future__ import annotations

import os

from phrasezoo import machine


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
