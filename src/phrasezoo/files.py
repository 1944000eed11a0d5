"""Small file helpers shared by checkpoints, exports and results files (stdlib only, cheap to import)."""

from __future__ import annotations

import os


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set back at once)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def readable_replace(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """``os.replace`` after giving the temporary file the usual permissions (mkstemp makes it owner-only, 0600)."""
    os.chmod(tmp, 0o666 & ~current_umask())
    os.replace(tmp, path)
