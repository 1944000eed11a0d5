"""Exceptions shared by the readers of resources and user files (kept apart so that every reader can import them)."""

from __future__ import annotations

import sys
from collections.abc import Callable


class MissingResourceError(RuntimeError):
    """A named resource is not installed; the message says how to install it."""


class InputError(ValueError):
    """A user's file, row or argument is unusable; the message names it (file, line/row, key) and says the fix.

    The ``phrasezoo`` command prints it as one ``error:`` line (exit status 2) instead of a traceback. A subclass of
    ``ValueError``, so code that catches bad values keeps working.
    """


def run_command(command: Callable[[], int]) -> int:
    """Run a CLI command; a bad or missing user file, row or argument (:class:`InputError`, ``FileNotFoundError``)
    becomes one ``error:`` line on stderr and exit status 2 instead of a traceback."""
    try:
        return command()
    except (InputError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
