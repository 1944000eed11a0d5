"""Williams' t-test for two dependent correlations that share one variable (Williams 1959; Steiger 1980).

The SLICE paper (after Graham & Baldwin, 2014) compares two systems' Pearson correlations with the same gold
scores: r12 = corr(gold, system A), r13 = corr(gold, system B), r23 = corr(A, B), n items. The statistic

    t = (r12 - r13) * sqrt((n - 1)(1 + r23) / (2 K (n - 1) / (n - 3) + ((r12 + r13)^2 / 4) (1 - r23)^3)),
    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,

follows Student's t with n - 3 degrees of freedom. The paper's test is one-sided ("is A better than B"); the
two-sided p-value is reported as well. scipy provides the t distribution; it has no Williams test of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class WilliamsResult:
    """Outcome of :func:`williams_test`: A = the first system (r12), B = the second (r13)."""

    r12: float
    r13: float
    r23: float
    n: int
    t: float
    p_one_sided: float  # H1: r12 > r13 (A correlates better with gold than B)
    p_two_sided: float

    @property
    def df(self) -> int:
        return self.n - 3


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams' t for ``r12`` vs ``r13`` (both with variable 1), given ``r23`` and ``n`` items (see module docstring).

    Raises ``ValueError`` for correlations outside [-1, 1] or ``n < 4``.
    """
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1.0 <= r <= 1.0 or math.isnan(r):
            raise ValueError(f"{name} must be a correlation in [-1, 1], got {r}.")
    if n < 4:
        raise ValueError(f"Williams' test needs at least 4 items (df = n - 3), got n = {n}.")
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    # identical systems (r23 = 1) give a zero denominator: no evidence either way
    t = 0.0 if denominator <= 0 else (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)
    df = n - 3
    return WilliamsResult(
        r12=r12,
        r13=r13,
        r23=r23,
        n=n,
        t=t,
        p_one_sided=float(stats.t.sf(t, df)),
        p_two_sided=float(2 * stats.t.sf(abs(t), df)),
    )


def williams_from_scores(gold, scores_a, scores_b) -> WilliamsResult:
    """Williams' test of system A vs system B from their per-item scores and the gold scores (Pearson r)."""
    gold, a, b = (np.asarray(x, dtype=np.float64) for x in (gold, scores_a, scores_b))
    if not gold.shape == a.shape == b.shape or gold.ndim != 1:
        raise ValueError(f"gold and both systems need the same items, got shapes {gold.shape}, {a.shape}, {b.shape}.")
    keep = np.isfinite(gold) & np.isfinite(a) & np.isfinite(b)
    gold, a, b = gold[keep], a[keep], b[keep]
    r12 = float(stats.pearsonr(gold, a).statistic)
    r13 = float(stats.pearsonr(gold, b).statistic)
    r23 = float(stats.pearsonr(a, b).statistic)
    return williams_test(r12, r13, r23, int(len(gold)))
