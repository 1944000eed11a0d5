"""SLICE evaluation additions: Williams' test, span localisation, STS-B-Context setups A/B/C with per-item scores,
and the Table-1 report with significance tests."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from phrasezoo.encoders import ModelEncoder
from phrasezoo.evaluation.metrics.span_iou import word_iou
from phrasezoo.evaluation.results import make_document
from phrasezoo.evaluation.tasks.base import TaskContext
from phrasezoo.evaluation.tasks.span_localisation import localisation_metrics, locate_words
from phrasezoo.evaluation.tasks.stsb_context import StsbContext, read_stsb_context
from phrasezoo.methods.slice.report import slice_table, williams_between
from phrasezoo.methods.slice.report.significance import williams_from_scores, williams_test
from phrasezoo.zoo.registry import get_method


# --------------------------------------------------------------------------------------------------- Williams
def test_williams_matches_steigers_worked_example():
    # Steiger (1980), also the example of R psych::r.test: n = 103, r12 = .5, r13 = .4, r23 = .1 -> t = 0.89,
    # two-sided p = 0.37 (df = 100)
    result = williams_test(0.5, 0.4, 0.1, 103)
    assert result.t == pytest.approx(0.891, abs=1e-3)
    assert result.p_two_sided == pytest.approx(0.375, abs=2e-3)
    assert result.p_one_sided == pytest.approx(result.p_two_sided / 2)
    assert result.df == 100
    # the statistic is antisymmetric in the two systems
    swapped = williams_test(0.4, 0.5, 0.1, 103)
    assert swapped.t == pytest.approx(-result.t) and swapped.p_one_sided == pytest.approx(1 - result.p_one_sided)


def test_williams_identical_systems_and_bad_input():
    assert williams_test(0.6, 0.6, 1.0, 50).t == 0.0
    with pytest.raises(ValueError, match="correlation"):
        williams_test(1.2, 0.4, 0.1, 100)
    with pytest.raises(ValueError, match="at least 4"):
        williams_test(0.5, 0.4, 0.1, 3)


def test_williams_from_scores_detects_a_better_system():
    rng = np.random.default_rng(0)
    gold = rng.normal(size=1000)
    good = gold + rng.normal(scale=0.5, size=1000)
    bad = gold + rng.normal(scale=1.5, size=1000)
    better = williams_from_scores(gold, good, bad)
    assert better.r12 > better.r13 and better.p_one_sided < 1e-6
    same = williams_from_scores(gold, good, good + rng.normal(scale=1e-3, size=1000))
    assert same.p_one_sided > 0.05


# ------------------------------------------------------------------------------------------------ localisation
def test_locate_words_case_and_final_period():
    passage = "Vast fields stretched out, and we could see a man riding a horse, his figure small."
    assert locate_words(passage, "A man riding a horse.") == (8, 13)  # "a man riding a horse," (comma word included)
    assert locate_words(passage, "a woman riding") is None
    assert word_iou((0, 4), (2, 6)) == pytest.approx(2 / 6)
    assert word_iou((0, 2), (2, 4)) == 0.0


def test_localisation_metrics():
    passages = ["one two three four five six", "alpha beta gamma delta", "x y z"]
    targets = ["three four", "beta gamma delta", "not there"]
    chosen = [(2, 4), (1, 2), (0, 1)]
    found = localisation_metrics(passages, targets, chosen)
    assert found["n_located"] == 2
    assert found["iou_mean"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert found["exact"] == pytest.approx(0.5)
    assert found["iou_at_least_0.5"] == pytest.approx(0.5)
    assert found["chosen_words_histogram"] == {"1": 2, "2": 1}
    with pytest.raises(ValueError, match="aligned"):
        localisation_metrics(passages, targets, chosen[:2])


# ---------------------------------------------------------------------------------------------- STS-B-Context
ROWS = [
    ("a man is riding a horse", "A man rides a horse.", "Far away we saw a man rides a horse across the field.", 4.8),
    ("a dog runs in the park", "A cat sleeps on a sofa.", "Inside the house a cat sleeps on a sofa all day long.", 0.4),
    ("two kids play football", "Two children play soccer.", "On Sunday two children play soccer near the school.", 4.0),
    ("a woman cuts an onion", "A woman slices an onion.", "In the kitchen a woman slices an onion for the soup.", 4.2),
    ("the stock market fell", "Prices of bread went up.", "Last week prices of bread went up in every town.", 1.0),
    ("a plane takes off", "An airplane is taking off.", "At dawn an airplane is taking off from the runway.", 5.0),
]


@pytest.fixture(scope="module")
def stsb_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("benchmarks")
    folder = root / "stsb_context"
    folder.mkdir()
    with open(folder / "sts-test-sentences-clean.tsv", "w", encoding="cp1252", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["", "line", "paraphrase", "passage", "goldsim"])
        for i, (line, paraphrase, passage, gold) in enumerate(ROWS):
            writer.writerow([i, line, paraphrase, passage, gold])
    return root


@pytest.fixture(scope="module")
def tiny_encoder():
    torch.set_num_threads(1)
    model = get_method("slice").tiny_model().eval()
    return ModelEncoder(model, name="tiny-slice", batch_size=4, progress=False)


def test_read_keeps_the_hidden_paraphrase(stsb_dir):
    data = read_stsb_context(stsb_dir / "stsb_context" / "sts-test-sentences-clean.tsv")
    assert data.targets[0] == "A man rides a horse." and len(data.gold) == len(ROWS)
    assert data.subset([1, 3]).lines == [ROWS[1][0], ROWS[3][0]]


def test_setups_scores_localisation_and_sample(stsb_dir, tiny_encoder):
    task = StsbContext()
    ctx = TaskContext(benchmarks_dir=stsb_dir, seed=0, options={"stsb_per_span_sample": 4})
    entries = {e.metric: e for e in task.score(tiny_encoder, task.load(ctx), ctx)}
    for way in ("passage", "spans_single_pass"):
        entry = entries[f"pearson_{way}"]
        assert entry.n == len(ROWS) and len(entry.details["scores"]) == len(ROWS)
        assert -1 <= entry.value <= 1 and entries[f"spearman_{way}"].value is not None
    # the stored scores reproduce the reported correlation
    scores = entries["pearson_spans_single_pass"].details["scores"]
    expected = entries["pearson_spans_single_pass"].value
    assert np.corrcoef(scores, [r[3] for r in ROWS])[0, 1] == pytest.approx(expected, abs=1e-4)  # scores: 6 digits
    assert entries["span_iou_mean"].n == len(ROWS)  # every paraphrase is found in its passage
    assert 0 <= entries["span_iou_mean"].value <= 1
    assert sum(entries["span_iou_mean"].details["chosen_words_histogram"].values()) == len(ROWS)
    sample = entries["pearson_spans_per_span_sample"]
    assert sample.n == 4 and len(sample.details["rows"]) == 4 and len(sample.details["scores"]) == 4
    assert entries["pearson_passage_sample"].details["rows"] == sample.details["rows"]
    assert "span_iou_mean_sample" not in entries  # localisation only on the full set


def test_report_table_with_williams(stsb_dir, tiny_encoder):
    task = StsbContext()
    ctx = TaskContext(benchmarks_dir=stsb_dir, seed=0, options={"stsb_per_span_sample": 4})
    data = task.load(ctx)
    doc_a = make_document("model-a", None, task.score(tiny_encoder, data, ctx))
    other = get_method("slice").tiny_model().eval()
    with torch.no_grad():
        for p in other.parameters():
            p.add_(0.05 * torch.randn_like(p))
    doc_b = make_document("model-b", None, task.score(ModelEncoder(other, progress=False), data, ctx))
    test = williams_between(doc_a, doc_b, "spans_single_pass", data.gold)
    assert test is not None and test.n == len(ROWS)
    text = slice_table([doc_b, doc_a], [("model-a", "model-b")], data.gold)
    assert "SLICE, BERT-base on MS MARCO (paper)" in text and "0.677" in text
    assert "| model-a | model-b | (C) single pass |" in text
    assert "(B) per span, sample" in text and "sample of 4 passages" in text
    with pytest.raises(ValueError, match="Unknown model"):
        slice_table([doc_a], [("model-a", "nope")], data.gold)


def test_report_cli_writes_the_readme_block(stsb_dir, tiny_encoder, tmp_path):
    from phrasezoo.evaluation.results import write_results
    from phrasezoo.methods.slice.report import main, untrained_model

    task = StsbContext()
    ctx = TaskContext(benchmarks_dir=stsb_dir, seed=0, options={"stsb_per_span_sample": 4})
    doc = make_document("model-a", None, task.score(tiny_encoder, task.load(ctx), ctx))
    write_results(doc, tmp_path / "a.json")
    write_results({**doc, "model": "model-b"}, tmp_path / "b.json")
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- slice:start -->\nold\n<!-- slice:end -->\nrest\n")
    code = main(["table", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--pair", "model-b vs model-a",
                 "--benchmarks-dir", str(stsb_dir), "--readme", str(readme)])  # fmt: skip
    text = readme.read_text()
    assert code == 0 and "\nold\n" not in text and "| model-b | model-a | (C) single pass |" in text
    assert text.startswith("intro\n") and text.endswith("rest\n")
    assert main(["table", str(tmp_path / "missing.json")]) == 2
    with pytest.raises(ValueError, match="untrained:METHOD:BACKBONE"):
        untrained_model("untrained:slice")


def test_max_size_sweep_and_its_table(stsb_dir, tiny_encoder):
    from phrasezoo.methods.slice.report import sweep_max_words, sweep_table

    entries = sweep_max_words(tiny_encoder, (2, 20), benchmarks_dir=stsb_dir, progress=False)
    metrics = [e.metric for e in entries]
    assert metrics == ["pearson_spans_single_pass_max2", "spearman_spans_single_pass_max2",
                       "pearson_spans_single_pass_max20", "spearman_spans_single_pass_max20"]  # fmt: skip
    task = StsbContext()
    ctx = TaskContext(benchmarks_dir=stsb_dir, seed=0)
    full = {e.metric: e.value for e in task.score(tiny_encoder, task.load(ctx), ctx)}
    assert entries[2].value == pytest.approx(full["pearson_spans_single_pass"], abs=1e-5)  # 20 = the task's default
    doc = make_document("m", None, entries)
    lines = sweep_table([doc, {**doc, "model": "n"}], [r[3] for r in ROWS], [("m", "n")])
    assert lines[0] == "| MAX_SIZE (words) | 2 | 20 |" and lines[-3].startswith("| Williams p: m > n |")
    plain = make_document("plain", None, [])
    lines = sweep_table([doc, plain], [r[3] for r in ROWS], [("m", "plain")])
    assert not any("plain" in line for line in lines)  # models and pairs without a sweep are left out
