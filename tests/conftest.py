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


@pytest.fixture
def fresh_cache(tmp_path_factory, monkeypatch):
    """A fresh, empty PHRASEZOO_CACHE for this test (data-builder tests that check what gets cached)."""
    path = tmp_path_factory.mktemp("phrasezoo-cache")
    monkeypatch.setenv("PHRASEZOO_CACHE", str(path))
    return path


@pytest.fixture(scope="module")
def one_thread():
    """One torch thread for a module of tiny-tensor tests (thread hand-offs cost more than they save on a shared
    CPU); the count is restored afterwards. Use it with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def nlp():
    """The embedded spaCy pipeline."""
    from phrasezoo.resources import load_spacy

    return load_spacy("en_core_web_sm")


@pytest.fixture(scope="session")
def wordnet():
    from phrasezoo.data.lexical.wordnet import get_wordnet

    return get_wordnet()


@pytest.fixture(scope="session")
def phrasezoo_wheel(tmp_path_factory) -> Path:
    """The phrasezoo wheel built from the checkout, offline, once per session (the wheel and Space install tests)."""
    from tests.fresh_venv import build_wheel

    return build_wheel(tmp_path_factory.mktemp("phrasezoo-wheel"))


@pytest.fixture(scope="session")
def built():
    """The built name benchmark (skips where its Debian dictionaries are missing: bootstrap installs them as root)."""
    from phrasezoo.data.benchmarks import name_benchmark, name_sources

    try:
        return name_benchmark.load_benchmark()
    except name_sources.SourceMissing as err:
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def train_entities(built) -> list:
    """The name benchmark's train entities (reading the sources takes ~20 s: once a session)."""
    from phrasezoo.data.benchmarks import held_out

    return held_out.training_entities()


@pytest.fixture(scope="session")
def train_strings(train_entities) -> set[str]:
    from phrasezoo.data.benchmarks import name_benchmark

    return {s for e in train_entities for s in name_benchmark.entity_strings(e)}
