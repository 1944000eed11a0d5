"""phrasezoo.integrations.splink on Spark (pyspark local mode, Java from Debian): the embedding column encoded on
the executors, neighbour blocking, splink's cosine levels in Spark SQL, and a linkage that finds the true pairs.

One SparkSession for the test session (conftest.py: 2 cores, 1 shuffle partition: the data is tiny); no skip: scripts/bootstrap.sh installs Java and
pyspark, and CI runs this on a fresh machine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from phrasezoo.integrations.splink import (
    add_embedding_column,
    add_neighbour_blocks,
    cosine_comparison,
    neighbour_blocking_rule,
)
from phrasezoo.integrations.splink_tables import read_vectors

from .test_splink import LEFT, RIGHT


@pytest.fixture(scope="module")
def spark_tables(spark):
    """The two tables as Spark DataFrames, embedded on the executors with the default MiniLM (one partition each,
    so one Python worker loads the model)."""
    left = spark.createDataFrame(pd.DataFrame({"unique_id": range(len(LEFT)), "name": LEFT})).coalesce(1)
    right = spark.createDataFrame(pd.DataFrame({"unique_id": range(len(RIGHT)), "name": RIGHT})).coalesce(1)
    return add_embedding_column(left, "name"), add_embedding_column(right, "name")


def test_spark_embedding_column_equals_the_local_one(spark, spark_tables):
    left, _ = spark_tables
    assert dict(left.dtypes)["name_embedding"] == "array<float>"
    rows = left.orderBy("unique_id").toPandas()
    assert rows["name"].tolist() == LEFT  # every row kept, input columns unchanged
    spark_vectors = np.stack(rows["name_embedding"].to_numpy())
    local = add_embedding_column(pd.DataFrame({"name": LEFT}), "name", progress=False)
    local_vectors, _ = read_vectors(local, "name_embedding")
    np.testing.assert_allclose(spark_vectors, local_vectors, atol=1e-4)
    missing = spark.createDataFrame([(1, None), (2, " ")], "unique_id long, name string").coalesce(1)
    rows = add_embedding_column(missing, "name").collect()
    assert [r["name_embedding"] for r in rows] == [None, None]  # rows kept, null vectors


def test_spark_linkage_with_neighbour_blocks_and_cosine(spark, spark_tables):
    import splink.comparison_library as cl
    from splink import Linker, SettingsCreator, SparkAPI

    left, right = add_neighbour_blocks(list(spark_tables), "name_embedding", k=2)
    assert dict(left.dtypes)["embedding_neighbours"] == "array<bigint>"
    settings = SettingsCreator(
        link_type="link_only",
        comparisons=[cosine_comparison("name_embedding", [0.8, 0.6]), cl.JaroWinklerAtThresholds("name", [0.9])],
        blocking_rules_to_generate_predictions=[neighbour_blocking_rule()],
        probability_two_random_records_match=1 / len(LEFT),
    )
    # small data: persist instead of parquet checkpoints, one partition (each Spark job costs seconds here)
    api = SparkAPI(spark_session=spark, break_lineage_method="persist", num_partitions_on_repartition=1)
    linker = Linker([left, right], settings, db_api=api)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e3, seed=1)
    predictions = linker.inference.predict().as_pandas_dataframe()
    # splink's Spark SQL cosine levels agree with numpy on every compared pair
    cosine = np.array([np.dot(a, b) for a, b in zip(predictions["name_embedding_l"], predictions["name_embedding_r"])])
    expected = np.where(cosine >= 0.8, 2, np.where(cosine >= 0.6, 1, 0))
    assert predictions["gamma_name_embedding"].tolist() == expected.tolist()
    best = predictions.sort_values("match_weight", ascending=False).drop_duplicates("unique_id_r")
    found = dict(zip(best["unique_id_r"], best["unique_id_l"]))
    assert sum(found.get(i) == i for i in range(len(RIGHT))) >= 8, best[["name_l", "name_r", "match_weight"]]
