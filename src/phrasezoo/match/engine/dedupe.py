"""``dedupe``: one list of names in, clusters of the same entity out.

The matcher is fitted once on the list's distinct names (rows with the same normal form, ``"New-York Times"`` and
``"new york times!"``, are one name and always share a cluster), each distinct name is searched against the others
(its ``top_k`` neighbours, itself left out of the candidates so that it cannot crowd the others out of the learned
reranker's list), the pairs whose score passes the threshold are kept, and the kept pairs are clustered: connected
components (union-find; one chain of confident pairs joins two rows) or average-linkage agglomerative clustering
(two groups merge only when their mean score, a missing pair counting 0, passes the threshold; stricter on chains).

```python
from phrasezoo.match import dedupe

clusters = dedupe(["The New York Times", "NY Times", "New York Post", "new york times"])
clusters.attrs["report"]  # cluster sizes, the largest cluster's share, rows skipped
```

The same steps run on Spark in :func:`phrasezoo.match.spark.dedupe_spark`; both call
:func:`neighbour_pairs` and :func:`cluster_pairs` below.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from typing import Any

import numpy as np

from phrasezoo.core.progress import row_bar

from ..features.lexical import normal_form
from ..io.inputs import as_column
from ..model.calibration import Calibration, as_calibration, labelled_cut
from ..scoring.hybrid import HybridScorer
from ..scoring.scorers import DEFAULT_MODEL
from .estimate import estimate_of, score_tally
from .matcher import Matcher
from .results import check_target_precision, check_top_k

METHODS = ("components", "average")
DEDUPE_COLUMNS = ["name", "cluster", "cluster_size"]

__all__ = ["DEDUPE_COLUMNS", "METHODS", "cluster_pairs", "dedupe", "distinct_names", "neighbour_pairs"]


def exact_key(text: str) -> str:
    """The key under which rows are exact duplicates: the normal form (lower case, punctuation runs as one space),
    or the stripped text itself when nothing is left of it ("!!!" and "???" stay apart)."""
    return normal_form(text) or text.strip()


def distinct_names(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The first row of each exact-duplicate group (in input order) and, for every row, the index of its group."""
    first: dict[str, int] = {}
    names: list[str] = []
    group = np.empty(len(values), dtype=np.int64)
    for row, text in enumerate(values):
        key = exact_key(text)
        if key not in first:
            first[key] = len(names)
            names.append(text)
        group[row] = first[key]
    return names, group


def check_dedupe_arguments(threshold: Any, method: Any, top_k: Any, target_precision: Any) -> int:
    """Clear errors for bad dedupe options (before anything is encoded); returns ``top_k`` as an int."""
    if isinstance(threshold, str):
        if threshold != "auto":
            raise ValueError(f"threshold must be a number in (0, 1] or 'auto', got {threshold!r}.")
    elif (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.number))
        or not (0.0 < float(threshold) <= 1.0)
    ):
        raise ValueError(
            f"threshold must be a number in (0, 1] or 'auto' (a pair is kept when its score reaches it; without a "
            f"threshold every row would join its neighbours' cluster), got {threshold!r}."
        )
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    check_target_precision(target_precision)
    return check_top_k(top_k)


def resolve_threshold(matcher: Matcher, threshold: float | str, target_precision: float, lists: bool = True) -> float:
    """The numeric score threshold: the number given, or the matcher's calibrated one for ``target_precision``: the
    list decision's cut where the list's pairs are scored by it (:func:`scores_lists`), else the join's."""
    if threshold != "auto":
        return float(threshold)
    return float(matcher.threshold_for(target_precision, dedupe=lists and scores_lists(matcher)))


def scores_lists(matcher: Matcher) -> bool:
    """Whether a dedupe's pairs are scored by the list decision (:func:`neighbour_table`: the hybrid default, not
    blocked); a blocked search scores them as a join does."""
    return isinstance(matcher.scorer, HybridScorer) and matcher._blocks is None


def neighbour_pairs(matcher: Matcher, names: list[str], ids: np.ndarray, top_k: int, progress: bool = False,
                    claims: bool = True, lists: bool = True):  # fmt: skip
    """Each name's ``top_k`` best other names of the matcher's reference: ``(i, j, score)`` arrays, ``i`` = ``ids``
    (the names' rows in the reference), self pairs left out.

    With the hybrid default (and no blocking) the query's own row is removed from its candidates before the
    reranker scores them, so the scores are those of a search against the list without the query; its decision
    reads ``claims`` over the list (round 11, rule 40): a row whose best other row is claimed more strongly by
    another row is less sure."""
    ids = np.asarray(ids, dtype=np.int64)
    if not names:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    if scores_lists(matcher):
        best, found, ranks = neighbour_table(matcher, names, ids, top_k, progress, lists)
        return claimed_pairs(matcher, ids, best, found, ranks if claims else None, lists)
    scores, found = matcher.search(names, min(top_k + 1, len(matcher.reference)))
    ok = (found >= 0) & (found != ids[:, None]) & np.isfinite(scores)
    # at most top_k others per name (the self pair, when it was found, took one of the top_k + 1 places)
    ok &= np.cumsum(ok, axis=1) <= top_k
    own = np.broadcast_to(ids[:, None], found.shape)
    return own[ok], found[ok], scores[ok].astype(np.float64)


def neighbour_table(matcher: Matcher, names: list[str], ids: np.ndarray, top_k: int, progress: bool = False,
                    lists: bool = True):  # fmt: skip
    """The hybrid default's search of ``names`` (rows ``ids`` of its reference) against the other rows: scores and
    rows ``(names, k)``, best first (no claims read yet), and the ranking score of each name's best other row."""
    scorer = matcher.scorer
    k = min(top_k, max(1, len(matcher.reference) - 1))
    all_best, all_found, all_ranks = [], [], []
    with row_bar(len(names), f"dedupe {matcher.name}", progress) as bar:
        for start in range(0, len(names), 2048):
            part, own = names[start : start + 2048], ids[start : start + 2048]
            qv = scorer.encode(part) if scorer.vectors is not None else None
            sv = scorer.static_vectors(part)
            cands = scorer.candidate_ids(part, qv, extra=max(1, top_k + 1 - scorer.candidates), static_vectors=sv)
            cands = np.where(cands == own[:, None], -1, cands)
            features = scorer.features_without_self(part, cands, qv, own, static_vectors=sv)
            s, z = scorer.scores_and_ranks(features, cands >= 0, lists=lists)
            s = np.where(cands >= 0, s, -np.inf)
            best, order = scorer.best_candidates(s, z, cands >= 0, k)
            all_best.append(best)
            all_found.append(np.where(order >= 0, np.take_along_axis(cands, np.maximum(order, 0), 1), -1))
            all_ranks.append(np.take_along_axis(z, np.maximum(order[:, :1], 0), 1)[:, 0])
            bar.update(len(part))
    best, found = np.concatenate(all_best), np.concatenate(all_found)
    return best, np.where(np.isfinite(best), found, -1), np.concatenate(all_ranks)


def claimed_pairs(matcher: Matcher, ids: np.ndarray, best: np.ndarray, found: np.ndarray, ranks: np.ndarray | None,
                  lists: bool = True):  # fmt: skip
    """``(i, j, score)`` of a :func:`neighbour_table` (of every name of the list: claims compare them all), the
    decision's claims read over it unless ``ranks`` is None (``lists``: as the table was scored)."""
    if ranks is not None:
        best = matcher.scorer.with_claims(best, found, ranks, lists=lists)
    ok = np.isfinite(best) & (found >= 0)
    return np.broadcast_to(np.asarray(ids)[:, None], found.shape)[ok], found[ok], best[ok].astype(np.float64)


def honour_labels(edges: dict[tuple[int, int], float], names: list[str], calibration: Calibration,
                  cut: float) -> tuple[dict[tuple[int, int], float], dict[str, int]]:  # fmt: skip
    """The kept pairs (``edges`` at ``cut``) with the user's labels winning over the threshold: a pair of ``names``
    labelled the same thing is linked with score 1 (or the threshold, when higher: average linkage merges it first),
    one labelled not is never linked directly (connected components can still join its rows through others; average
    linkage counts it as 0). Also how many labelled pairs each way changed the kept pairs. A calibration's
    :meth:`~phrasezoo.match.model.calibration.Calibration.threshold_alone` changes none."""
    index = {name: k for k, name in enumerate(names)}
    kept = {pair: score for pair, score in edges.items() if score >= cut}
    changed = {"linked": 0, "kept_apart": 0}
    if not calibration.honour:
        return kept, changed
    for first, second, right in calibration.labelled_pairs():
        a, b = index.get(first), index.get(second)
        if a is None or b is None or a == b:
            continue
        pair = (min(a, b), max(a, b))
        if right:
            changed["linked"] += pair not in kept
            kept[pair] = max(1.0, cut)  # at least the threshold, which may be inf when no threshold reached the target
        elif pair in kept:
            del kept[pair]
            changed["kept_apart"] += 1
    return kept, changed


def kept_edges(i: np.ndarray, j: np.ndarray, score: np.ndarray, cut: float) -> dict[tuple[int, int], float]:
    """The pairs scoring at least ``cut``, undirected (``a < b``), each with its best score of both directions."""
    edges: dict[tuple[int, int], float] = {}
    for a, b, s in zip(i.tolist(), j.tolist(), score.tolist()):
        if s < cut or a == b:
            continue
        key = (a, b) if a < b else (b, a)
        if s > edges.get(key, -np.inf):
            edges[key] = s
    return edges


def _components(n: int, edges) -> np.ndarray:
    """Connected components of the kept pairs, each labelled by its smallest member."""
    from scipy.sparse import coo_matrix  # lazy: keeps scipy off 'import phrasezoo.match'
    from scipy.sparse.csgraph import connected_components  # lazy: as above

    pairs = np.array(list(edges), dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, component = connected_components(graph, directed=False)
    smallest = np.full(component.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(smallest, component, np.arange(n))
    return smallest[component]


def cluster_pairs(n: int, edges: dict[tuple[int, int], float], cut: float, method: str = "components") -> np.ndarray:
    """A cluster label (the smallest member) for each of ``n`` items from the kept ``edges``.

    ``"average"``: average-linkage agglomerative clustering inside each connected component (a missing pair is at
    distance 1, a kept one at 1 - score), cut where the mean distance passes 1 - ``cut``; every average-linkage
    cluster lies inside one component, so components bound the work."""
    labels = _components(n, edges.keys())
    if method == "components":
        return labels
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    from scipy.cluster.hierarchy import fcluster, linkage  # lazy: keeps scipy off 'import phrasezoo.match'

    members: dict[int, list[int]] = {}
    for x, label in enumerate(labels.tolist()):
        members.setdefault(label, []).append(x)
    out = labels.copy()
    for group in members.values():
        if len(group) < 3:
            continue  # one or two items joined by a kept edge: the same answer as components
        where = {x: p for p, x in enumerate(group)}
        size = len(group)
        distance = np.ones((size, size))
        np.fill_diagonal(distance, 0.0)
        for (a, b), s in edges.items():
            if a in where and b in where:
                distance[where[a], where[b]] = distance[where[b], where[a]] = 1.0 - s
        condensed = distance[np.triu_indices(size, 1)]
        flat = fcluster(linkage(condensed, method="average"), t=1.0 - cut + 1e-9, criterion="distance")
        first: dict[int, int] = {}
        for x, f in zip(group, flat.tolist()):
            first.setdefault(f, x)  # group is in increasing order: the first seen is the smallest member
            out[x] = first[f]
    return out


def size_report(cluster: np.ndarray, n_input: int, skipped: list[Any], **extra: Any) -> dict[str, Any]:
    """Clusters by size (so that one giant cluster cannot hide), the largest cluster's size and share of rows."""
    sizes = Counter(Counter(cluster.tolist()).values())
    largest = max(sizes) if sizes else 0
    return {
        "rows": n_input,
        "rows_clustered": int(len(cluster)),
        "rows_skipped": len(skipped),
        "skipped": list(skipped),
        "clusters": int(sum(sizes.values())),
        "clusters_by_size": {int(k): int(v) for k, v in sorted(sizes.items())},
        "largest_cluster": int(largest),
        "largest_share": float(largest / len(cluster)) if len(cluster) else 0.0,
        "rows_in_clusters_of_2_or_more": int(sum(k * v for k, v in sizes.items() if k > 1)),
        **extra,
    }


def dedupe(
    names: Any,
    model: Any = DEFAULT_MODEL,
    threshold: float | str = "auto",
    *,
    column: str | None = None,
    method: str = "components",
    top_k: int = 10,
    target_precision: float = 0.9,
    matcher: Matcher | None = None,
    on_missing: str = "raise",
    index: str = "auto",
    batch_size: int | None = None,
    progress: bool = True,
    calibration: Calibration | str | os.PathLike | None = None,
):
    """Cluster the rows of one list that name the same entity.

    ``names``: a list of strings, a pandas Series or a DataFrame (``column`` names the text column), read like
    :func:`~phrasezoo.match.join`'s tables (same errors). ``threshold``: a pair of rows is linked when its score
    reaches it; ``"auto"`` (default) is the default matcher's calibrated threshold for ``target_precision``: the cut
    of its dedupe decision, set on dedupe lists (docs/dedupe.md). ``method``: ``"components"`` (connected components
    of the linked pairs) or ``"average"`` (average-linkage agglomerative clustering of them: stricter on chains).
    ``top_k``: neighbours searched per distinct name. ``matcher``: a matcher already fitted on the distinct names
    (reuse across thresholds).

    Returns a DataFrame with the input's index (duplicate labels are kept as they are) and columns ``name``,
    ``cluster`` (the 0-based position of the cluster's first row in the input: stable across runs) and
    ``cluster_size``; an empty list (or one whose values are all skipped) gives an empty result. Rows with the same
    normal form always share a cluster. ``attrs["report"]``: clusters by size, the largest cluster's size and share
    of rows, the threshold and method used, and the labels of rows left out (missing values with
    ``on_missing="skip"``); every input row is in the result or in ``report["skipped"]``; ``report["scored_by"]``:
    which of the default matcher's decisions scored the pairs (``"dedupe decision"``, or ``"join decision"`` with
    labels or a blocked matcher).

    ``calibration`` (labels of the list's pairs, :func:`~phrasezoo.match.calibrate_dedupe` or ``match label
    --input``, or a join's): the join's decision scores the pairs (its scores took the labels' shift), recalibrated;
    with ``"auto"`` the threshold is the lowest whose kept pairs' expected precision reaches the target (a labelled
    pair, either order, counting as labelled); the labels win over it (:func:`honour_labels`). With ``"auto"`` and
    probabilities, ``report["estimate"]`` says what the pairs' scores expect of the threshold.
    """
    top_k = check_dedupe_arguments(threshold, method, top_k, target_precision)
    calibration = as_calibration(calibration)
    col = as_column(names, column, what="names", on_missing=on_missing, allow_empty=True)
    n_input = len(col) + len(col.skipped)
    distinct, group = distinct_names(col.values)
    lists = calibration is None  # labels recalibrate the join decision's scores: the ones their shift was fitted on
    if matcher is None:
        if distinct:
            matcher = Matcher(model, index=index, batch_size=batch_size, progress=progress)
            resolve_threshold(matcher, threshold, target_precision, lists)  # a bad target fails before encoding
            matcher.fit(distinct)
    elif matcher.reference != distinct:
        raise ValueError("The matcher was fitted on other names; fit it on this list's distinct names "
                         "(phrasezoo.match.engine.dedupe.distinct_names) or pass matcher=None.")  # fmt: skip
    decision = getattr(matcher.scorer, "decision", None) if matcher is not None else None
    if calibration is not None and matcher is not None:
        calibration.check_matcher(matcher.name, decision.to_dict() if decision is not None else None, dedupe=True)
    cut = resolve_threshold(matcher, threshold, target_precision, lists) if matcher is not None else None
    auto = {}
    if len(distinct) > 1:
        i, j, score = neighbour_pairs(matcher, distinct, np.arange(len(distinct)), top_k, progress, lists=lists)
        pairs = kept_edges(i, j, calibration.apply(score) if calibration is not None else score, -np.inf)
        cut, edges, auto = linked_pairs(pairs, distinct, threshold, cut, target_precision, calibration,
                                        decision is not None)  # fmt: skip
        labels = cluster_pairs(len(distinct), edges, cut, method)
    else:
        edges, labels = {}, np.zeros(len(distinct), dtype=np.int64)
    frame = rows_frame(col, group, labels)
    frame.attrs["report"] = size_report(frame["cluster"].to_numpy(), n_input, col.skipped, threshold=cut,
                                        method=method, top_k=top_k, pairs_kept=len(edges),
                                        distinct_names=len(distinct), **auto)  # fmt: skip
    if threshold == "auto":
        frame.attrs["report"]["target_precision"] = float(target_precision)
    if decision is not None:  # which of the default's decisions gave the pairs their probabilities
        frame.attrs["report"]["scored_by"] = "dedupe decision" if lists and scores_lists(matcher) else "join decision"
    if col.skipped:
        warnings.warn(f"Skipped {len(col.skipped)} row(s) with missing values (on_missing='skip'); their labels are "
                      "in result.attrs['report']['skipped'].", stacklevel=2)  # fmt: skip
    return frame


def linked_pairs(pairs: dict[tuple[int, int], float], names: list[str], threshold: float | str, cut: float,
                 target_precision: float, calibration: Calibration | None,
                 estimate: bool) -> tuple[float, dict[tuple[int, int], float], dict[str, Any]]:  # fmt: skip
    """``(threshold, linked pairs, report entries)`` from every candidate pair's score (recalibrated already): with
    ``"auto"`` the threshold of :func:`auto_threshold`, then the pairs at it, the labels honoured
    (:func:`honour_labels`). One machine and Spark both call it."""
    auto: dict[str, Any] = {}
    if threshold == "auto":
        cut, auto = auto_threshold(pairs, names, cut, target_precision, calibration, estimate)
    if calibration is None:
        return cut, {pair: s for pair, s in pairs.items() if s >= cut}, auto
    edges, auto["labels_honoured"] = honour_labels(pairs, names, calibration, cut)
    return cut, edges, auto


def auto_threshold(pairs: dict[tuple[int, int], float], names: list[str], cut: float, target_precision: float,
                   calibration: Calibration | None, estimate: bool) -> tuple[float, dict[str, Any]]:  # fmt: skip
    """``threshold="auto"`` over the candidate ``pairs`` (each undirected pair's best score): the matcher's cut, or
    with a calibration the lowest score whose kept pairs' expected precision reaches the target (labelled pairs as
    labelled); and, for scores that are probabilities (``estimate``), the report's ``estimate`` and its tally."""
    scores = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
    if calibration is not None:
        first, second = [names[a] for a, _ in pairs], [names[b] for _, b in pairs]
        cut = labelled_cut(scores, *calibration.known_either(first, second), target_precision)
    if not estimate:
        return cut, {}
    tally = score_tally(scores, cut)
    report = {"estimate": estimate_of(tally, target_precision, calibration is not None), "estimate_tally": tally}
    if calibration is not None:
        report["calibration"] = calibration.summary()
    return cut, report


def rows_frame(col, group: np.ndarray, labels: np.ndarray):
    """The result rows: each input row's name, its cluster (the input position of the cluster's first row) and size."""
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    positions = np.asarray(col.positions, dtype=np.int64)
    row_label = labels[group] if len(group) else np.zeros(0, np.int64)  # cluster label of each row's distinct name
    first: dict[int, int] = {}
    for label, position in zip(row_label.tolist(), positions.tolist()):
        first.setdefault(label, position)
    cluster = np.array([first[label] for label in row_label.tolist()], dtype=np.int64)
    sizes = Counter(cluster.tolist())
    index = pd.Index(col.labels) if col.labels else pd.Index([], dtype=object)
    frame = pd.DataFrame({"name": pd.Series(col.originals, index=index, dtype=object),
                          "cluster": pd.Series(cluster, index=index, dtype="int64"),
                          "cluster_size": pd.Series([sizes[c] for c in cluster.tolist()], index=index,
                                                    dtype="int64")})  # fmt: skip
    return frame
