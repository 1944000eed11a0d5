"""One local[2] SparkSession for every Spark test module (starting a JVM costs ~13 s; CI runs them all)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from phrasezoo.integrations.splink import local_spark

    session = local_spark(cores=2, shuffle_partitions=1, driver_memory="1g", app_name="phrasezoo-tests")
    yield session
    session.stop()
