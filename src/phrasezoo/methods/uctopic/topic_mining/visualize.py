"""Plots of a fitted :class:`~.miner.TopicMiner`: a 2-D map of the frequent phrases and the size of each topic."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def visualize_topics(miner, path: str | Path | None = None, top_n: int = 3, max_points: int = 3000, seed: int = 0):
    """A matplotlib figure with two panels, saved to ``path`` when given (PNG, SVG, PDF by suffix):

    * left: the phrases seen at least ``miner.min_frequency`` times, as points of a 2-D PCA of their averaged
      mention vectors, coloured by topic, with each topic's ``top_n`` phrases written at their points;
    * right: mentions per topic, each bar labelled with the topic's top phrases.

    At most ``max_points`` phrases are drawn (a seeded sample, top phrases always kept).
    """
    import matplotlib  # lazy: keeps matplotlib off 'phrasezoo --help' (which imports topic_mining)

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # lazy: matplotlib (as above), once Agg is set

    miner._check_fitted()
    topics = miner.get_topics(top_n=top_n)
    info = miner.get_topic_info()
    keys = [k for k in miner.phrase_vectors_ if k in miner.phrases_]
    top_texts = {text for phrases in topics.values() for text, _ in phrases}
    if len(keys) > max_points:
        rng = np.random.default_rng(seed)
        must = [k for k in keys if miner.phrases_[k].text in top_texts]
        rest = [k for k in keys if miner.phrases_[k].text not in top_texts]
        keys = must + list(rng.choice(rest, size=max(0, max_points - len(must)), replace=False))
    figure, (scatter_axis, bar_axis) = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [3, 2]})
    colors = plt.get_cmap("tab20")(np.arange(max(1, miner.n_topics_)) % 20)
    if len(keys) >= 2:
        vectors = np.stack([miner.phrase_vectors_[k] for k in keys])
        points = _pca_2d(vectors)
        labels = np.asarray([miner.phrases_[k].topic for k in keys])
        scatter_axis.scatter(points[:, 0], points[:, 1], c=colors[labels], s=8, alpha=0.6, linewidths=0)
        for (x, y), key in zip(points, keys):
            phrase = miner.phrases_[key]
            if phrase.text in top_texts:
                scatter_axis.annotate(phrase.text, (x, y), fontsize=7, color=colors[phrase.topic] * 0.7)
    else:
        scatter_axis.text(0.5, 0.5, "too few frequent phrases to draw", ha="center", transform=scatter_axis.transAxes)
    scatter_axis.set_title(f"Phrases seen at least {miner.min_frequency} times (PCA of their vectors)")
    scatter_axis.set_xticks([])
    scatter_axis.set_yticks([])
    counts = [row["mentions"] for row in info]
    positions = np.arange(len(info))
    bar_axis.barh(positions, counts, color=colors[[row["topic"] for row in info]])
    bar_axis.set_yticks(
        positions, [f"{row['topic']}: {', '.join(row['top_phrases'])[:45]}" for row in info], fontsize=8
    )
    bar_axis.invert_yaxis()
    bar_axis.set_xlabel("mentions")
    bar_axis.set_title(f"{miner.n_topics_} topics")
    figure.tight_layout()
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=130)
    return figure


def _pca_2d(vectors: np.ndarray) -> np.ndarray:
    """The first two principal components of the rows (SVD of the centred matrix)."""
    centred = vectors - vectors.mean(0, keepdims=True)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    return centred @ components[:2].T
