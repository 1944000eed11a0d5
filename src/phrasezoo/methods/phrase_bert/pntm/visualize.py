"""``visualize_topics``: a grid of bar charts, one per topic, of its top terms and their scores (saved as PNG)."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from pathlib import Path


def visualize_topics(
    topics: Sequence[Sequence[tuple[str, float]]] | object,
    path: str | os.PathLike,
    top_n: int = 8,
    n_columns: int = 4,
    title: str | None = None,
    topic_ids: Sequence[int] | None = None,
    score_label: str = "cosine",
) -> Path:
    """Draw the ``top_n`` terms of each topic as horizontal bars and save the figure to ``path``.

    ``topics`` is what ``PNTM.get_topics`` / ``LDABaseline.get_topics`` return, or a fitted model with
    ``get_topics``. Phrases are drawn in a second colour so the word/phrase mixture is visible at a glance.
    ``topic_ids`` picks which topics to draw (default: all). Returns the path of the PNG.
    """
    import matplotlib  # lazy: keeps matplotlib off 'phrasezoo --help' (which imports pntm)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib (as above), once Agg is set

    if hasattr(topics, "get_topics"):
        topics = topics.get_topics(top_n=top_n)
    topics = [list(t)[:top_n] for t in topics]
    ids = list(topic_ids) if topic_ids is not None else list(range(len(topics)))
    if not ids:
        raise ValueError("No topics to draw.")
    n_columns = max(1, min(n_columns, len(ids)))
    n_rows = (len(ids) + n_columns - 1) // n_columns
    figure, axes = plt.subplots(
        n_rows, n_columns, figsize=(4.2 * n_columns, 0.32 * top_n * n_rows + 1.0 * n_rows), squeeze=False
    )
    for ax in axes.flat[len(ids) :]:
        ax.axis("off")
    for ax, topic in zip(axes.flat, ids):
        terms = topics[topic]
        labels = [textwrap.shorten(t, 38, placeholder="…") for t, _ in terms][::-1]
        scores = [s for _, s in terms][::-1]
        colours = ["#d9822b" if len(t.split()) > 1 else "#2b6cb0" for t, _ in terms][::-1]
        ax.barh(range(len(terms)), scores, color=colours)
        ax.set_yticks(range(len(terms)), labels, fontsize=8)
        ax.set_title(f"topic {topic}", fontsize=10)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel(score_label, fontsize=7)
        low = min(scores) if scores else 0.0
        if low > 0:
            ax.set_xlim(left=low * 0.9)
    if title:
        figure.suptitle(title, fontsize=12)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
