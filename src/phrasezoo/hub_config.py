"""Old name of :mod:`phrasezoo.recipes`, kept so that existing imports keep working; use ``phrasezoo.recipes``."""

from phrasezoo.recipes import *  # noqa: F403
from phrasezoo.recipes import HUB_CONFIG_DIR, REPO_ROOT, HubConfig, TrainingConfig  # noqa: F401
