"""evaluation.processes.background: a module in a process of its own, its output in a log, the log's end on failure."""

from __future__ import annotations

from phrasezoo.evaluation.processes.background import ModuleProcess, read_request


def test_a_failing_module_reports_its_exit_code_and_log(tmp_path):
    # json.tool takes its first argument as a file name: the JSON request is no file, so it fails and says so
    child = ModuleProcess("json.tool", {"tasks": ["turney"]}, tmp_path / "log.txt")
    assert child.wait() != 0
    assert "No such file" in child.log_tail()
    assert len(child.log_tail(lines=1).splitlines()) == 1


def test_a_module_reads_its_request_back():
    assert read_request(['{"tasks": ["turney"], "output": null}']) == {"tasks": ["turney"], "output": None}
