"""Every generated block of README.md and docs/ is what its results files render today (scripts/blocks.py)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = runpy.run_path(str(ROOT / "scripts" / "blocks.py"), run_name="phrasezoo_blocks")


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> dict[str, tuple[str, str]]:
    return BLOCKS["regenerate"](BLOCKS["BLOCKS"], tmp_path_factory.mktemp("pages"))


def test_every_block_is_registered():
    assert BLOCKS["unregistered"]() == [], "add these blocks to scripts/blocks.py (or remove them from the page)"


@pytest.mark.parametrize("key", [f"{b.doc}: {b.name}" for b in BLOCKS["BLOCKS"]])
def test_block_matches_its_results(regenerated, key):
    committed, fresh = regenerated[key]
    assert committed == fresh, (
        f"{key} differs from what its results files render; run `.venv/bin/python scripts/blocks.py --write "
        f"{key.split(': ')[1]}` (and commit the page), or fix the registry entry in scripts/blocks.py"
    )


def test_registry_paths_come_from_one_place():
    """Every results path of the registry goes through res(), so the results/ reorganisation edits one mapping."""
    for block in BLOCKS["BLOCKS"]:
        for arg in block.command(block.doc):
            assert not arg.startswith("@"), f"{block.name}: {arg} was not resolved by res()"
            if arg.startswith("results/") and block.target != "match-scale":  # the 1M run has not finished yet
                assert (ROOT / arg).exists(), f"{block.name}: {arg} is not a committed file"


def test_results_mapping_moves_a_path(monkeypatch):
    res = BLOCKS["res"]
    monkeypatch.setitem(res.__globals__["RESULTS_MOVED"], "pearl-mini.json", "results/pearl/pearl-mini.json")
    assert res("pearl-mini.json") == "results/pearl/pearl-mini.json"
    assert res("baseline-minilm-l6.json") == "results/baseline-minilm-l6.json"
