"""benchmarks/matching_vectors.py: two processes sharing a model's vector cache never leave it inconsistent."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "matching_vectors.py"


class LengthEncoder:
    """Vectors that say which string they belong to (its length and first character)."""

    name, revision = "fake:length", "r1"

    def __init__(self) -> None:
        self._cache: dict = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


def test_a_store_takes_in_what_another_stored_meanwhile(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    store = runpy.run_path(str(SCRIPT), run_name="not_main")["VectorStore"]
    first, second = store(LengthEncoder()), store(LengthEncoder())  # both opened on the empty cache
    first.add(["alpha", "be"])
    second.add(["gamma!"])  # its save merges first's strings instead of overwriting them
    again = store(LengthEncoder())
    assert sorted(again.texts) == ["alpha", "be", "gamma!"]
    assert again.lookup(["be", "gamma!", "alpha"]).tolist() == [[2, 98], [6, 103], [5, 97]]


def test_a_store_whose_files_disagree_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    store = runpy.run_path(str(SCRIPT), run_name="not_main")["VectorStore"]
    store(LengthEncoder()).add(["alpha", "be"])
    folder = next((tmp_path / "match-vectors").iterdir())
    np.save(folder / "vectors.npy", np.zeros((1, 2), dtype=np.float32))
    with pytest.raises(RuntimeError, match="delete the folder"):
        store(LengthEncoder())
