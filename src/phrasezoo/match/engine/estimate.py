"""What a join expects of its own decision, before anyone labels a pair: the estimated precision and recall curve.

The default matcher's score of a query's answer is the probability that the answer names the same thing (absent
partners included; :mod:`phrasezoo.match.model.decision`). Read over the whole join, the probabilities say what a
threshold keeps: the mean probability of the kept answers estimates their precision, their sum over the sum of every
answer's estimates the share of the right answers kept. ``threshold="auto"`` takes the decision's cut for the target
(measured on training joins); this module reports what the join's own scores expect of that cut, so a user sees it
before trusting it (``result.attrs["estimate"]``, a line on stderr from the CLI, ``--plot``). Where the two disagree
by more than :data:`WARN_GAP`, the join does not look like the training data: a few labels settle it
(``phrasezoo match label``). Every number is read from a :func:`score_tally` (``result.attrs["estimate_tally"]``),
sums that add up over the chunks of a streamed join, so the CLI reports and plots the whole file, not its last chunk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: the gap between the target and the join's own precision estimate that earns a warning
WARN_GAP = 0.05
LABEL_HINT = (
    "label ~50 pairs with 'phrasezoo match label' (or phrasezoo.match.calibrate) and pass the file as "
    "--calibration / calibration="
)


#: the thresholds the estimated curve is drawn at
GRID_POINTS = 101


def score_tally(answer_scores: np.ndarray, cut: float, points: int = GRID_POINTS) -> dict[str, Any]:
    """What every estimate below is read from, as sums that add up over the chunks of a streamed join
    (:func:`merge_tallies`): the queries, the sum of their best scores (a probability; -inf or NaN: no answer, 0),
    the count and sum of those kept at ``cut`` and at each threshold of a grid over [0, 1]."""
    p = np.asarray(answer_scores, dtype=np.float64)
    p = np.where(np.isfinite(p), p, 0.0)
    keep = p >= cut
    grid = np.linspace(0.0, 1.0, points)
    ascending = np.sort(p)
    below = np.searchsorted(ascending, grid, side="left")  # scores under each grid threshold
    suffix = np.r_[np.cumsum(ascending[::-1])[::-1], 0.0]  # suffix[i]: the sum of ascending[i:]
    return {"threshold": float(cut), "queries": int(len(p)), "sum": float(p.sum()), "kept": int(keep.sum()),
            "kept_sum": float(p[keep].sum()), "grid": grid.round(4).tolist(),
            "grid_kept": (len(p) - below).tolist(), "grid_sum": suffix[below].tolist()}  # fmt: skip


def merge_tallies(first: dict[str, Any] | None, second: dict[str, Any]) -> dict[str, Any]:
    """Two chunks' tallies as one (they must share the threshold: a streamed join keeps one for all its chunks)."""
    if first is None:
        return second
    if first["threshold"] != second["threshold"] or first["grid"] != second["grid"]:
        raise ValueError("Tallies of different thresholds do not add up: one streamed join keeps one threshold.")
    merged = {k: first[k] + second[k] for k in ("queries", "sum", "kept", "kept_sum")}
    merged["grid_kept"] = [a + b for a, b in zip(first["grid_kept"], second["grid_kept"])]
    merged["grid_sum"] = [a + b for a, b in zip(first["grid_sum"], second["grid_sum"])]
    return {**first, **merged}


def estimate_curve(answer_scores: np.ndarray | dict[str, Any], points: int = GRID_POINTS) -> dict[str, list[float]]:
    """Per threshold of a grid over [0, 1]: the share of queries kept, the estimated precision of the kept answers
    and the estimated share of right answers kept, from each query's best score (a probability; -inf or NaN: no
    answer) or from their :func:`score_tally`."""
    tally = answer_scores if isinstance(answer_scores, dict) else score_tally(answer_scores, 1.0, points)
    n, total = tally["queries"], max(tally["sum"], 1e-12)
    kept, precision, recall = [], [], []
    for count, mass in zip(tally["grid_kept"], tally["grid_sum"]):
        kept.append(count / n if n else 0.0)
        precision.append(mass / count if count else 1.0)
        recall.append(mass / total)
    return {"threshold": list(tally["grid"]), "kept": kept, "precision": precision, "recall": recall}


def estimate_at(answer_scores: np.ndarray, cut: float, target_precision: float | None = None) -> dict[str, Any]:
    """The join's own estimate at ``cut``: rows kept, estimated precision and recall, and whether it falls short of
    ``target_precision`` by more than :data:`WARN_GAP` (with what to do)."""
    return estimate_of(score_tally(answer_scores, cut), target_precision)


def estimate_of(
    tally: dict[str, Any], target_precision: float | None = None, calibrated: bool = False
) -> dict[str, Any]:
    """:func:`estimate_at` from a :func:`score_tally` (of one join, or merged over a streamed join's chunks);
    ``calibrated``: the scores and the threshold come from labels (the warning then asks for more of them)."""
    n, kept = tally["queries"], tally["kept"]
    out: dict[str, Any] = {
        "threshold": tally["threshold"],
        "queries": n,
        "kept": kept,
        "estimated_precision": round(tally["kept_sum"] / kept, 4) if kept else None,
        "estimated_recall": round(tally["kept_sum"] / max(tally["sum"], 1e-12), 4) if n else None,
    }
    if target_precision is not None:
        out["target_precision"] = float(target_precision)
        short = out["estimated_precision"] is not None and out["estimated_precision"] < target_precision - WARN_GAP
        source, advice = (
            ("read from your labels", "label more pairs (the same 'phrasezoo match label' command resumes)")
            if calibrated
            else ("learned", f"its names may be harder than the training data; {LABEL_HINT}")
        )
        out["warning"] = (
            f"this join's own scores expect a precision of {out['estimated_precision']:.2f} at the threshold "
            f"{source} for {target_precision:.2f}: {advice}."
            if short
            else None
        )
    return out


def describe(estimate: dict[str, Any], what: str = "queries") -> str:
    """One line for stderr (``what``: what was scored, the queries of a join or the pairs of a dedupe)."""
    if estimate["estimated_precision"] is None:
        return f"threshold {estimate['threshold']:.3f}: none of {estimate['queries']} {what} kept."
    line = (
        f"threshold {estimate['threshold']:.3f} keeps {estimate['kept']} of {estimate['queries']} {what}; "
        f"their own scores expect precision {estimate['estimated_precision']:.2f}, recall "
        f"{estimate['estimated_recall']:.2f}"
    )
    return line + (f". Warning: {estimate['warning']}" if estimate.get("warning") else ".")


def plot_estimate(answer_scores: np.ndarray | dict[str, Any], cut: float, path: str | Path, title: str = "") -> Path:
    """A PNG of the estimated precision, recall and share kept against the threshold, the chosen cut marked (from
    the answers' best scores, or their :func:`score_tally`)."""
    import matplotlib  # lazy: matplotlib is only needed for the plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: likewise

    curve = estimate_curve(answer_scores)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    ax.plot(curve["threshold"], curve["precision"], label="estimated precision of kept matches")
    ax.plot(curve["threshold"], curve["recall"], label="estimated share of right answers kept")
    ax.plot(curve["threshold"], curve["kept"], label="share of queries kept", linestyle="--")
    ax.axvline(cut, color="black", linewidth=1)
    ax.annotate(f"threshold {cut:.3f}", (cut, 0.03), xytext=(4, 0), textcoords="offset points", fontsize=8)
    ax.set_xlabel("threshold (match probability)")
    ax.set_ylim(0, 1.02)
    ax.set_title(title or "What this join expects of its threshold (no labels)", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
