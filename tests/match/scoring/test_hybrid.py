"""The hybrid default matcher: candidates, features, the learned combination, threshold='auto', save/load."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from phrasezoo.match import Combination, Matcher, join, link
from phrasezoo.match.features.pairs import FEATURES, margins
from phrasezoo.match.model.combinations import BLEND
from phrasezoo.match.model.learned import default_combination, shipped_learned
from phrasezoo.match.scoring.hybrid import HybridScorer

LEFT = ["2012 Wisconsin Badgers football team", "2013 Wisconsin Badgers football team", "The New York Times",
        "Federal Bureau of Investigation", "I Will (The Beatles song)", "Washington Post", "apple pie"]  # fmt: skip


@pytest.fixture(scope="module")
def fitted():
    return Matcher(progress=False).fit(LEFT)


def test_the_default_is_the_learned_listwise_combination_over_int8_minilm(fitted):
    scorer = fitted.scorer
    assert isinstance(scorer, HybridScorer) and scorer.vectors.name == "baseline:minilm-l6@onnx-int8"  # rule 30
    assert scorer.combination.link == "ranked" and scorer.combination.calibration
    assert scorer.combination.to_dict() == shipped_learned()["baseline:minilm-l6@onnx-int8"]
    assert set(scorer.combination.features) <= set(FEATURES)
    assert default_combination("some-other-encoder").to_dict() == shipped_learned()["baseline:minilm-l6@onnx-int8"]
    torch_path = Matcher(model="hybrid:baseline:minilm-l6", progress=False).fit(LEFT[:3]).scorer  # one spec away
    assert torch_path.vectors.name == "baseline:minilm-l6"
    assert torch_path.combination.to_dict() == shipped_learned()["baseline:minilm-l6"]


def test_numbers_acronyms_and_cores_decide_between_close_names(fitted):
    out = fitted.transform(["2013 Wisconsin Badgers football", "FBI", "I Will", "NY Times"])
    assert out["left"].tolist() == [LEFT[1], LEFT[3], LEFT[4], LEFT[2]]
    assert out["score"].between(0, 1).all()


def test_neighbourhood_is_computed_for_candidate_rows_only_and_equals_the_full_one():
    without_decision = {k: v for k, v in shipped_learned()["baseline:minilm-l6@onnx-int8"].items() if k != "decision"}
    matcher = Matcher(model=HybridScorer(combination=without_decision, progress=False), progress=False).fit(LEFT)
    hub = matcher.scorer.hub
    assert set(hub) == {"emb_hub", "char_hub"} and np.isnan(hub["char_hub"]).all()  # nothing paid at fit time
    matcher.transform(["2013 Wisconsin Badgers football"])
    reached = ~np.isnan(hub["char_hub"])
    assert 0 < reached.sum() <= len(LEFT)
    full = matcher.scorer.neighbourhood(np.arange(len(LEFT)))
    for name in hub:
        np.testing.assert_allclose(hub[name][reached], full[name][reached], atol=1e-6)
    assert full["emb_hub"][1] == pytest.approx(full["emb_hub"][0])  # the two seasons are each other's twin


def test_top_k_beyond_the_candidates_is_filled(fitted):
    out = fitted.transform(["apple pie"], top_k=len(LEFT))
    assert len(out) == len(LEFT) and out["score"].is_monotonic_decreasing


def test_auto_threshold_is_the_calibrated_one_and_rises_with_the_target(fitted):
    low, high = fitted.threshold_for(0.8), fitted.threshold_for(0.95)
    assert 0 <= low <= high <= 1
    out = join(LEFT, ["2013 Wisconsin Badgers football", "zebra crossing qqq"], threshold="auto", matcher=fitted)
    assert out.attrs["threshold"] == pytest.approx(fitted.threshold_for(0.9))
    assert out.attrs["target_precision"] == 0.9
    assert out["right_index"].tolist() + out.attrs["unmatched"] == [0, 1] or sorted(
        out["right_index"].tolist() + out.attrs["unmatched"]
    ) == [0, 1]
    with pytest.raises(ValueError, match="target_precision"):
        fitted.threshold_for(1.5)


def test_save_and_load_answer_the_same_without_reencoding_the_reference(fitted, tmp_path):
    fitted.transform(["FBI"])  # a search builds the index: the reference rows are then read from its memory
    assert type(fitted.scorer.vectors.vectors.base).__name__ == "_IndexRows"
    fitted.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["matcher.json", "matcher.safetensors"]
    state = json.loads((tmp_path / "m" / "matcher.json").read_text())
    assert state["scorer"]["kind"] == "hybrid" and state["reference"] == LEFT
    loaded = Matcher.load(tmp_path / "m", progress=False)
    assert loaded.scorer.vectors.encoder.encoded_count == 0  # the reference vectors came from the file
    queries = ["2013 Wisconsin Badgers football", "FBI", "NYTimes"]
    a, b = fitted.transform(queries, top_k=2), loaded.transform(queries, top_k=2)
    assert a["left"].tolist() == b["left"].tolist()
    np.testing.assert_allclose(a["score"], b["score"], atol=1e-5)
    assert loaded.scorer.vectors.encoder.encoded_count == len(queries)


@pytest.mark.parametrize("model", ["tfidf:char", "tfidf:word", "rapidfuzz:WRatio"])
def test_save_and_load_single_channels(model, tmp_path):
    matcher = Matcher(model, progress=False).fit(LEFT, labels=[f"id{i}" for i in range(len(LEFT))])
    matcher.save(tmp_path / "m")
    loaded = Matcher.load(tmp_path / "m")
    a, b = matcher.transform(["NY Times", "apple"]), loaded.transform(["NY Times", "apple"])
    assert a["left_index"].tolist() == b["left_index"].tolist() and a["left_index"].iloc[0] == "id2"
    np.testing.assert_allclose(a["score"], b["score"], atol=1e-6)


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved matcher"):
        Matcher.load(tmp_path)
    with pytest.raises(RuntimeError, match="Fit the matcher"):
        Matcher("tfidf:char").save(tmp_path / "x")
    with pytest.raises(ValueError, match="blocking function"):
        Matcher("tfidf:char", blocking=lambda t: t[:1]).fit(["ab"]).save(tmp_path / "y")


def test_blocked_hybrid_search_ranks_inside_the_blocks(fitted):
    blocked = Matcher(blocking="tokens", progress=False).fit(LEFT)
    out = blocked.transform(["2013 Wisconsin Badgers football", "zzz qqq"])
    assert out["left"].tolist()[0] == LEFT[1] and len(out) == 2  # the second falls back to the whole table


def test_link_with_the_default_collapses_aliases():
    kb = {"Q1": ["Federal Bureau of Investigation", "FBI"], "Q2": "Central Intelligence Agency"}
    out = link(["the FBI", "CIA"], kb, top_k=2, progress=False)
    assert out.groupby("mention_index")["entity_id"].apply(lambda s: s.is_unique).all()
    assert out[out["rank"] == 1]["entity_id"].tolist() == ["Q1", "Q2"]


def test_margins_and_combinations():
    scores = np.array([[0.9, 0.5, 0.1], [0.2, 0.2, -np.inf]], dtype=np.float32)
    valid = np.array([[True, True, True], [True, True, False]])
    np.testing.assert_allclose(margins(scores, valid), [[0.4, -0.4, -0.8], [0.0, 0.0, 0.0]], atol=1e-6)
    assert BLEND.score(np.array([[[1.0, 1.0]]], dtype=np.float32))[0, 0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="Unknown feature"):
        Combination(["cosine"], [1.0])
    with pytest.raises(ValueError, match="identity combination"):
        Combination(["emb", "char"], [1.0, 0.5], link="identity")
    with pytest.raises(ValueError, match="probability"):
        Combination(["emb"], [1.0], link="ranked", probability=[-1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="calibrated"):
        BLEND.threshold_for(0.9)


def test_a_context_map_shifts_each_query_by_its_top_candidate_and_keeps_the_order():
    """Rule 28's probability map: w . g, g the context features of the query's top-ranked valid candidate."""
    plain = Combination(["emb", "char"], [1.0, 0.5], link="ranked", probability=[2.0, 1.0, -1.0])
    context = Combination(["emb", "char"], [1.0, 0.5], link="ranked", probability=[2.0, 1.0, -1.0, 3.0],
                          context=["char"])  # fmt: skip
    rng = np.random.default_rng(0)
    features = rng.random((5, 4, 2)).astype(np.float32)
    valid = np.ones((5, 4), dtype=bool)
    valid[0, 0] = False
    z = plain.rank_score(features)
    top = np.argmax(np.where(valid, z, -np.inf), axis=1)
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    shift = logit(context.score(features, valid)) - logit(plain.score(features, valid))
    np.testing.assert_allclose(shift, np.repeat(3.0 * features[np.arange(5), top, 1][:, None], 4, 1), atol=1e-4)
    s = np.where(valid, context.score(features, valid), -np.inf)
    assert (np.argmax(s, 1) == top).all()
    assert Combination.from_dict(context.to_dict()) == context and "context" not in plain.to_dict()
    with pytest.raises(ValueError, match="one w per context feature"):
        Combination(["emb"], [1.0], link="ranked", probability=[1.0, 0.0, 0.0], context=["emb"])
    with pytest.raises(ValueError, match="context features"):
        Combination(["emb"], [1.0], link="ranked", probability=[1.0, 0.0, 0.0, 1.0], context=["char"])


def test_a_combination_learned_on_other_weights_of_the_same_name_warns():
    from types import SimpleNamespace

    from phrasezoo.match.scoring.hybrid import _warn_on_other_weights

    combination = Combination(["emb"], [1.0], meta={"encoder": "zoo-model", "encoder_revision": "sha256:aaa"})
    vectors = SimpleNamespace(name="zoo-model", encoder=SimpleNamespace(revision="sha256:bbb"))
    with pytest.warns(UserWarning, match="learned on its weights sha256:aaa; this folder holds sha256:bbb"):
        _warn_on_other_weights(combination, vectors)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_on_other_weights(
            combination, SimpleNamespace(name="zoo-model", encoder=SimpleNamespace(revision="sha256:aaa"))
        )
        _warn_on_other_weights(Combination(["emb"], [1.0]), vectors)  # no revision recorded: nothing to compare


def test_the_decision_scores_answers_without_reordering_the_ranking(fitted, tmp_path):
    """The default's score is its decision's probability (round 9): the top answers are the ranking's, the table
    level is measured at fit and saved with the matcher, and threshold='auto' is the decision's cut."""
    scorer = fitted.scorer
    assert scorer.decision is not None and scorer.table_level is not None
    queries = ["2013 Wisconsin Badgers football", "FBI", "NY Times", "Chicago Tribune"]
    scores, ids = fitted.search(queries, 3)
    ranking_only = {k: v for k, v in shipped_learned()["baseline:minilm-l6@onnx-int8"].items() if k != "decision"}
    plain = Matcher(model=HybridScorer(combination=ranking_only, progress=False), progress=False).fit(LEFT)
    assert (plain.search(queries, 1)[1][:, 0] == ids[:, 0]).all()  # same top answers
    assert (np.diff(scores, axis=1) <= 0).all() and ((scores >= 0) & (scores <= 1)).all()
    assert fitted.threshold_for(0.9) == pytest.approx(scorer.decision.cut_for(0.9))
    fitted.save(tmp_path / "m")
    again = Matcher.load(tmp_path / "m")
    assert again.scorer.table_level == pytest.approx(scorer.table_level)
    np.testing.assert_allclose(again.search(queries, 3)[0], scores, atol=1e-6)


def test_rank_one_is_the_rankings_answer_when_the_decisions_cap_ties_it(fitted):
    """The decision's probabilities are capped along the ranking's order, so the ranking's second answer can tie the
    first: rank 1 must stay the ranking's (ties went by column before round 11)."""
    scores = np.array([[0.3, 0.3, 0.1], [0.2, 0.2, -np.inf]], dtype=np.float32)
    z = np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 9.0]])
    valid = np.array([[True, True, True], [True, True, False]])
    best, order = fitted.scorer.best_candidates(scores, z, valid, 3)
    assert order[0].tolist() == [1, 0, 2] and order[1, :2].tolist() == [0, 1]
    assert best[0].tolist() == pytest.approx([0.3, 0.3, 0.1]) and best[1, 2] == -np.inf


def test_claims_make_a_shared_answer_less_sure_for_the_weaker_query(fitted):
    """Round 11: two queries whose top answer is one row, searched together, read each other's claim: the weaker
    loses confidence (the decision learned that a row claimed by a better query is likely that query's partner);
    searched alone, each reads no claim. The ranking is untouched."""
    pair = ["New York Times", "New York Timez Magazine"]
    together, ids = fitted.search(pair, 1)
    alone = np.array([fitted.search([q], 1)[0][0, 0] for q in pair])
    assert ids[0, 0] == ids[1, 0]
    weaker = int(np.argmin(together[:, 0]))
    assert together[weaker, 0] < alone[weaker]
    assert [fitted.search([q], 1)[1][0, 0] for q in pair] == ids[:, 0].tolist()


def test_repeats_of_one_text_claim_their_answer_once(fitted):
    """A vendor on three invoices is one claimant: repeats of a text read the claims of that text alone."""
    alone = fitted.search(["NY Times"], 1)[0][0, 0]
    repeated = fitted.search(["NY Times", "NY Times", "NY Times"], 1)[0][:, 0]
    np.testing.assert_allclose(repeated, alone, atol=1e-6)


def test_auto_reports_what_the_join_expects_of_its_threshold(fitted):
    out = fitted.transform(["FBI", "NY Times", "Los Angeles Lakers"], threshold="auto")
    estimate = out.attrs["estimate"]
    assert estimate["queries"] == 3 and estimate["threshold"] == pytest.approx(fitted.threshold_for(0.9))
    assert estimate["kept"] == len(out) and set(estimate) >= {"estimated_precision", "estimated_recall", "warning"}


def test_a_dedupe_reads_each_candidates_neighbourhood_without_the_query(fitted):
    """In a dedupe the query is a row of the reference: "2013 ..."'s nearest other row is the query "2012 ..." itself,
    so without the query it is the next one, as in a reference that lacks the query (the embedding channel, whose
    cosines do not depend on the rest of the table)."""
    scorer = fitted.scorer
    query = [LEFT[0]]
    vectors = scorer.encode(query)
    candidates = scorer.candidate_ids(query, vectors)
    candidates = np.where(candidates == 0, -1, candidates)
    plain = scorer.features(query, candidates, vectors)
    own = scorer.features_without_self(query, candidates, vectors, np.array([0]))
    column = scorer.combination.features.index("emb_hub")
    twin = list(candidates[0]).index(1)
    assert plain[0, twin, column] == pytest.approx(scorer.hub["emb_hub"][1])  # the query itself, "2012 ..."
    without = Matcher(progress=False).fit(LEFT[1:]).scorer
    expected = without.neighbourhood(np.array([0]))["emb_hub"][0]  # "2013 ..." in a reference without "2012 ..."
    assert own[0, twin, column] == pytest.approx(expected, abs=1e-5)
    assert own[0, twin, column] < plain[0, twin, column]
    others = [i for i, row in enumerate(candidates[0]) if row >= 0 and scorer.hub_detail["emb_hub_row"][row] != 0]
    np.testing.assert_array_equal(own[0, others], plain[0, others])  # rows whose nearest is not the query: unchanged
