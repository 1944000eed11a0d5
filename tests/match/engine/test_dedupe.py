"""phrasezoo.match.dedupe: clusters of one list (hybrid default), exact duplicates, bad input, the size report."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest

from phrasezoo.match import Matcher, dedupe
from phrasezoo.match.engine.dedupe import cluster_pairs, distinct_names, kept_edges

NAMES = [
    "International Business Machines",
    "2012 Formula One season",
    "IBM",
    "2013 Formula One season",
    "Microsoft Corporation",
    "Microsoft",
    "2012 Formula 1 season",
    "Google",
]


@pytest.fixture(scope="module")
def fitted():
    """The default matcher fitted once on NAMES' distinct names (every test below reuses it)."""
    return Matcher(progress=False).fit(distinct_names(NAMES)[0])


def same(frame, a: int, b: int) -> bool:
    return frame["cluster"].iloc[a] == frame["cluster"].iloc[b]


def test_aliases_together_and_look_alike_seasons_apart(fitted):
    # Since round 12 a list's pairs are scored by the dedupe decision (trained on AutoFJ's lists, where near-twin
    # rows are mostly distinct entities): the season spellings score low (the 2012 pair about 0.05-0.09, the 2013
    # pairs 0.03 and under), so target 0.8 (cut 0.74) keeps the three apart and merges Microsoft (0.82); a threshold
    # of 0.05 merges the 2012 spellings only
    auto = dedupe(NAMES, matcher=fitted, method="average", target_precision=0.8, progress=False)
    assert same(auto, 4, 5) and not same(auto, 1, 3) and not same(auto, 3, 6) and not same(auto, 1, 6)
    out = dedupe(NAMES, matcher=fitted, method="average", threshold=0.05, progress=False)
    assert list(out.columns) == ["name", "cluster", "cluster_size"]
    assert out["name"].tolist() == NAMES and out.index.tolist() == list(range(len(NAMES)))
    assert same(out, 4, 5)  # Microsoft Corporation / Microsoft
    assert same(out, 1, 6)  # 2012 Formula One / 2012 Formula 1
    assert not same(out, 1, 3) and not same(out, 3, 6)  # 2012 and 2013 seasons apart
    assert not same(out, 7, 4) and out["cluster_size"].iloc[7] == 1
    # cluster ids are the position of the cluster's first row
    assert all(out["cluster"].iloc[c] == c for c in out["cluster"])


def test_exact_duplicates_share_a_cluster_and_the_report_adds_up():
    names = pd.Series(["Acme Corp", "ACME corp.", "Zenith Labs", "acme  CORP", "Orbital Inc", None],
                      index=["a", "b", "c", "d", "e", "f"])  # fmt: skip
    with pytest.warns(UserWarning, match="Skipped 1 row"):
        out = dedupe(names, "tfidf:char", threshold=0.99, on_missing="skip", progress=False)
    assert out.index.tolist() == ["a", "b", "c", "d", "e"]
    assert out.loc[["a", "b", "d"], "cluster"].nunique() == 1 and out.loc["a", "cluster_size"] == 3
    report = out.attrs["report"]
    assert report["skipped"] == ["f"] and report["rows"] == 6
    assert sum(size * count for size, count in report["clusters_by_size"].items()) == report["rows_clustered"] == 5
    assert report["rows_clustered"] + report["rows_skipped"] == report["rows"]
    assert report["largest_cluster"] == 3 and report["largest_share"] == pytest.approx(0.6)


def test_components_and_average_on_chains():
    # a chain a-b-c with a strong link each but a-c missing: components join all, average splits off c
    edges = {(0, 1): 0.95, (1, 2): 0.9}
    assert cluster_pairs(4, edges, 0.8, "components").tolist() == [0, 0, 0, 3]
    assert cluster_pairs(4, edges, 0.8, "average").tolist() == [0, 0, 2, 3]
    # undirected, best direction kept, below the cut dropped
    assert kept_edges(np.array([0, 1, 2]), np.array([1, 0, 0]), np.array([0.5, 0.9, 0.1]), 0.6) == {(0, 1): 0.9}


def test_dataframe_column_duplicate_labels_and_one_name():
    frame = pd.DataFrame({"id": [1, 2, 3], "title": ["Acme", "acme!", "Zenith"]}, index=[7, 7, 8])
    out = dedupe(frame, "tfidf:char", threshold=0.9, column="title", progress=False)
    assert out.index.tolist() == [7, 7, 8]  # duplicate labels kept as they are; cluster = input position
    assert out["cluster"].tolist() == [0, 0, 2]
    single = dedupe(["only one"], "tfidf:char", threshold=0.9, progress=False)
    assert single["cluster"].tolist() == [0] and single["cluster_size"].tolist() == [1]


def test_empty_and_all_missing_give_an_empty_result():
    for names, options in (([], {}), ([None, float("nan")], {"on_missing": "skip"})):
        with pytest.warns(UserWarning) if options else nullcontext():
            out = dedupe(names, "tfidf:char", threshold=0.9, progress=False, **options)
        assert out.empty and list(out.columns) == ["name", "cluster", "cluster_size"]
        assert out.attrs["report"]["rows"] == len(names) and out.attrs["report"]["clusters"] == 0


def test_punctuation_only_rows_are_not_exact_duplicates_of_each_other():
    out = dedupe(["!!!", "???", "!!!"], "tfidf:char", threshold=0.99, progress=False)
    assert out["cluster"].tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    ("names", "options", "message"),
    [
        (["a", None], {}, "missing or empty value"),
        (["a", float("nan")], {"on_missing": "drop"}, "on_missing must be one of"),
        ("a string", {}, "must be a list of strings"),
        (["a", "b"], {"threshold": None}, "threshold must be a number in"),
        (["a", "b"], {"threshold": 1.5}, "threshold must be a number in"),
        (["a", "b"], {"threshold": "high"}, "threshold must be a number in"),
        (["a", "b"], {"method": "single"}, "method must be one of"),
        (["a", "b"], {"top_k": 0}, "top_k must be a positive integer"),
        (pd.DataFrame({"x": ["a"], "y": ["b"]}), {}, "name the one to match"),
        (["a", "b"], {"target_precision": 1.0}, "target_precision must be"),
    ],
)
def test_bad_input_is_a_clear_error(names, options, message):
    with pytest.raises(ValueError, match=message):
        dedupe(names, "tfidf:char", progress=False, **options)


def test_auto_threshold_needs_a_calibrated_matcher():
    with pytest.raises(ValueError, match="calibrated"):
        dedupe(["a b", "a c"], "tfidf:char", progress=False)


def test_a_matcher_fitted_on_other_names_is_refused():
    other = Matcher("tfidf:char", progress=False).fit(["x", "y"])
    with pytest.raises(ValueError, match="fitted on other names"):
        dedupe(["a", "b"], matcher=other, threshold=0.5, progress=False)


def test_the_command_writes_every_row_with_its_cluster(tmp_path, capsys):
    from phrasezoo.match.commands import main

    source = tmp_path / "names.csv"
    pd.DataFrame({"id": [1, 2, 3, 4], "name": ["Acme Corp", "", "ACME corp.", "Zenith"]}).to_csv(source, index=False)
    output = tmp_path / "clusters.csv"
    argv = ["dedupe", "--input", str(source), "--column", "name", "--model", "tfidf:char", "--threshold", "0.95"]
    assert main([*argv, "--output", str(output), "--no-progress"]) == 2
    assert "missing or empty" in capsys.readouterr().err
    assert main([*argv, "--skip-missing", "--output", str(output), "--no-progress"]) == 0
    written = pd.read_csv(output)
    assert written["id"].tolist() == [1, 2, 3, 4]  # every input row, in order
    assert written["cluster"].tolist()[0] == written["cluster"].tolist()[2] == 0 and pd.isna(written["cluster"][1])
    err = capsys.readouterr().err
    assert "2 clusters of 3 rows" in err and "1 row(s) with missing values" in err


def test_a_lists_pairs_are_scored_by_the_dedupe_decision_and_cut_by_its_cuts(fitted):
    from phrasezoo.match.engine.dedupe import neighbour_pairs, resolve_threshold, scores_lists

    scorer = fitted.scorer
    assert scorer.list_decision is not None and scores_lists(fitted)
    assert resolve_threshold(fitted, "auto", 0.9) == pytest.approx(scorer.list_decision.cut_for(0.9))
    out = dedupe(NAMES, matcher=fitted, progress=False)
    assert out.attrs["report"]["threshold"] == pytest.approx(scorer.list_decision.cut_for(0.9))
    assert out.attrs["report"]["scored_by"] == "dedupe decision"
    i, j, listed = neighbour_pairs(fitted, fitted.reference, np.arange(len(NAMES)), 3)
    own, scorer.list_decision = scorer.list_decision, scorer.decision  # the join's decision on the same list
    try:
        _, _, joined = neighbour_pairs(fitted, fitted.reference, np.arange(len(NAMES)), 3)
    finally:
        scorer.list_decision = own
    assert not np.allclose(listed, joined)
    blocked = Matcher(progress=False, blocking="tokens").fit(fitted.reference)
    assert not scores_lists(blocked)  # a blocked search scores pairs as a join does, and takes the join's cut
    assert resolve_threshold(blocked, "auto", 0.9) == pytest.approx(scorer.decision.cut_for(0.9))


def test_a_target_outside_the_dedupe_decisions_range_fails_before_the_list_is_encoded(monkeypatch):
    from phrasezoo.match.engine import matcher as matcher_module

    top = Matcher(progress=False).scorer.list_decision.cuts[-1][0]
    monkeypatch.setattr(matcher_module.Matcher, "fit", lambda *a, **k: pytest.fail("fitted before the check"))
    with pytest.raises(ValueError, match="calibrated range.*pass a number as threshold"):
        dedupe(["IBM", "International Business Machines"], target_precision=min(top + 0.005, 0.999), progress=False)
