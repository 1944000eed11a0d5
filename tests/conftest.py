"""Shared fixtures: benchmark location, registered methods, a quiet environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_DIR = Path(os.environ.get("PHRASEZOO_BENCHMARKS", REPO_ROOT.parent / "shared" / "benchmarks"))

os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def benchmarks_dir() -> Path:
    if not BENCHMARKS_DIR.exists():
        pytest.fail(
            f"Benchmark data not found at {BENCHMARKS_DIR}; set PHRASEZOO_BENCHMARKS or put ../shared beside the repo."
        )
    return BENCHMARKS_DIR


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Keep derived files of tests out of the user's cache, shared across the session."""
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path_factory.getbasetemp() / "phrasezoo-cache"))
