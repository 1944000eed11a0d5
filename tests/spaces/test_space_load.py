"""``benchmarks/space_load.py``: every Space has a load plan, runs merge by (Space, label, allocator), and the README
block is exactly what the committed results file generates (no number typed by hand)."""

from __future__ import annotations

import importlib.util
import random
import re
import sys

import pytest

from tests.conftest import REPO_ROOT

from .helpers import SPACES


@pytest.fixture(scope="module")
def space_load():
    spec = importlib.util.spec_from_file_location("space_load", REPO_ROOT / "benchmarks" / "space_load.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_space_has_a_load_plan_with_checked_requests(space_load, monkeypatch):
    titles = [f"title {i}" for i in range(40)]  # reading all of AutoFJ takes ~10 s; the news corpus is quick
    monkeypatch.setattr(space_load, "autofj_titles", lambda limit=200: titles)
    assert set(space_load.SPACES) == {p.parent.name for p in SPACES.glob("*/app.py")}
    for name, plan in space_load.SPACES.items():
        requests = plan.requests(6, random.Random(0))
        assert len(requests) == 6, name
        assert all(r.api_name.startswith("/") and callable(r.check) for r in requests), name
        with pytest.raises(ValueError):  # an empty answer is a failure, never a success
            requests[0].check(({"data": []},) * 6 if requests[0].api_name != "/rank" else {"data": []})


def test_runs_merge_by_space_label_and_allocator(space_load, tmp_path):
    def run(space, label, created):
        return {"space": space, "label": label, "allocator": "glibc default", "created": created}

    path = tmp_path / "load.json"
    path.write_text('{"runs": [{"space": "pearl-demo", "created": "old, unlabelled"}]}')
    first = space_load.merge_runs(path, [run("uctopic-topics", "before", "1"), run("pearl-demo", "before", "1")])
    assert [r["space"] for r in first["runs"]] == ["pearl-demo", "uctopic-topics"]  # Space order, unlabelled gone
    path.write_text(space_load.json.dumps(first))
    second = space_load.merge_runs(path, [run("pearl-demo", "before", "2"), run("pearl-demo", "after", "3")])
    assert [(r["space"], r["label"], r["created"]) for r in second["runs"]] == [
        ("pearl-demo", "before", "2"),
        ("pearl-demo", "after", "3"),
        ("uctopic-topics", "before", "1"),
    ]


def test_the_readme_block_is_generated_from_the_results_file(space_load):
    report = space_load.json.loads((REPO_ROOT / "results" / "spaces" / "space-load.json").read_text())
    readme = (REPO_ROOT / "docs" / "spaces.md").read_text()  # the Spaces page holds the block (scripts/blocks.py)
    block = re.search(r"<!-- space-load:start -->\n(.*)\n<!-- space-load:end -->", readme, re.S).group(1)
    assert block == space_load.load_table(report)
    assert {run["space"] for run in report["runs"]} == set(space_load.SPACES)
    latest = [run for run in report["runs"] if run["label"] != "before the fixes"]
    assert latest and all(run["requests_failed"] == 0 for run in latest)
