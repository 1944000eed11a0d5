"""No folder of src/phrasezoo holds more than twelve modules (``__init__`` and ``__main__`` not counted).

A folder past that size is split into sub-packages by job (e.g. ``src/phrasezoo/data/``: ``corpus/``, ``lexical/``,
``benchmarks/``; a method's helpers: CONTRIBUTING.md's ``<helper>/``). A folder that cannot be split stands in
:data:`EXEMPT` with its reason.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "phrasezoo"
MAX_MODULES = 12
#: folder (relative to src/phrasezoo) -> why it may hold more than MAX_MODULES modules
EXEMPT = {
    "evaluation/metrics": "`evaluate` loads each metric script by its path, and a script may import only modules of "
    "its own folder (metric_base.py), so the scripts cannot move into sub-packages.",
}


def module_counts() -> dict[str, int]:
    """folder (relative to src/phrasezoo, ``.`` for the top) -> how many modules it holds directly."""
    counts: dict[str, int] = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        if path.stem not in ("__init__", "__main__"):
            folder = path.parent.relative_to(PACKAGE_DIR).as_posix()
            counts[folder] = counts.get(folder, 0) + 1
    return counts


def test_no_folder_holds_more_than_twelve_modules():
    crowded = {folder: n for folder, n in sorted(module_counts().items()) if n > MAX_MODULES and folder not in EXEMPT}
    assert not crowded, (
        f"folders of src/phrasezoo with more than {MAX_MODULES} modules (split them into sub-packages by job, or "
        f"add the folder and its reason to EXEMPT): {crowded}"
    )


def test_every_exemption_is_still_needed():
    counts = module_counts()
    stale = [folder for folder in EXEMPT if counts.get(folder, 0) <= MAX_MODULES]
    assert not stale, f"exempt folders that hold {MAX_MODULES} modules or fewer now (drop them from EXEMPT): {stale}"
