"""mkdocs hook: the plots of results/ that the experiment logs show go into the site under results/.

The pages link them as ``../results/<name>.png`` (from docs/experiments/); the files stay where the scripts write
them (results/), so nothing is copied into docs/ by hand.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def on_files(files: Files, config) -> Files:
    for png in sorted((ROOT / "results").rglob("*.png")):
        rel = png.relative_to(ROOT).as_posix()
        files.append(File(rel, src_dir=str(ROOT), dest_dir=config["site_dir"], use_directory_urls=False))
    return files
