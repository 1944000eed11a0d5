"""The decision over a ranking: its inputs, its probability kept in the ranking's order, its data and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.match.model.combinations import Combination
from phrasezoo.match.model.decision import (
    INPUTS,
    MARGIN_CAP,
    NEEDS,
    Decision,
    answer_inputs,
    keep_ranking_order,
    table_level_of,
)


def decision(**changes) -> Decision:
    fields = {"inputs": list(INPUTS), "mean": [0.0] * len(INPUTS), "scale": [1.0] * len(INPUTS),
              "coef": [1.0] + [0.0] * (len(INPUTS) - 1), "intercept": 0.0,
              "cuts": [[0.8, 0.6], [0.9, 0.75], [0.95, 0.9]]}  # fmt: skip
    fields.update(changes)
    return Decision(**fields)


def pair_columns(shape: tuple[int, int], rng) -> dict[str, np.ndarray]:
    return {name: rng.random(shape).astype(np.float32) for name in NEEDS}


def test_inputs_describe_each_candidate_as_its_queries_answer():
    rng = np.random.default_rng(0)
    z = np.array([[2.0, 1.5, -1.0], [0.3, 0.0, 0.0]], dtype=np.float32)
    valid = np.array([[True, True, True], [True, False, False]])
    pair = pair_columns(z.shape, rng)
    cols = answer_inputs(z, valid, pair, table_level=1.0)
    assert set(cols) == set(INPUTS)
    np.testing.assert_allclose(cols["margin"][0], [0.5, -0.5, -3.0])  # each against the best of the others
    assert cols["margin"][1, 0] == MARGIN_CAP  # a lone candidate: no competitor, the cap
    np.testing.assert_allclose(cols["score_over_table"][0], z[0] - 1.0)
    np.testing.assert_allclose(cols["emb_over_neighbour"], np.where(valid, pair["emb"] - pair["emb_hub"], 0), 1e-6)
    assert (cols["score"][~valid] == 0).all()  # padding reads as zeros, never as NaN or -inf


def test_probability_never_reorders_the_ranking():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(50, 8)).astype(np.float32)
    valid = rng.random((50, 8)) > 0.2
    valid[:, 0] = True
    p = rng.random((50, 8)).astype(np.float32)
    kept = keep_ranking_order(p, z, valid)
    masked = np.where(valid, z, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")
    ranked = np.take_along_axis(kept, order, axis=1)
    valid_ranked = np.take_along_axis(valid, order, axis=1)
    for row, ok in zip(ranked, valid_ranked):
        assert (np.diff(row[ok]) <= 0).all()
    top = order[:, 0]
    np.testing.assert_allclose(kept[np.arange(50), top], p[np.arange(50), top])  # the answer keeps its own


def test_table_level_is_the_self_joins_upper_decile():
    scores = np.r_[np.arange(10, dtype=np.float32), -np.inf]
    assert table_level_of(scores) == pytest.approx(8.1)
    assert table_level_of(np.array([-np.inf])) == 0.0


def test_cuts_interpolate_and_refuse_targets_outside_their_range():
    d = decision()
    assert d.cut_for(0.9) == pytest.approx(0.75)
    assert d.cut_for(0.85) == pytest.approx(0.675)
    with pytest.raises(ValueError, match="calibrated range"):
        d.cut_for(0.99)
    with pytest.raises(ValueError, match="no cuts"):
        decision(cuts=[]).cut_for(0.9)


def test_a_dedupe_reads_its_own_cuts_when_there_are_some_else_the_joins():
    d = decision(dedupe_cuts=[[0.8, 0.9], [0.95, 0.99]])
    assert d.cut_for(0.9, dedupe=True) == pytest.approx(0.9 + (0.99 - 0.9) * (0.1 / 0.15))
    assert d.cut_for(0.9) == pytest.approx(0.75)  # a join: the join's cuts
    assert decision().cut_for(0.9, dedupe=True) == pytest.approx(0.75)  # none of its own: the join's
    assert Decision.from_dict(d.to_dict()) == d and "dedupe_cuts" not in decision().to_dict()
    with pytest.raises(ValueError, match="rising target"):
        decision(dedupe_cuts=[[0.9, 0.7], [0.8, 0.6]])
    with pytest.raises(ValueError, match="calibrated range"):
        d.cut_for(0.7, dedupe=True)


def test_a_dedupe_decision_of_its_own_scores_lists_with_its_own_cuts():
    lists = decision(coef=[2.0] + [0.0] * (len(INPUTS) - 1), intercept=-1.0, cuts=[[0.8, 0.7], [0.95, 0.97]])
    d = decision(lists=lists.to_dict(), dedupe_cuts=[[0.8, 0.9], [0.95, 0.99]])
    assert d.for_lists() == lists and decision().for_lists() == decision()  # none: the join's decision itself
    assert d.cut_for(0.9, dedupe=True) == pytest.approx(lists.cut_for(0.9))  # its cuts, not dedupe_cuts
    assert d.cut_for(0.9) == pytest.approx(0.75)  # a join keeps the join's
    columns = {name: np.array([0.5, 1.0]) for name in INPUTS}
    assert not np.allclose(d.for_lists().probability(columns), d.probability(columns))
    assert Decision.from_dict(d.to_dict()) == d and "lists" not in decision().to_dict()
    only_cuts = decision(dedupe_cuts=[[0.8, 0.9], [0.95, 0.99]]).for_lists()
    assert only_cuts.cuts == [[0.8, 0.9], [0.95, 0.99]] and only_cuts.coef == decision().coef
    with pytest.raises(ValueError, match="nests nothing"):
        decision(lists=d.to_dict())
    with pytest.raises(ValueError, match="Unknown decision input"):
        decision(lists={**lists.to_dict(), "inputs": ["shoe_size"] + list(INPUTS[1:])})


def test_round_trip_and_clear_errors():
    d = decision()
    assert Decision.from_dict(d.to_dict()) == d
    with pytest.raises(ValueError, match="Unknown decision input"):
        decision(inputs=["score", "shoe_size"] + list(INPUTS[2:]))
    with pytest.raises(ValueError, match="one mean, scale and coefficient"):
        decision(coef=[1.0])
    with pytest.raises(ValueError, match="format_version"):
        decision(format_version=99)
    with pytest.raises(ValueError, match="rising target"):
        decision(cuts=[[0.9, 0.7], [0.8, 0.6]])


def test_a_combination_carries_its_decision_and_checks_its_features():
    features = list(NEEDS) + ["emb_margin"]
    combination = Combination(features, [0.1] * len(features), link="logistic", decision=decision().to_dict())
    assert combination.decision_model == decision()
    assert Combination.from_dict(combination.to_dict()).decision == combination.decision
    with pytest.raises(ValueError, match="does not compute"):
        Combination(["emb", "char"], [0.5, 0.5], link="logistic", decision=decision().to_dict())


def test_claims_compare_the_queries_that_share_a_top_row():
    from phrasezoo.match.model.decision import CLAIM_CAP, claim_inputs

    rows = np.array([3, 3, 5, -1, 3])
    scores = np.array([1.0, 2.0, 0.5, np.nan, 0.2])
    claims = claim_inputs(rows, scores)
    # row 3: the best claimant leads by 1.0, the others trail it; row 5 and the unanswered query read no claim
    np.testing.assert_allclose(claims["claim_gap"], [-1.0, 1.0, CLAIM_CAP, CLAIM_CAP, -1.8])
    np.testing.assert_allclose(np.exp(claims["log_claimants"]), [3, 3, 1, 1, 3])
    again = claim_inputs(np.array([3, 3, 3]), np.array([1.0, 1.0, 0.5]), keys=["a", "a", "b"])
    np.testing.assert_allclose(again["claim_gap"], [0.5, 0.5, -0.5])  # "a" twice is one claimant
    np.testing.assert_allclose(np.exp(again["log_claimants"]), [2, 2, 2])
