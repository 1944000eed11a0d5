"""Exceptions shared by the resource readers (kept apart so that every reader can import them without a loop)."""

from __future__ import annotations


class MissingResourceError(RuntimeError):
    """A named resource is not installed; the message says how to install it."""
