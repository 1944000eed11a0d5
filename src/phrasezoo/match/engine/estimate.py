"""What a join expects of its own decision, before anyone labels a pair: the estimated precision and recall curve.

The default matcher's score of a query's answer is the probability that the answer names the same thing (absent
partners included; :mod:`phrasezoo.match.model.decision`). Read over the whole join, the probabilities say what a
threshold keeps: the mean probability of the kept answers estimates their precision, their sum over the sum of every
answer's estimates the share of the right answers kept. ``threshold="auto"`` takes the decision's cut for the target
(measured on training joins); this module reports what the join's own scores expect of that cut, so a user sees it
before trusting it (``result.attrs["estimate"]``, a line on stderr from the CLI, ``--plot``). Where the two disagree
by more than :data:`WARN_GAP`, the join does not look like the training data: a few labels settle it
(``phrasezoo match label``).
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


def estimate_curve(answer_scores: np.ndarray, points: int = 101) -> dict[str, list[float]]:
    """Per threshold of a grid over [0, 1]: the share of queries kept, the estimated precision of the kept answers
    and the estimated share of right answers kept, from each query's best score (a probability; -inf or NaN: no
    answer)."""
    p = np.asarray(answer_scores, dtype=np.float64)
    p = np.where(np.isfinite(p), p, 0.0)
    grid = np.linspace(0.0, 1.0, points)
    total = max(float(p.sum()), 1e-12)
    kept, precision, recall = [], [], []
    for cut in grid:
        keep = p >= cut
        kept.append(float(keep.mean()) if len(p) else 0.0)
        precision.append(float(p[keep].mean()) if keep.any() else 1.0)
        recall.append(float(p[keep].sum() / total))
    return {"threshold": grid.round(4).tolist(), "kept": kept, "precision": precision, "recall": recall}


def estimate_at(answer_scores: np.ndarray, cut: float, target_precision: float | None = None) -> dict[str, Any]:
    """The join's own estimate at ``cut``: rows kept, estimated precision and recall, and whether it falls short of
    ``target_precision`` by more than :data:`WARN_GAP` (with what to do)."""
    p = np.asarray(answer_scores, dtype=np.float64)
    p = np.where(np.isfinite(p), p, 0.0)
    keep = p >= cut
    out: dict[str, Any] = {
        "threshold": float(cut),
        "queries": int(len(p)),
        "kept": int(keep.sum()),
        "estimated_precision": round(float(p[keep].mean()), 4) if keep.any() else None,
        "estimated_recall": round(float(p[keep].sum() / max(p.sum(), 1e-12)), 4) if len(p) else None,
    }
    if target_precision is not None:
        out["target_precision"] = float(target_precision)
        short = out["estimated_precision"] is not None and out["estimated_precision"] < target_precision - WARN_GAP
        out["warning"] = (
            f"this join's own scores expect a precision of {out['estimated_precision']:.2f} at the threshold "
            f"learned for {target_precision:.2f}: its names may be harder than the training data; {LABEL_HINT}."
            if short
            else None
        )
    return out


def describe(estimate: dict[str, Any]) -> str:
    """One line for stderr."""
    if estimate["estimated_precision"] is None:
        return f"threshold {estimate['threshold']:.3f}: no query kept (of {estimate['queries']})."
    line = (
        f"threshold {estimate['threshold']:.3f} keeps {estimate['kept']} of {estimate['queries']} queries; "
        f"their own scores expect precision {estimate['estimated_precision']:.2f}, recall "
        f"{estimate['estimated_recall']:.2f}"
    )
    return line + (f". Warning: {estimate['warning']}" if estimate.get("warning") else ".")


def plot_estimate(answer_scores: np.ndarray, cut: float, path: str | Path, title: str = "") -> Path:
    """A PNG of the estimated precision, recall and share kept against the threshold, the chosen cut marked."""
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
    fig.savefig(path)
    plt.close(fig)
    return path
