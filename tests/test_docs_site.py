"""The docs site builds with `mkdocs build --strict` (a broken link, a missing page or a bad API reference fails)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert (site / "index.html").is_file() and (site / "api" / "models" / "index.html").is_file()
    home = (site / "index.html").read_text()
    assert "backbone, measured in the same run" in home  # the generated zoo table is on the home page
    assert "PearlModel" in (site / "api" / "models" / "index.html").read_text()  # mkdocstrings rendered the API


def test_every_page_is_in_the_nav():
    """A page left out of mkdocs.yml's nav is only an INFO line in the build; here it fails."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)

    def pages(items) -> set[str]:
        found = set()
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                found |= pages(value) if isinstance(value, list) else {value}
        return found

    listed = pages(config["nav"])
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk - listed == set(), "add these pages to mkdocs.yml's nav"
