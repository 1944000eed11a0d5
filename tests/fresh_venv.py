"""Fresh environments for the install tests: the phrasezoo wheel built from the checkout offline, and bare venvs that
see a chosen site folder (``tests/test_wheel.py``, ``tests/spaces/test_space_build.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from phrasezoo.core.files import REPO_ROOT

#: what ``pip wheel .`` reads from the repository
BUILD_FOLDERS = ("src", "hub_configs", "model_cards")
BUILD_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


def build_wheel(tmp: Path) -> Path:
    """The phrasezoo wheel built from a clean copy of the checkout (no build/ leftovers, no build/ litter in the
    checkout), offline: ``--no-build-isolation`` uses this venv's setuptools."""
    source = tmp / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in BUILD_FOLDERS:
        shutil.copytree(REPO_ROOT / folder, source / folder, ignore=skip)
    for file in BUILD_FILES:
        shutil.copy2(REPO_ROOT / file, source / file)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
         "--disable-pip-version-check", "-w", str(tmp / "dist")],
        check=True, cwd=tmp,
    )  # fmt: skip
    return next((tmp / "dist").glob("phrasezoo-*.whl"))


def make_venv(env_dir: Path, visible: Path | str) -> Path:
    """A venv without pip (this interpreter's pip installs into it with ``--python``) whose interpreter also sees the
    packages in ``visible``, as a plain path: ``.pth`` files there (e.g. an editable install) stay inactive. Returns
    its bin folder."""
    import venv

    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    target = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    Path(target, "visible_packages.pth").write_text(f"{visible}\n")
    return bin_dir
