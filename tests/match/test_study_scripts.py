"""The matching study's scripts (benchmarks/matching_*.py, matcher_comparison.py) on small hand-made inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(BENCHMARKS.parent / "experiments" / "matching"))  # the dev study and the alias proxy

import matcher_comparison  # noqa: E402
import matching_alias_proxy as proxy  # noqa: E402
import matching_dev as dev  # noqa: E402
import matching_encoders as encoders  # noqa: E402
import matching_rerankers as rerankers  # noqa: E402

from phrasezoo.match.features.pairs import FEATURES  # noqa: E402


def synthetic_tables(n_tables: int = 4, n: int = 60, p: int = 5, seed: int = 0) -> list:
    """Tables whose gold candidate has a higher emb and char feature than the others, plus noise."""
    rng = np.random.default_rng(seed)
    tables = []
    for k in range(n_tables):
        features = rng.normal(0, 1, size=(n, p, len(FEATURES))).astype(np.float32)
        labels = np.zeros((n, p), dtype=bool)
        gold = rng.integers(0, p, size=n)
        labels[np.arange(n), gold] = True
        labels[: n // 10] = False  # some queries have no gold among the candidates
        features[np.arange(n), gold, FEATURES.index("emb")] += 2.0
        features[np.arange(n), gold, FEATURES.index("char")] += 1.0
        ids = np.tile(np.arange(p), (n, 1))
        tables.append(dev.TableFeatures(f"t{k}", ids, features, labels, np.ones(n, dtype=bool), FEATURES))
    return tables


def test_listwise_weights_favour_the_informative_features_and_cross_fitting_scores_every_table():
    tables = synthetic_tables()
    weights = dev.fit_listwise(tables, ["emb", "char", "word"])
    assert weights[0] > weights[1] > abs(weights[2])
    result = dev.score_cross_fitted(tables, ["emb", "char"], "ranked")
    assert set(result["per_dataset"]) == {t.name for t in tables}
    assert result["accuracy"] > 0.7 and result["candidate_recall"] == pytest.approx(0.9)


def test_ranked_combination_keeps_the_order_and_calibration_is_monotone():
    tables = synthetic_tables()
    combination = dev.fit_ranked(tables, ["emb", "char"])
    t = tables[0]
    idx = [FEATURES.index(f) for f in combination.features]
    z, p = combination.rank_score(t.features[..., idx]), combination.score(t.features[..., idx], t.valid)
    assert (z.argmax(1) == p.argmax(1)).all() and ((p >= 0) & (p <= 1)).all()
    scores = dev.cross_fitted_scores(tables, ["emb", "char"])
    table = dev.calibration_table(tables, scores)
    thresholds = [row[1] for row in table]
    assert thresholds == sorted(thresholds) and len(table[0]) == 3
    for target, threshold, _ in table[::10]:
        if threshold < max(s.max() for s in scores.values()):
            assert dev.precision_at(tables, scores, threshold)["precision"] >= target - 1e-9


def test_alias_mrr_ranks_aliases_against_siblings():
    groups = [proxy.AliasGroup("number", "2012 Games", ["Games of 2012"], ["2013 Games", "2011 Games"])]

    def perfect(queries, candidates):  # the alias (or the name) first
        return np.array([[1.0 if c in ("Games of 2012", "2012 Games") else 0.0 for c in candidates] for _ in queries])

    def worst(queries, candidates):
        return -perfect(queries, candidates)

    assert proxy.alias_mrr(groups, perfect)["name->alias"] == 1.0
    assert proxy.alias_mrr(groups, worst)["name->alias"] == pytest.approx(1 / 3, abs=1e-4)
    assert proxy.alias_mrr(groups, worst)["alias->name:number"] == pytest.approx(1 / 3, abs=1e-4)


def test_proxy_building_rules():
    assert proxy.moved_numbers("81st Academy Awards", 2)[0].endswith("Academy Awards")
    assert all(
        "st Academy" not in t or t.startswith(("1st", "21st", "31st"))
        for t in proxy.moved_numbers("81st Academy Awards")
    )
    assert proxy.names_the_title("I-165", "Interstate 165") and proxy.names_the_title("WTO", "World Trade Organization")
    assert not proxy.names_the_title("in Hungary", "Hungarian Revolution of 1919")


def test_comparison_tables_render_from_a_results_file():
    model = {"name": "tfidf:char", "spec": "tfidf:char", "tasks": {
        "autofj_test": {"accuracy": 0.696, "rows_per_second": 200.0, "recall_at_p90": 0.405, "best_f1": 0.712},
        "autofj": {"accuracy": 0.706, "rows_per_second": 200.0, "rows": 10, "left_rows": 100},
        "yago": {"accuracy": 0.863, "rows_per_second": 300.0}}}  # fmt: skip
    report = {"created": "2026-11-27T00:00:00", "machine": "x86_64 2 cores", "load_average_start": 1.0,
              "load_average_end": 1.0, "command": "cmd", "zoo_note": "note", "models": [model]}  # fmt: skip
    table = matcher_comparison.accuracy_table(report)
    assert "| tfidf:char | **69.6** | 200 | **70.6** | 200 | **86.3** | 300 |" in table
    assert "40.5" in matcher_comparison.precision_table(report)


def test_a_suite_row_reads_accuracy_and_speed_and_has_no_precision_row(tmp_path):
    from phrasezoo.evaluation.tasks.autofj import autofj_names

    names = autofj_names()
    per = {n: (1.0 if n in autofj_names("test") else 0.0) for n in names}
    doc = {"model": "baseline:mpnet-base", "created": "2026-11-23T13:02:28+00:00", "results": [
        {"task": "autofj", "value": 0.8, "n": 100, "seconds": 50.0, "details": {"per_dataset": per}},
        {"task": "yago", "value": 0.81, "n": 10, "seconds": 2.0},
        {"task": "turney", "value": 0.5, "n": 10, "seconds": 1.0}]}  # fmt: skip
    path = tmp_path / "suite.json"
    path.write_text(__import__("json").dumps(doc))
    entry = matcher_comparison.suite_entry(str(path), autofj_names("test"))
    assert entry["tasks"]["autofj_test"]["accuracy"] == 1.0 and entry["tasks"]["autofj"]["accuracy"] == 0.8
    assert entry["tasks"]["yago"]["rows_per_second"] == 5.0 and "turney" not in entry["tasks"]
    report = {"created": "2026-11-27T00:00:00", "machine": "m", "load_average_start": 1.0, "command": "c",
              "zoo_note": "z", "models": [entry]}  # fmt: skip
    assert "| baseline:mpnet-base" not in matcher_comparison.precision_table(report)
    assert str(path) in matcher_comparison.accuracy_table(report)


def test_the_timing_sample_is_every_tenth_test_dataset_and_the_first_mentions():
    from phrasezoo.evaluation.tasks.autofj import JoinTable, autofj_names

    tables = [JoinTable(n, ["a"], ["a"], {"a": "a"}) for n in autofj_names()]
    sample = matcher_comparison.timing_data({"autofj": tables, "yago": (list("abcd"), list("abcd"))}, 2)
    assert [t.name for t in sample["autofj"]] == autofj_names("test")[::10]
    assert sample["yago"] == (["a", "b"], ["a", "b"])


def test_merged_rows_keep_the_first_runs_note_and_print_their_own(tmp_path):
    first = {"created": "2026-11-27T00:00:00", "machine": "m", "load_average_start": 1.0, "command": "first",
             "zoo_note": "no zoo model", "models": [{"name": "tfidf:char", "spec": "tfidf:char", "tasks": {}}]}  # fmt: skip
    path = tmp_path / "comparison.json"
    path.write_text(__import__("json").dumps(first))
    zoo = {"name": "zoo-model", "spec": "outputs/zoo-model", "note": "retrained by the main job", "tasks": {
        "autofj": {"accuracy": 0.7, "rows_per_second": 20.0, "rows": 10, "left_rows": 100}}}  # fmt: skip
    added = {"created": "2026-11-28T00:00:00", "command": "second", "load_average_start": 2.0, "zoo_note": "zoo",
             "models": [zoo]}  # fmt: skip
    merged = matcher_comparison.merged(str(path), added)
    assert [m["spec"] for m in merged["models"]] == ["tfidf:char", "outputs/zoo-model"]
    dropped = matcher_comparison.merged(str(path), added, drop=("tfidf:char",))  # a row a change made redundant
    assert [m["spec"] for m in dropped["models"]] == ["outputs/zoo-model"]
    assert merged["zoo_note"] == "no zoo model" and merged["command"] == "first"
    table = matcher_comparison.accuracy_table(merged)
    assert "- zoo-model: retrained by the main job" in table
    assert "Rows added to the run above by `second` (2026-11-28" in table


def test_zoo_folders_are_found_behind_matcher_prefixes(tmp_path):
    folder = str(tmp_path)
    assert [matcher_comparison.zoo_folder(s) for s in (folder, f"hybrid:{folder}")] == [folder] * 2
    assert matcher_comparison.zoo_folder("tfidf:char") is None and matcher_comparison.zoo_folder("hybrid") is None
    assert matcher_comparison.zoo_folder(f"suite:{folder}") is None


def test_the_encoder_rule_keeps_minilm_on_a_tie_and_checks_the_alias_proxy():
    def row(accuracy, mrr):
        return {"accuracy": accuracy, "alias_proxy_raw": {"name->alias": mrr}}

    default = "baseline:minilm-l6"
    assert encoders.choose({default: row(0.784, 0.73), "zoo-model": row(0.781, 0.80)})[0] == default
    assert encoders.choose({default: row(0.784, 0.73), "zoo-model": row(0.786, 0.80)})[0] == default  # a tie
    assert encoders.choose({default: row(0.784, 0.73), "zoo-model": row(0.80, 0.70)})[0] == default  # aliases
    assert encoders.choose({default: row(0.784, 0.73), "zoo-model": row(0.80, 0.75)})[0] == "zoo-model"


def test_a_reranker_learns_the_gold_candidate_and_its_string_features_have_their_shape():
    tables = synthetic_tables(n_tables=3)
    parts = [(t.features[..., :4], t.valid, t.labels) for t in tables[1:]]  # emb and char (informative), 2 noise
    for hidden in (0, 8):
        score = rerankers.train_reranker(parts, hidden=hidden, seed=0)
        accuracy = dev.table_metrics(tables[0], score(tables[0].features[..., :4]))["accuracy"]
        assert accuracy > 0.5  # chance is 0.2 (5 candidates); the best possible 0.9 (10% have no gold candidate)
    reference = ["Acme Corp", "Beta Ltd", "Gamma 2007"]
    t = tables[0]
    t.ids = np.where(t.ids >= 0, t.ids % len(reference), -1)
    queries = ["acme corp"] * len(t.ids)
    strings = rerankers.string_features(queries, reference, t)
    assert strings.shape == (*t.ids.shape, len(rerankers.STRING_FEATURES))
    assert t.ids[0, 0] == 0  # the query's first candidate is reference row 0, equal to it up to case
    assert strings[0, 0, rerankers.STRING_FEATURES.index("ratio")] == pytest.approx(1.0)
    assert strings[0, 1, rerankers.STRING_FEATURES.index("ratio")] < 0.7


def test_names_calibration_bound_is_above_point_and_the_table_is_monotone():
    import names_calibration as calib

    tables = synthetic_tables(n_tables=6)
    for t in tables:
        t.domain, t.weight = "autofj", 1 / 6
    scores = dev.cross_fitted_scores(tables, ["emb", "char"])
    grid = calib.grid_of(tables, scores)
    point = calib.domain_thresholds(tables, scores, grid)["autofj"]
    bound = calib.bound_thresholds(tables, scores, grid)
    assert all(bound[t] >= point[t] for t in point)  # a lower percentile of precision needs a higher threshold
    curve = calib.precision_curve(tables, scores, grid)
    assert curve[np.searchsorted(grid, point[0.8])] >= 0.8
    table = calib.calibration_table({"a": point, "b": bound})
    assert [row[1] for row in table] == sorted(row[1] for row in table)
    assert all(row[1] >= bound[row[0]] - 1e-6 for row in table)  # rows are rounded to 1e-6
    result = calib.rule_12(tables, scores, grid)
    assert result["point"]["splits"] == 20 and result["winner"] in ("point", "bound")


def test_names_fit_and_test_files_of_another_encoder_keep_the_defaults_apart():
    import names_dev

    default = "baseline:minilm-l6@onnx-int8"  # rule 30
    assert names_dev.suffix(default) == "" and names_dev.model_flag(default) == ""
    assert names_dev.suffix("baseline:minilm-l6") == "-baseline-minilm-l6"  # the torch default of rounds 1-7
    assert names_dev.suffix("model-b") == "-model-b"
    assert names_dev.model_flag("outputs/model-b") == " --model outputs/model-b"
    domains = ("autofj", "acronyms", "aliases", "short-names", "noisy", "mean")
    auto = {t: {"precision": 0.9, "recall": 0.5} for t in ("0.8", "0.9", "0.95")}
    row = {d: {"accuracy": 0.5, "mrr10": 0.6, "auto": auto} for d in domains}
    report = {"rows": {"hybrid:model-b": row, "emb alone": {d: {"accuracy": 0.4} for d in domains}},
              "split": "test", "command": "c", "created": "2026-11-28", "file": "results/matching/names-test-model-b.json"}  # fmt: skip
    text = names_dev.render_test(report)
    assert "| hybrid:model-b | **50.0 (0.600)**" in text and "names-test-model-b.json" in text


def test_a_names_read_needs_a_combination_learned_for_its_encoder():
    import names_dev

    assert names_dev.learned_combination("baseline:minilm-l6", "baseline:minilm-l6").meta["encoder"] == (
        "baseline:minilm-l6")  # fmt: skip
    with pytest.raises(SystemExit, match="names_dev.py fit --model outputs/model-x"):
        names_dev.learned_combination("model-x", "outputs/model-x")
