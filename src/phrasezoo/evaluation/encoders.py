"""Moved to :mod:`phrasezoo.encoders` (the shared level: evaluation, applications and data all use it); this alias
keeps existing imports working."""

from phrasezoo.encoders import *  # noqa: F403
from phrasezoo.encoders import __all__  # noqa: F401
