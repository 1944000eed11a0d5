"""phrasezoo.match.spark.join_spark on local[2] Spark gives the same answers as phrasezoo.match.join on one machine.

Two small AutoFJ dev tables (TennisTournament, RugbyLeague), the default matcher fitted once per table and reused by
both paths; the right rows are spread over 2 partitions, so two Python workers each load the saved matcher.
``benchmarks/spark_join_autofj.py`` runs the same comparison on all ten dev tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from phrasezoo.evaluation.tasks.autofj import read_autofj
from phrasezoo.match import Matcher, join
from phrasezoo.match.spark import join_spark


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TennisTournament", "RugbyLeague"])
def test_spark_join_gives_the_same_top_answers_as_one_machine(spark, name):
    table = read_autofj([name])[0]
    matcher = Matcher(progress=False).fit(table.left)
    local = join(table.left, table.right, top_k=2, matcher=matcher, progress=False)
    left = spark.createDataFrame(pd.DataFrame({"kb_id": np.arange(len(table.left)) * 10, "title": table.left}))
    right = spark.createDataFrame(pd.DataFrame({"row": range(len(table.right)), "name": table.right}))
    # the decision's claims compare every right row, whatever the partitions (two passes)
    for partitions in (1, 2):
        result, report = join_spark(left, right.repartition(partitions), top_k=2, left_column="title",
                                    left_id="kb_id", matcher=matcher)  # fmt: skip
        rows = result.toPandas().sort_values(["row", "rank"]).reset_index(drop=True)
        assert rows["match_status"].eq("matched").all() and len(rows) == len(local)
        assert rows["name"].tolist() == local["right"].tolist()
        assert rows["left"].tolist() == local["left"].tolist()
        assert (rows["left_index"] // 10).tolist() == local["left_index"].tolist()  # left_id values, not positions
        np.testing.assert_allclose(rows["score"], local["score"], atol=1e-5)
        assert report["reference_rows"] == len(table.left) and report["threshold"] is None


def test_spark_join_keeps_every_row_and_refuses_bad_input(spark):
    left = ["Acme Corporation", "Globex Inc", "Initech"]
    right = spark.createDataFrame([(0, "acme corp"), (1, None), (2, "zzzz qqqq")], "row long, name string").coalesce(1)
    with pytest.raises(ValueError, match="missing or empty"):
        join_spark(left, right, "tfidf:char")
    with pytest.raises(ValueError, match="no column 'title'"):
        join_spark(left, right, "tfidf:char", right_column="title")
    with pytest.raises(TypeError, match="Spark DataFrame"):
        join_spark(left, ["acme"], "tfidf:char")
    result, report = join_spark(left, right, "tfidf:char", threshold=0.5, on_missing="skip")
    rows = result.toPandas().sort_values("row")
    assert rows["match_status"].tolist() == ["matched", "skipped", "unmatched"]  # every right row is kept
    assert rows["left"].iloc[0] == "Acme Corporation" and rows["left_index"].iloc[0] == 0
    assert pd.isna(rows["rank"].iloc[2]) and report["threshold"] == 0.5


@pytest.mark.slow
def test_spark_join_with_labels_recalibrates_as_a_streamed_join_does(spark, tmp_path):
    """A calibration file on Spark: the executors shift the scores, ``"auto"`` takes the file's stored threshold
    (the command line's streamed join does the same), and a list's file is refused before anything is encoded."""
    from phrasezoo.match import calibrate, calibrate_dedupe, read_calibration

    table = read_autofj(["TennisTournament"])[0]
    matcher = Matcher(progress=False).fit(table.left)
    first = join(table.left, table.right, matcher=matcher, progress=False)
    labelled = first.assign(label=[table.gold.get(r) == a for r, a in zip(first["right"], first["left"])])
    path = calibrate(table.left, table.right, labelled.head(12), matcher=matcher, progress=False).save(
        tmp_path / "c.json")  # fmt: skip
    streamed = read_calibration(path)
    streamed.use_stored_cuts = True
    local = join(table.left, table.right, threshold="auto", matcher=matcher, calibration=streamed, progress=False)
    right = spark.createDataFrame(pd.DataFrame({"row": range(len(table.right)), "name": table.right})).repartition(2)
    result, report = join_spark(table.left, right, threshold="auto", matcher=matcher, calibration=path)
    rows = result.toPandas().sort_values(["row", "rank"])
    matched = rows[rows["match_status"] == "matched"].reset_index(drop=True)
    assert report["threshold"] == local.attrs["threshold"] == streamed.stored_cut(0.9)
    assert matched["name"].tolist() == local["right"].tolist() and matched["left"].tolist() == local["left"].tolist()
    np.testing.assert_allclose(matched["score"], local["score"], atol=1e-5)
    assert report["calibration"]["labels"] == 12 and report["calibration"]["honoured"] is True
    alone = streamed.threshold_alone()  # the threshold alone decides, on the executors too
    local_alone = join(table.left, table.right, threshold="auto", matcher=matcher, calibration=alone, progress=False)
    result, report = join_spark(table.left, right, threshold="auto", matcher=matcher, calibration=alone)
    rows = result.toPandas().sort_values(["row", "rank"])
    matched = rows[rows["match_status"] == "matched"].reset_index(drop=True)
    assert matched["name"].tolist() == local_alone["right"].tolist() and report["calibration"]["honoured"] is False
    assert (matched["score"] >= report["threshold"] - 1e-6).all()
    list_file = calibrate_dedupe(table.left[:20], [{"left": table.left[0], "right": table.left[1], "label": "n"}],
                                 progress=False).save(tmp_path / "list.json")  # fmt: skip
    with pytest.raises(ValueError, match="calibrates dedupe only"):
        join_spark(table.left, right, matcher=matcher, calibration=list_file)
