"""The main job's timing record: the stage table read back from a run's log or stages file, and its block."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

from phrasezoo.core.progress import StageClock

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "main_job_record.py"


def test_the_printed_table_and_the_stages_file_give_the_same_record(tmp_path):
    record_job = runpy.run_path(str(SCRIPT))
    clock = StageClock(started=1000.0)
    clock.add("install (scripts/bootstrap.sh)", 1000.0, 6.0)
    clock.add("evaluation: baselines (the rest of their run)", 1030.0, 600.0)
    clock.add("training run seed 42", 1012.0, 900.0)
    log = tmp_path / "job.log"
    log.write_text("== 5/5 write the model card\n| table |\n\n" + clock.table() + "\n")
    from_log = record_job["stages_from_log"](log.read_text())
    data = clock.to_dict()
    assert [row["stage"] for row in from_log["stages"]] == [row["stage"] for row in data["stages"]]
    assert [row["minutes"] for row in from_log["stages"]] == [round(row["minutes"], 1) for row in data["stages"]]
    stages = tmp_path / "stages.json"
    stages.write_text(json.dumps(data))
    output = tmp_path / "main-job.json"
    assert (
        record_job["main"](["--stages", str(stages), "--commit", "abc", "--caches", "warm", "--output", str(output)])
        == 0
    )
    text = record_job["render"](json.loads(output.read_text()))
    assert "| training run seed 42 | 0.2 | 15.0 |" in text and "warm caches" in text


def test_a_log_without_a_finished_table_is_refused(tmp_path):
    import pytest

    record_job = runpy.run_path(str(SCRIPT))
    with pytest.raises(ValueError, match="did the main job finish"):
        record_job["stages_from_log"]("== 1/5 train\n")


def test_the_readme_line_links_the_table_of_its_caches():
    record_job = runpy.run_path(str(SCRIPT))
    record = {"caches": "cold", "machine": {"cores": 2}, "total_min": 61.04}
    line = record_job["summary"](record)
    assert "cold caches on 2 CPU cores, took **61.0 minutes**" in line and "#with-cold-caches" in line
    assert "#quick-start-two-commands" in record_job["summary"]({**record, "caches": "warm"})
