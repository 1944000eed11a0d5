"""Every score of the suite goes through a local ``evaluate`` metric module: each module added for it gives the
number a hand computation gives on a small example, and no task computes a suite score by itself (a grep)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from phrasezoo.evaluation.metrics import compute

SRC = Path(__file__).resolve().parents[2] / "src" / "phrasezoo"


def test_ranking_gives_top1_and_mrr_at_depth():
    ranks = [1, 2, 11, 1, 4]
    result = compute("ranking", predictions=ranks, depth=10)
    assert result["accuracy"] == pytest.approx(2 / 5)
    assert result["mrr"] == pytest.approx((1 + 1 / 2 + 0 + 1 + 1 / 4) / 5)
    assert compute("ranking", predictions=ranks, depth=20)["mrr"] == pytest.approx((2.75 + 1 / 11) / 5)


def test_top1_accuracy_counts_a_hit_on_any_gold_candidate():
    best = [0, 2, 1, 3]
    gold = [[0], [1, 2], [2], [3, 0]]
    assert compute("top1_accuracy", predictions=best, references=gold)["accuracy"] == pytest.approx(3 / 4)


def test_span_iou_mean_threshold_and_exact():
    chosen = [[2, 4], [1, 2], [0, 3], [5, 6]]
    gold = [[2, 4], [1, 4], [1, 4], [0, 2]]
    # IoU: 1, 1/3, 2/4, 0
    result = compute("span_iou", predictions=chosen, references=gold)
    assert result["iou_mean"] == pytest.approx((1 + 1 / 3 + 0.5 + 0) / 4)
    assert result["iou_at_least_0.5"] == pytest.approx(2 / 4)
    assert result["exact"] == pytest.approx(1 / 4)
    assert result["n"] == 4


def test_rouge_f1_by_hand_and_the_mean_over_several_candidates():
    # "the cat sat" vs "the cat ran": unigrams 2 of 3 each way (F1 2/3); bigrams "the cat" 1 of 2 (F1 1/2)
    one = compute("rouge", predictions=[["the cat ran"]], references=["the cat sat"])
    assert one["rouge1"] == pytest.approx(2 / 3) and one["rouge2"] == pytest.approx(1 / 2)
    # a second reference, two candidates: identical (F1 1) and disjoint (F1 0), so its mean is 1/2
    two = compute("rouge", predictions=[["the cat ran"], ["a dog", "big hills"]], references=["the cat sat", "a dog"])
    assert two["per_item"]["rouge1"] == pytest.approx([2 / 3, 1 / 2])
    assert two["rouge1"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    # stemming on: "running" and "runs" both stem to "run"
    assert compute("rouge", predictions=[["runs"]], references=["running"])["rouge1"] == 1.0


def test_average_is_the_arithmetic_mean():
    assert compute("average", predictions=[0.5, 0.25, 1.0])["average"] == pytest.approx(1.75 / 3)


def test_accuracy_in_float32_is_the_torch_mean_bit_for_bit():
    rng = np.random.default_rng(0)
    for n in (7, 333, 3504):
        gold = rng.integers(0, 2, size=n)
        predicted = np.where(rng.random(n) < 0.9, gold, 1 - gold)
        torch_mean = float((torch.as_tensor(predicted).float() == torch.as_tensor(gold).float()).float().mean())
        ours = compute("accuracy", predictions=predicted.tolist(), references=gold.tolist(), dtype="float32")
        assert ours["accuracy"] == torch_mean
        plain = compute("accuracy", predictions=predicted.tolist(), references=gold.tolist())["accuracy"]
        assert plain == np.mean(predicted == gold)


def test_pearson_corrcoef_formula_and_its_constant_side():
    x, y = [1.0, 2.0, 3.0, 5.0], [2.0, 1.0, 4.0, 6.0]
    assert compute("pearson", predictions=x, references=y, formula="corrcoef")["pearson"] == float(
        np.corrcoef(x, y)[0, 1]
    )
    assert np.isnan(compute("pearson", predictions=[1.0, 1.0], references=[1.0, 2.0], formula="corrcoef")["pearson"])


#: what computing a suite score by hand looks like: a scoring library called directly, or a share of hits
SCORING_BY_HAND = re.compile(
    r"\b(pearsonr|spearmanr|normalized_mutual_info_score|linear_sum_assignment|rouge_scorer)\b"
    r"|np\.corrcoef|sklearn\.metrics|scipy\.stats|import rouge_score"
    r"|np\.mean\([^)]*(==|<=|>=)"
)
#: task functions that still compute their numbers themselves, each with the reason
NOT_YET: set[str] = set()


def _task_modules() -> list[Path]:
    """Every module that holds suite tasks or their scoring: the suite's tasks, the dev suite, the methods' tasks."""
    paths = [*(SRC / "evaluation" / "tasks").glob("*.py"), *(SRC / "evaluation" / "dev").glob("*.py")]
    return sorted(paths + list((SRC / "methods").glob("*/tasks/*.py")))


def test_no_task_computes_a_suite_score_outside_the_metric_modules():
    offenders = []
    for path in _task_modules():
        text = path.read_text(encoding="utf8")
        for number, line in enumerate(text.splitlines(), 1):
            if SCORING_BY_HAND.search(line.split("#")[0]):
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert not offenders, "score through phrasezoo.evaluation.metrics.compute instead:\n" + "\n".join(offenders)


def test_every_scoring_task_module_calls_a_metric_module():
    tasks = [p for p in (SRC / "evaluation" / "tasks").glob("*.py") if p.name != "base.py"]  # base: the abstract Task
    scoring = [p for p in tasks if "    def score(" in p.read_text("utf8")]
    assert len(scoring) >= 8
    missing = [p.name for p in scoring if 'compute("' not in p.read_text("utf8")]
    assert not missing, f"task modules that score without a metric module: {missing}"
    sources = "".join(path.read_text("utf8") for path in _task_modules())
    for name in NOT_YET:
        assert f"def {name}(" in sources, f"no task module has {name} any more: drop it from NOT_YET"
