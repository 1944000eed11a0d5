"""The AutoFJ task's dev/test split and AutoFJ's own precision/recall protocol."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.evaluation.tasks import TaskContext, get_task
from phrasezoo.evaluation.tasks.autofj import autofj_names, best_f1, precision_recall, recall_at_precision


def test_the_dev_split_is_every_fifth_sorted_name():
    names = autofj_names()
    dev, test = autofj_names("dev"), autofj_names("test")
    assert len(names) == 50 and len(dev) == 10 and len(test) == 40
    assert dev == names[::5] and sorted(dev + test) == names
    assert dev[:3] == ["Amphibian", "Case", "Drug"]
    with pytest.raises(ValueError, match="split must be one of"):
        autofj_names("train")


def test_split_tasks_load_only_their_datasets():
    ctx = TaskContext()
    dev = get_task("autofj_dev").load(ctx)
    assert [t.name for t in dev] == autofj_names("dev")
    assert get_task("autofj_test").split == "test" and get_task("autofj").split == "all"


def test_precision_recall_keeps_ties_together_and_counts_rows_without_gold_as_wrong():
    # scores of the best left row per right row; the last right row has no gold match (always a wrong join)
    scores = [0.9, 0.8, 0.8, 0.5, 0.4]
    correct = [True, True, False, True, False]
    thresholds, precision, recall = precision_recall(scores, correct, n_gold=4)
    assert thresholds.tolist() == [0.9, 0.8, 0.5, 0.4]
    np.testing.assert_allclose(precision, [1.0, 2 / 3, 3 / 4, 3 / 5])
    np.testing.assert_allclose(recall, [0.25, 0.5, 0.75, 0.75])
    assert recall_at_precision(scores, correct, 4, target=0.7) == pytest.approx(0.75)
    assert recall_at_precision(scores, correct, 4, target=0.9) == pytest.approx(0.25)
    assert best_f1(scores, correct, 4) == pytest.approx(0.75)
    assert recall_at_precision([], [], 0) == 0.0
