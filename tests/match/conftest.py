"""A default matcher with a decision, for the tests of what a decision makes possible (labels, calibration, the
join's own estimate), whatever ``learned.json`` ships: the default combination with a small hand-made decision."""

from __future__ import annotations

import pytest

from phrasezoo.match.engine import matcher as matcher_module
from phrasezoo.match.model.combinations import Combination
from phrasezoo.match.model.decision import INPUTS, Decision
from phrasezoo.match.model.learned import default_combination
from phrasezoo.match.scoring.hybrid import HybridScorer

#: a reference table and queries with their gold answer (None: the partner is absent)
LEFT = ["The New York Times", "Washington Post", "apple pie", "banana bread", "Los Angeles Times", "Goldman Sachs",
        "JPMorgan Chase", "Morgan Stanley"]  # fmt: skip
GOLD = {
    "NY Times": "The New York Times",
    "banana bred": "banana bread",
    "apple pies": "apple pie",
    "Washington Post (newspaper)": "Washington Post",
    "Goldman": "Goldman Sachs",
    "JP Morgan": "JPMorgan Chase",
    "Chicago Tribune": None,
    "cherry tart": None,
    "Wall Street Journal": None,
    "LA Times": "Los Angeles Times",
}
RIGHT = list(GOLD)


def hand_made_decision() -> Decision:
    """The probability rises with the ranking score (about 0.5 at 4) and a little with the margin."""
    n = len(INPUTS)
    return Decision(inputs=list(INPUTS), mean=[4.0, 0.0] + [0.0] * (n - 2), scale=[2.0, 4.0] + [1.0] * (n - 2),
                    coef=[1.0, 0.3] + [0.0] * (n - 2), intercept=0.0,
                    cuts=[[0.8, 0.5], [0.9, 0.7], [0.95, 0.85]])  # fmt: skip


@pytest.fixture(scope="session")
def decision_scorer() -> HybridScorer:
    """One loaded default scorer whose combination carries :func:`hand_made_decision` (fit it before each use)."""
    combination = Combination.from_dict({**default_combination().to_dict(), "decision": hand_made_decision().to_dict()})
    return HybridScorer(combination=combination, progress=False)


@pytest.fixture
def decision_cli(decision_scorer, monkeypatch) -> HybridScorer:
    """The command line's ``--model hybrid`` (the default) is :func:`decision_scorer` in this test."""
    make_scorer = matcher_module.make_scorer
    monkeypatch.setattr(matcher_module, "make_scorer",
                        lambda model, **kw: decision_scorer if model == "hybrid" else make_scorer(model, **kw))  # fmt: skip
    return decision_scorer
