"""One switch for progress bars: ``--no-progress`` / ``TQDM_DISABLE=1`` / ``PHRASEZOO_NO_PROGRESS=1``."""

from __future__ import annotations

import os


def progress_enabled(requested: bool = True) -> bool:
    """Whether to show a bar: the caller asked for one and the environment does not switch bars off."""
    return requested and not (os.environ.get("TQDM_DISABLE") or os.environ.get("PHRASEZOO_NO_PROGRESS"))
