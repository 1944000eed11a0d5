"""docs/layout.md names every top-level package and module of src/phrasezoo, and nothing that is not there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "src" / "phrasezoo"
LAYOUT = ROOT / "docs" / "layout.md"
NAMED = re.compile(r"src/phrasezoo/(\w+)(/|\.py)")


def top_level() -> set[str]:
    """``name/`` for every package, ``name.py`` for every module directly under src/phrasezoo (``__init__`` and
    ``__main__`` are the package itself)."""
    packages = {f"{p.name}/" for p in PACKAGE_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.name for p in PACKAGE_DIR.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return packages | modules


def named_in_layout() -> set[str]:
    """The top-level entries docs/layout.md names as ``src/phrasezoo/<name>/...`` or ``src/phrasezoo/<name>.py``."""
    return {name + ("/" if separator == "/" else ".py") for name, separator in NAMED.findall(LAYOUT.read_text())}


def test_layout_names_every_top_level_package_and_module():
    missing = sorted(top_level() - named_in_layout())
    assert not missing, f"docs/layout.md does not name these parts of src/phrasezoo (add a line for each): {missing}"


def test_layout_names_nothing_that_is_gone():
    gone = sorted(named_in_layout() - top_level())
    assert not gone, f"docs/layout.md names parts of src/phrasezoo that do not exist: {gone}"
