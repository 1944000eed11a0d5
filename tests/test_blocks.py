"""Every generated block of README.md and docs/ is what its results files render today (docs/blocks.yaml)."""

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
    assert BLOCKS["unregistered"]() == [], "add these blocks to docs/blocks.yaml (or remove them from the page)"


@pytest.mark.parametrize("key", [f"{b.page}: {b.name}" for b in BLOCKS["BLOCKS"]])
def test_block_matches_its_results(regenerated, key):
    committed, fresh = regenerated[key]
    assert committed == fresh, (
        f"{key} differs from what its results files render; run `.venv/bin/python scripts/blocks.py --write "
        f"{key.split(': ')[1]}` (and commit the page), or fix its entry in docs/blocks.yaml"
    )


def test_every_results_path_of_the_registry_is_committed():
    """The registry is the one place results paths are declared; each names a committed file (the 1M-row matching
    run, whose block shows a placeholder until it finishes, excepted)."""
    pending = {b.results for b in BLOCKS["BLOCKS"] if b.missing}
    missing = [
        p for p in BLOCKS["results_paths"]() if not ((ROOT / p).is_file() or (ROOT / p).is_dir()) and p not in pending
    ]
    assert not missing, f"docs/blocks.yaml names results files that do not exist: {missing}"


def test_write_puts_a_drifted_block_back(tmp_path, monkeypatch):
    """A number changed by hand in a block is detected by the comparison and rewritten from the results file."""
    block = next(b for b in BLOCKS["BLOCKS"] if b.name == "dev-suite")
    page = tmp_path / "page.md"
    text = (ROOT / block.page).read_text()
    body = BLOCKS["block_text"](text, block.name)
    page.write_text(text.replace(body, body.replace("|", "| 1", 1)))
    assert BLOCKS["block_text"](page.read_text(), block.name) != body
    BLOCKS["run_block"](block, page)
    assert BLOCKS["block_text"](page.read_text(), block.name) == body  # --write puts the generated text back


def test_zoo_authors_column_is_not_measured_until_its_results_file_exists(tmp_path):
    """The zoo table's "authors' checkpoint" column: ¹ (not measured, no network) without the results file that
    `phrasezoo evaluate --model <repo id>` writes, the headline tasks' values once it exists, – without weights."""
    import json

    from phrasezoo.evaluation.hub_model import authors_results_path
    from phrasezoo.zoo.registry import get_method, list_methods

    repo = next(r.repo_id for m in list_methods() for r in get_method(m).releases)
    row = {"authors": repo, "tasks": [{"label": "Turney", "task": "turney"}, {"label": "BiRD", "task": "bird"}]}
    assert BLOCKS["authors_cell"](row, tmp_path) == f"`{repo}`: not measured¹"
    assert BLOCKS["authors_cell"]({"tasks": row["tasks"]}, tmp_path) == "–"
    path = tmp_path / authors_results_path(repo)
    path.parent.mkdir(parents=True)
    results = [{"task": "turney", "metric": "accuracy", "value": 0.5612, "n": 1, "seconds": 0.0, "notes": ""}]
    doc = {"model": repo, "model_revision": "x", "created": "2026-01-01", "results": results}
    path.write_text(json.dumps(doc))
    assert BLOCKS["authors_cell"](row, tmp_path) == f"`{repo}`: Turney: 56.1<br>BiRD: –"
    assert "¹ Not measured" in BLOCKS["AUTHORS_NOTE"]
