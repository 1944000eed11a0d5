"""The join's own estimate: its tallies add up over a streamed join's chunks to the whole join's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.match.engine.estimate import (
    describe,
    estimate_at,
    estimate_curve,
    estimate_of,
    merge_tallies,
    plot_estimate,
    score_tally,
)


def test_chunks_add_up_to_the_whole_join():
    rng = np.random.default_rng(0)
    p = np.r_[rng.random(300), [-np.inf, np.nan]].astype(np.float32)
    whole = score_tally(p, 0.7)
    merged = None
    for part in np.array_split(p, 4):
        merged = merge_tallies(merged, score_tally(part, 0.7))
    assert estimate_of(merged, 0.9) == pytest.approx(estimate_of(whole, 0.9))
    curve, direct = estimate_curve(merged), estimate_curve(p)
    for key in ("kept", "precision", "recall"):
        np.testing.assert_allclose(curve[key], direct[key], rtol=1e-9)
    finite = np.where(np.isfinite(p), p, 0.0).astype(np.float64)
    at = estimate_at(p, 0.7, 0.9)
    assert at["kept"] == int((finite >= 0.7).sum())
    assert at["estimated_precision"] == round(float(finite[finite >= 0.7].mean()), 4)
    assert curve["kept"][50] == pytest.approx(float((finite >= 0.5).mean()))
    with pytest.raises(ValueError, match="one threshold"):
        merge_tallies(whole, score_tally(p, 0.5))


def test_the_warning_says_what_to_do_and_the_plot_is_written(tmp_path):
    p = np.full(50, 0.6, dtype=np.float32)
    assert "label ~50 pairs" in estimate_at(p, 0.5, 0.9)["warning"]
    assert "label more pairs" in estimate_of(score_tally(p, 0.5), 0.9, calibrated=True)["warning"]
    assert describe(estimate_at(p, 0.7, 0.9), "pairs") == "threshold 0.700: none of 50 pairs kept."
    path = plot_estimate(score_tally(p, 0.5), 0.5, tmp_path / "plots" / "estimate.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
