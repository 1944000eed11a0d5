"""Fresh environments for the install tests: the phrasezoo wheel built from the checkout offline, and bare venvs that
see a chosen site folder (``tests/test_wheel.py``, ``tests/spaces/test_space_build.py``)."""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

from phrasezoo.core.files import REPO_ROOT
from phrasezoo.hub import space


def build_wheel(tmp: Path) -> Path:
    """The phrasezoo wheel built from a clean copy of the checkout, offline (what ``phrasezoo push`` of a Space
    uploads: :func:`phrasezoo.hub.space.build_wheel`), in ``tmp/dist``."""
    return space.build_wheel(tmp / "dist", REPO_ROOT)


def make_venv(env_dir: Path, visible: Path | str) -> Path:
    """A venv without pip (this interpreter's pip installs into it with ``--python``) whose interpreter also sees the
    packages in ``visible``, as a plain path: ``.pth`` files there (e.g. an editable install) stay inactive. Returns
    its bin folder."""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    target = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    Path(target, "visible_packages.pth").write_text(f"{visible}\n")
    return bin_dir
