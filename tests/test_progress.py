"""The stage clock of long jobs: rows in start order (stages may overlap), the install time from run_main.sh."""

from __future__ import annotations

import pytest

from phrasezoo.core.progress import StageClock


def test_stages_are_listed_in_start_order_with_their_minutes(monkeypatch):
    monkeypatch.delenv("PHRASEZOO_INSTALL_SECONDS", raising=False)
    clock = StageClock(started=1000.0)
    clock.add("training run seed 7", 1000.0 + 120, 600)  # side by side with seed 42
    clock.add("training run seed 42", 1000.0 + 60, 660)
    with clock.stage("selection"):
        pass
    with pytest.raises(RuntimeError), clock.stage("evaluation"):
        raise RuntimeError("a failed stage is timed too")
    lines = clock.table().splitlines()
    assert [line.split("  ")[0] for line in lines[1:5]] == [
        "training run seed 42", "training run seed 7", "selection", "evaluation"
    ]  # fmt: skip
    assert lines[1].split()[-2:] == ["1.0", "11.0"] and lines[-1].startswith("total (wall clock)")


def test_the_install_time_of_run_main_starts_the_clock(monkeypatch):
    monkeypatch.setenv("PHRASEZOO_INSTALL_SECONDS", "150")
    clock = StageClock.for_job()
    assert clock.rows == [("install (scripts/bootstrap.sh)", clock.started, 150.0)]
    assert "install (scripts/bootstrap.sh)" in clock.table() and float(clock.table().split()[-1]) >= 2.5
