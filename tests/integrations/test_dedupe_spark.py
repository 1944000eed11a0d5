"""phrasezoo.match.spark on Spark (pyspark local mode, Java from Debian): dedupe_spark gives the same
clusters as phrasezoo.match.dedupe on one machine, on a list built from a small AutoFJ dev table.

conftest.py's SparkSession (local[2]); the names are spread over 2 partitions, so two Python workers each
load the saved matcher; no skip, like test_splink_spark.py: scripts/bootstrap.sh installs Java and pyspark.
"""

from __future__ import annotations

import pandas as pd
import pytest

from phrasezoo.match import Matcher, dedupe
from phrasezoo.match.engine.dedupe import distinct_names
from phrasezoo.match.spark import dedupe_spark


@pytest.fixture(scope="module")
def names() -> list[str]:
    """TennisTournament (an AutoFJ dev table): its 27 right rows, their gold left names and 30 other left names."""
    from phrasezoo.evaluation.tasks.autofj import read_autofj

    table = read_autofj(["TennisTournament"])[0]
    gold = [table.gold[r] for r in table.right]
    others = [name for name in table.left if name not in set(gold)][:30]
    return table.right + gold + others + [table.right[0].upper()]  # one exact duplicate


def test_spark_gives_the_same_clusters_as_one_machine(spark, names):
    matcher = Matcher(progress=False).fit(distinct_names(names)[0])  # fitted once for both methods and both paths
    table = spark.createDataFrame(pd.DataFrame({"row": range(len(names)), "name": names})).repartition(2)
    for method in ("components", "average"):
        local = dedupe(names, method=method, matcher=matcher, progress=False)
        result, report = dedupe_spark(table, "name", id_column="row", method=method, matcher=matcher)
        assert set(result.columns) == {"row", "name", "cluster", "cluster_size"}
        rows = result.toPandas().sort_values("row")
        assert rows["name"].tolist() == names  # every row kept
        assert rows["cluster"].tolist() == local["cluster"].tolist()
        assert rows["cluster_size"].tolist() == local["cluster_size"].tolist()
        assert report["clusters_by_size"] == local.attrs["report"]["clusters_by_size"]
        assert report["pairs_kept"] == local.attrs["report"]["pairs_kept"] > 0
        assert report["scored_by"] == local.attrs["report"]["scored_by"] == "dedupe decision"
        assert report["estimate"] == local.attrs["report"]["estimate"] and report["estimate"]["queries"] > 0
        assert rows["cluster"].iloc[-1] == 0  # the exact duplicate of row 0
        assert local.attrs["report"]["largest_cluster"] < len(names) / 4


def test_spark_missing_values_and_bad_columns(spark):
    table = spark.createDataFrame([(0, "Acme"), (1, None), (2, "acme!")], "row long, name string").coalesce(1)
    with pytest.raises(ValueError, match="missing or empty"):
        dedupe_spark(table, "name", "tfidf:char", threshold=0.9)
    with pytest.raises(ValueError, match="no column 'title'"):
        dedupe_spark(table, "title", "tfidf:char", threshold=0.9)
    result, report = dedupe_spark(table, "name", "tfidf:char", threshold=0.9, id_column="row", on_missing="skip")
    rows = result.toPandas().sort_values("row")
    assert rows["cluster"].tolist()[0] == rows["cluster"].tolist()[2] == 0 and pd.isna(rows["cluster"].iloc[1])
    assert report["rows"] == 3 and report["rows_skipped"] == 1 and report["rows_clustered"] == 2


def test_spark_with_labels_gives_the_same_clusters_as_one_machine(spark, names):
    """A list's labels (``calibrate_dedupe``): the pairs scored by the join's decision and recalibrated, the
    labelled threshold read over every pair on the driver, as one machine does."""
    from phrasezoo.evaluation.tasks.autofj import read_autofj
    from phrasezoo.match import calibrate_dedupe

    table_ = read_autofj(["TennisTournament"])[0]
    labels = [{"left": r, "right": table_.gold[r], "label": "y"} for r in table_.right[:6]]
    labels += [{"left": r, "right": table_.gold[o], "label": "n"}
               for r, o in zip(table_.right[6:10], table_.right[7:11]) if table_.gold[o] != table_.gold[r]]  # fmt: skip
    matcher = Matcher(progress=False).fit(distinct_names(names)[0])
    calibration = calibrate_dedupe(names, labels, progress=False)
    table = spark.createDataFrame(pd.DataFrame({"row": range(len(names)), "name": names})).repartition(2)
    local = dedupe(names, matcher=matcher, calibration=calibration, progress=False)
    result, report = dedupe_spark(table, "name", id_column="row", matcher=matcher, calibration=calibration)
    rows = result.toPandas().sort_values("row")
    assert rows["cluster"].tolist() == local["cluster"].tolist()
    assert report["threshold"] == pytest.approx(local.attrs["report"]["threshold"])
    assert report["scored_by"] == local.attrs["report"]["scored_by"] == "join decision"
    assert report["calibration"] == local.attrs["report"]["calibration"]
