"""The data-pipeline tests each write their cached datasets under a fresh PHRASEZOO_CACHE (``fresh_cache``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_cache(fresh_cache):
    return fresh_cache
