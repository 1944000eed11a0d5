"""The phrase dev suite: five small, fast tasks for choosing hyper-parameters, checkpoints and mixing weights.

Every choice made while building a model is made here, never on the reported test benchmarks (Turney, BiRD, PPDB,
PPDB-filtered, YAGO, UMLS, CoNLL-2003, BC5CDR, AutoFJ, STS-B-Context). The data (:mod:`phrasezoo.data.benchmarks.dev_sets`)
comes only from offline resources no benchmark uses, and every item passes the strict benchmark filter:

==================  ==========================================================================  ================
task                what                                                                        metric
==================  ==========================================================================  ================
``dev_paraphrase``  dict-de-en pivot pairs of the dev split (training sees none of their         top-1 accuracy
                    phrases): each phrase retrieves its partner among all dev partners (both
                    directions); a proxy for PPDB/BiRD
``dev_description`` wiki-leads dev articles: title -> its one-line description among all dev     top-1 accuracy
                    descriptions (entity-linking proxy, like YAGO/UMLS)
``dev_topics``      the dev titles clustered by KMeans (k = number of topics) against their      NMI
                    topic (entity-clustering proxy, like CoNLL/BC5CDR)
``dev_fuzzy``       corrupted dev titles (qualifier dropped, initials, typo, case/punctuation,   top-1 accuracy
                    comma swap) -> the clean title among all dev titles (AutoFJ proxy)
``dev_wordsim``     WordSim-353 + SimLex-999 pairs that survive the filter: cosine vs human      Spearman
``dev_compound``    WordNet two-word compound -> its one-word synonym among 5 candidates        accuracy
                    (Turney's format and scoring; its synsets are left out of training
                    synonym tables); a proxy for Turney
``dev_alias``       real Wikipedia alias pairs (links ``[[title|anchor]]`` of gensim's          top-1 accuracy
                    embedded dump, anchor != title): anchor -> its target title among all dev
                    titles (fuzzy-join / entity-alias proxy, like AutoFJ and YAGO/UMLS)
==================  ==========================================================================  ================

Four more tasks read the **dev splits of the clustering benchmarks** (``conll2003/dev.jsonl``, ``bc5cdr/dev.jsonl``
beside the test files): the official splits are disjoint from the reported test items, so a choice that must track
CoNLL/BC5CDR clustering (UCTopic's checkpoints, mixing and CCL schedule) is made there instead of on a proxy. They
are not in the default suite (``None``/``"all"``); name them, or use the group ``"benchmark-dev"``:

=========================  ==================================================================  ================
task                       what                                                                metric
=========================  ==================================================================  ================
``dev_conll_context``      CoNLL-2003 *dev* PER/LOC/ORG mentions in their sentences, KMeans     NMI
``dev_bc5cdr_context``     BC5CDR *dev* Chemical/Disease mentions in their sentences, KMeans    NMI
``dev_conll``              CoNLL-2003 *dev* mentions without context (PEARL protocol), KMeans   NMI
``dev_bc5cdr``             BC5CDR *dev* mentions without context (PEARL protocol), KMeans       NMI
=========================  ==================================================================  ================

Their KMeans protocol is the test tasks' (k = number of types, random_state 0, n_init 10).

The default suite (``None``/``"all"``) is the first five; ``dev_compound``, ``dev_alias`` and the benchmark-dev
tasks are named when a recipe wants them (``DEV_GROUPS`` has ``"extended"``: all eleven).

``dev_avg`` is the mean of the scores of the tasks that ran. Python API (also for a model in memory)::

    from phrasezoo.evaluation.dev.suite import evaluate_dev
    doc = evaluate_dev(model_or_spec, tasks=None, progress=False)
    doc["dev_avg"], doc["tasks"]["dev_fuzzy"]["score"]

CLI: ``phrasezoo dev-eval --model baseline:minilm-l6 --output results/baselines/dev-baseline-minilm-l6.json``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from phrasezoo.core.errors import InputError, MissingResourceError
from phrasezoo.core.files import atomic_write_text, read_user_json
from phrasezoo.core.progress import progress_enabled
from phrasezoo.data.benchmarks.dev_sets import VERSION, load_dev_set
from phrasezoo.encoders import MENTIONS, VECTORS, Encoder, ModelEncoder, load_encoder

from ..datasets.benchmark_dev import BENCHMARK_DEV_SETS, load_benchmark_dev
from ..metrics import compute
from ..tasks.clustering import kmeans_clusters
from ..tasks.clustering import kmeans_nmi as benchmark_kmeans_nmi
from ..tasks.context_clustering import cluster_scores
from ..tasks.similarity import MultipleChoiceData, multiple_choice_accuracy

logger = logging.getLogger(__name__)

SUITE = "phrasezoo-dev"
KMEANS_SEED = 0
KMEANS_N_INIT = 5


# ------------------------------------------------------------------------------------------------- metrics
def gold_set(gold: int | set[int] | Sequence[int]) -> set[int]:
    """The gold candidate indices of one query (a retrieval set gives one index or several)."""
    return {int(gold)} if isinstance(gold, (int, np.integer)) else set(gold)


def top1_hits(best: Sequence[int], gold: Sequence[int | set[int] | Sequence[int]]) -> np.ndarray:
    """Per query, whether its best candidate ``best[i]`` is gold: the items behind :func:`top1_accuracy`."""
    return np.array([int(b) in gold_set(g) for b, g in zip(best, gold, strict=True)], dtype=bool)


def top1_accuracy(scores: np.ndarray, gold: Sequence[int | set[int] | Sequence[int]]) -> float:
    """Fraction of rows of ``scores`` (queries x candidates) whose best candidate is gold (an index or a set)."""
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[0] != len(gold):
        raise ValueError(f"scores must be (len(gold), n_candidates), got {scores.shape} for {len(gold)} queries.")
    if scores.shape[0] == 0:
        raise ValueError("top1_accuracy needs at least one query.")
    best = [int(b) for b in scores.argmax(axis=1)]
    return compute("top1_accuracy", predictions=best, references=[sorted(gold_set(g)) for g in gold])["accuracy"]


def kmeans_nmi(
    vectors: np.ndarray, labels: Sequence[str], seed: int = KMEANS_SEED, n_init: int = KMEANS_N_INIT
) -> float:
    """NMI between KMeans clusters (k = number of distinct labels, fixed seed and restarts, the machine's threads) and
    the labels (the ``nmi`` metric module)."""
    k = len(set(labels))
    if k < 2 or len(labels) < k:
        raise ValueError(f"kmeans_nmi needs at least 2 labels and as many items as labels (got {k}, {len(labels)}).")
    clusters = kmeans_clusters(np.asarray(vectors, np.float64), k, seed=seed, n_init=n_init, one_thread=False)
    return compute("nmi", predictions=[int(c) for c in clusters], references=list(labels))["nmi"]


def spearman(predicted: Sequence[float], gold: Sequence[float]) -> float:
    """Spearman's rho (the ``spearman`` metric module; 0.0 when either side is constant)."""
    if len(predicted) != len(gold) or len(gold) < 2:
        raise ValueError(f"spearman needs two equal sequences of 2+ values, got {len(predicted)} and {len(gold)}.")
    predicted, gold = np.asarray(predicted, np.float64).tolist(), np.asarray(gold, np.float64).tolist()
    rho = compute("spearman", predictions=predicted, references=gold)["spearman"]
    return 0.0 if not np.isfinite(rho) else float(rho)


# ---------------------------------------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class DevTask:
    """One dev task: which dev source it reads, how it scores an encoder, what it needs of the encoder."""

    name: str
    source: str
    metric: str
    description: str
    run: Callable[[Encoder, dict[str, Any]], tuple[float, int, dict[str, Any]]]
    needs_vectors: bool = False
    needs_mentions: bool = False


def _paraphrase(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    left, right = data["left"], data["right"]
    forward = [{i} for i in range(len(left))]
    backward = [{j} for j in range(len(right))]
    for i, j in data["links"]:
        forward[i].add(j)
        backward[j].add(i)
    scores = np.asarray(encoder.similarity(left, right))
    l2r, r2l = top1_accuracy(scores, forward), top1_accuracy(scores.T, backward)
    return (l2r + r2l) / 2, len(left), {"left_to_right": round(l2r, 6), "right_to_left": round(r2l, 6)}


def _retrieval(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    scores = np.asarray(encoder.similarity(data["queries"], data["candidates"]))
    return top1_accuracy(scores, data["gold"]), len(data["queries"]), {"candidates": len(data["candidates"])}


def _topics(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    labels = data["labels"]
    score = kmeans_nmi(encoder.encode(data["texts"]), labels)
    return score, len(labels), {"k": len(set(labels)), "n_init": KMEANS_N_INIT, "seed": KMEANS_SEED}


def _wordsim(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    predicted = np.asarray(encoder.paired_similarity(data["left"], data["right"]))
    gold, source = np.asarray(data["gold"]), np.asarray(data["source"])
    details = {}
    for name in sorted(set(data["source"])):
        mask = source == name
        if mask.sum() >= 3:
            details[name] = {"spearman": round(spearman(predicted[mask], gold[mask]), 6), "n": int(mask.sum())}
    return spearman(predicted, gold), len(gold), details


def _compound(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    score = multiple_choice_accuracy(encoder, MultipleChoiceData(data["queries"], data["candidates"]))
    return score, len(data["queries"]), {"candidates": 5}


def _alias(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
    scores = np.asarray(encoder.similarity(data["queries"], data["candidates"]))
    score = top1_accuracy(scores, [set(g) for g in data["gold"]])
    return score, len(data["queries"]), {"candidates": len(data["candidates"])}


def _context_clustering(encoder: Encoder, data: Any) -> tuple[float, int, dict[str, Any]]:
    scores = cluster_scores(encoder.encode_mentions(data.mentions), data.labels, len(data.types), seed=0)
    return scores["nmi"], len(data.labels), {"acc": round(scores["acc"], 6), "k": len(data.types)}


def _phrase_clustering(encoder: Encoder, data: Any) -> tuple[float, int, dict[str, Any]]:
    score = benchmark_kmeans_nmi(encoder.encode(data.phrases), data.labels, len(data.types), seed=0)
    return score, len(data.labels), {"k": len(data.types)}


#: the source of the tasks that read the benchmarks' own dev splits (not cached: they are read as they are)
BENCHMARK_DEV = "benchmark-dev"


def benchmark_dev_task(folder: str, label: str, in_context: bool) -> DevTask:
    """The KMeans-NMI task over the dev split of the clustering benchmark in ``folder`` (named ``dev_<short name>``):
    its mentions in their sentences (``in_context``, the context-clustering protocol) or alone (PEARL's protocol)."""
    short = folder.removesuffix("2003") + ("_context" if in_context else "")
    what, kind = (
        ("in their sentences", "context-clustering") if in_context else ("without context", "entity-clustering")
    )
    description = f"{label} dev-split mentions {what}, KMeans k={len(BENCHMARK_DEV_SETS[folder])} ({kind} dev set)"

    def run(encoder: Encoder, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
        if in_context:
            return _context_clustering(encoder, data[f"{folder}_mentions"])
        return _phrase_clustering(encoder, data[folder])

    return DevTask(
        f"dev_{short}", BENCHMARK_DEV, "nmi", description, run, needs_vectors=True, needs_mentions=in_context
    )


DEV_TASKS: dict[str, DevTask] = {
    task.name: task
    for task in (
        DevTask(
            "dev_paraphrase",
            "pivot",
            "top1_accuracy",
            "dict-de-en pivot paraphrases (dev split): partner retrieval, both directions",
            _paraphrase,
        ),
        DevTask(
            "dev_description",
            "wiki",
            "top1_accuracy",
            "wiki-leads dev titles -> one-line description retrieval (entity-linking proxy)",
            lambda encoder, data: _retrieval(encoder, data["description"]),
        ),
        DevTask(
            "dev_topics",
            "wiki",
            "nmi",
            "wiki-leads dev titles clustered by KMeans against their topic (entity-clustering proxy)",
            lambda encoder, data: _topics(encoder, data["topics"]),
            needs_vectors=True,
        ),
        DevTask(
            "dev_fuzzy",
            "wiki",
            "top1_accuracy",
            "corrupted wiki-leads dev titles -> clean title retrieval (fuzzy-join proxy)",
            lambda encoder, data: _retrieval(encoder, data["fuzzy"]),
        ),
        DevTask(
            "dev_wordsim",
            "wordsim",
            "spearman",
            "WordSim-353 + SimLex-999 pairs without benchmark words: cosine vs human scores",
            _wordsim,
        ),
        DevTask(
            "dev_compound",
            "compound",
            "accuracy",
            "WordNet compound -> one-word synonym among 5 candidates (Turney proxy; synsets kept out of training)",
            _compound,
        ),
        DevTask(
            "dev_alias",
            "alias",
            "top1_accuracy",
            "Wikipedia link anchor text -> its target title among all dev titles (entity-alias / fuzzy-join proxy)",
            _alias,
        ),
        *(
            benchmark_dev_task(folder, label, in_context)
            for in_context in (True, False)
            for folder, label in (("conll2003", "CoNLL-2003"), ("bc5cdr", "BC5CDR"))
        ),
    )
}
#: the suite's default tasks (``None``/``"all"``): the first five, the dev_avg of every results file so far
DEFAULT_DEV_TASKS = ["dev_paraphrase", "dev_description", "dev_topics", "dev_fuzzy", "dev_wordsim"]
#: task groups a caller may name instead of tasks
DEV_GROUPS = {
    "all": DEFAULT_DEV_TASKS,
    BENCHMARK_DEV: [n for n, t in DEV_TASKS.items() if t.source == BENCHMARK_DEV],
    "extended": list(DEV_TASKS),
}


def resolve_dev_tasks(tasks: str | Sequence[str] | None) -> list[str]:
    """Task names from ``None``/``"all"`` (the default five), ``"a,b"`` or a list of names or groups
    (:data:`DEV_GROUPS`); unknown names raise ``KeyError``."""
    if tasks is None:
        return list(DEFAULT_DEV_TASKS)
    names = [t.strip() for t in tasks.split(",")] if isinstance(tasks, str) else [str(t).strip() for t in tasks]
    names = [m for n in names for m in DEV_GROUPS.get(n, [n])]
    names = [n if n in DEV_TASKS or f"dev_{n}" not in DEV_TASKS else f"dev_{n}" for n in names if n]
    unknown = [n for n in names if n not in DEV_TASKS]
    if unknown or not names:
        raise KeyError(
            f"Unknown dev task(s) {unknown or tasks!r}; use a group ({', '.join(DEV_GROUPS)}) or some of "
            f"{', '.join(DEV_TASKS)}."
        )
    return list(dict.fromkeys(names))


# -------------------------------------------------------------------------------------------------- runner
def _as_encoder(model: Any, batch_size: int | None, progress: bool) -> Encoder:
    """An :class:`Encoder` for a spec string, an encoder, or an object with ``encode(list[str])`` (in memory: no
    weights hash, so checkpoint selection during training stays cheap)."""
    if isinstance(model, (str, os.PathLike, Encoder)):
        return load_encoder(model, batch_size=batch_size, progress=progress)
    if not callable(getattr(model, "encode", None)):
        raise TypeError(
            f"evaluate_dev needs a model spec (e.g. 'baseline:minilm-l6' or a model folder), an Encoder or an object "
            f"with encode(list[str]); got {type(model).__name__}."
        )
    kwargs = {"batch_size": batch_size} if batch_size else {}
    return ModelEncoder(
        model, name=f"in-memory {type(model).__name__}", revision="in-memory", progress=progress, **kwargs
    )


def _say(progress: bool, message: str) -> None:
    if progress_enabled(progress):
        print(message, file=sys.stderr, flush=True)


def _dev_data(source: str, sets: dict, max_items, benchmarks_dir, rebuild: bool, progress: bool):
    """The dev set of ``source``, loaded once per run into ``sets``; a missing resource is kept as its message."""
    if source not in sets:
        try:
            if source == BENCHMARK_DEV:
                sets[source] = load_benchmark_dev(benchmarks_dir)
            else:
                sets[source] = load_dev_set(source, max_items, benchmarks_dir, rebuild, progress)
        except (MissingResourceError, FileNotFoundError) as err:
            sets[source] = f"{type(err).__name__}: {err}"
    return sets[source]


def _run_dev_task(name: str, encoder: Encoder, data: dict[str, Any] | str) -> dict[str, Any]:
    """One task's results entry: its score on ``data``, or why it was skipped (no data, or an encoder that lacks
    what the task needs), and the seconds it took."""
    task = DEV_TASKS[name]
    started = time.perf_counter()
    entry: dict[str, Any] = {"score": None, "n": 0, "metric": task.metric}
    if isinstance(data, str):
        entry["skipped"] = data
    elif task.needs_vectors and VECTORS not in encoder.capabilities:
        entry["skipped"] = f"{encoder.name} gives no vectors (similarity only)"
    elif task.needs_mentions and MENTIONS not in encoder.capabilities:
        entry["skipped"] = f"{encoder.name} cannot encode mentions in context"
    else:
        score, n, details = task.run(encoder, data)
        entry.update(score=round(float(score), 6), n=int(n), details=details)
    entry["seconds"] = round(time.perf_counter() - started, 2)
    if "skipped" in entry:
        logger.warning("dev suite: %s skipped: %s", name, entry["skipped"])
    return entry


def _dev_document(encoder: Encoder, results: dict[str, dict[str, Any]], started_all: float) -> dict[str, Any]:
    """The dev-suite document of a run: the model, the tasks' entries and ``dev_avg`` over the tasks that ran."""
    ran = [name for name, entry in results.items() if entry["score"] is not None]
    return {
        "suite": SUITE,
        "version": VERSION,
        "model": encoder.name,
        "model_revision": encoder.revision,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started_all, 2),
        "tasks": results,
        "dev_avg": round(compute("average", predictions=[results[n]["score"] for n in ran])["average"], 6)
        if ran
        else None,
        "dev_avg_tasks": ran,
    }


def evaluate_dev(
    model: Any,
    tasks: str | Sequence[str] | None = None,
    progress: bool = True,
    *,
    max_items: int | None = None,
    batch_size: int | None = None,
    benchmarks_dir: str | os.PathLike | None = None,
    output: str | os.PathLike | None = None,
    rebuild: bool = False,
) -> dict[str, Any]:
    """Score a model on the dev suite (disjoint from every test benchmark) and return the document.

    Args:
        model: a spec for :func:`~phrasezoo.encoders.load_encoder` (``"baseline:minilm-l6"``, a model folder, a
            recipe name), an :class:`~phrasezoo.encoders.Encoder`, or any object with ``encode(list[str])``
            returning a tensor/array (a model being trained: it is put in eval mode for the call and restored).
        tasks: ``None``/``"all"``, ``"dev_fuzzy,dev_topics"`` or a list (names without ``dev_`` work too).
        progress: progress bars and one line per task on stderr.
        max_items: cap items per task (pairs, titles, word pairs; stable-hash order), e.g. for tests.
        batch_size: encoding batch size (default the encoders').
        benchmarks_dir: the test benchmarks the dev data is checked against (default ``$PHRASEZOO_BENCHMARKS`` or
            ``../shared/benchmarks``); needed only when a dev set is built, not when it comes from the cache.
        output: also write the document here as JSON.
        rebuild: rebuild the dev sets instead of reading the cache.

    Returns:
        ``{"suite": "phrasezoo-dev", "version": "1", "model", "model_revision", "created", "seconds",
        "tasks": {name: {"score": float | None, "n": int, "metric": str, "seconds": float, "details": {...}}},
        "dev_avg": float | None, "dev_avg_tasks": [names averaged]}``. A task whose resource is missing (e.g.
        dict-de-en) is logged as a warning and recorded with ``"score": None`` and ``"skipped": reason``.
    """
    names = resolve_dev_tasks(tasks)
    started_all = time.perf_counter()
    encoder = _as_encoder(model, batch_size, progress)
    module = getattr(encoder, "model", model)  # the torch module behind the encoder, if any
    was_training = bool(getattr(module, "training", False)) and callable(getattr(module, "train", None))
    if was_training:
        module.eval()
    results: dict[str, dict[str, Any]] = {}
    sets: dict[str, dict[str, Any] | str] = {}
    try:
        for number, name in enumerate(names, 1):
            data = _dev_data(DEV_TASKS[name].source, sets, max_items, benchmarks_dir, rebuild, progress)
            results[name] = entry = _run_dev_task(name, encoder, data)
            shown = "skipped" if entry["score"] is None else f"{entry['score']:.4f}"
            _say(progress, f"[{number}/{len(names)}] {name:16s} {entry['metric']:14s} {shown:>8s}  n={entry['n']}  "
                           f"({entry['seconds']:.1f} s)")  # fmt: skip
    finally:
        if was_training:
            module.train()
    doc = _dev_document(encoder, results, started_all)
    _say(progress, f"dev_avg {doc['dev_avg']} over {len(doc['dev_avg_tasks'])} task(s) in {doc['seconds']:.1f} s")
    if output is not None:
        write_dev_results(doc, output)
    return doc


def write_dev_results(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write a dev-suite document as JSON (atomically, like the benchmark results files)."""
    if doc.get("suite") != SUITE or "tasks" not in doc:
        raise ValueError(f"Not a {SUITE} document (expected 'suite': {SUITE!r} and 'tasks').")
    path = Path(path)
    atomic_write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return path


def read_dev_results(path: str | os.PathLike) -> dict[str, Any]:
    """A dev-suite document written by ``phrasezoo dev-eval``, checked: :class:`InputError` names the file and the
    first bad field (not a dev document, an unknown task, a score that is not a finite number or null)."""
    doc = read_user_json(path, "dev results file")
    if not isinstance(doc, dict) or doc.get("suite", SUITE) != SUITE or not isinstance(doc.get("tasks"), dict):
        raise InputError(f"{path}: not a {SUITE} document (expected 'suite': {SUITE!r} and a 'tasks' object).")
    if not isinstance(doc.get("model"), str):
        raise InputError(f"{path}: 'model' must be a string, got {doc.get('model')!r}.")
    for name, entry in doc["tasks"].items():
        if name not in DEV_TASKS:
            raise InputError(f"{path}: unknown dev task {name!r}; known: {', '.join(DEV_TASKS)}.")
        score = entry.get("score", "missing") if isinstance(entry, dict) else "missing"
        if not _score_or_none(score):
            raise InputError(f"{path}: task {name!r}: 'score' must be a finite number or null, got {score!r}.")
    if not _score_or_none(doc.get("dev_avg", "missing")):
        raise InputError(f"{path}: 'dev_avg' must be a finite number or null, got {doc.get('dev_avg', 'missing')!r}.")
    return doc


def _score_or_none(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value))


def dev_scores_row(doc: dict[str, Any], digits: int = 4) -> dict[str, Any]:
    """One flat JSON-lines row of a dev-suite document: ``dev_avg``, each task's score (``None`` when skipped) and
    the seconds it took; used by the scripts that score many checkpoints or settings."""
    scores = {name: None if e["score"] is None else round(e["score"], digits) for name, e in doc["tasks"].items()}
    avg = doc["dev_avg"]
    return {"dev_avg": None if avg is None else round(avg, digits), **scores, "seconds": round(doc["seconds"])}


def format_dev_table(docs: Sequence[dict[str, Any]]) -> str:
    """Markdown table of dev-suite results documents: one row per model, one column per dev task, then dev_avg."""
    names = [name for name in DEV_TASKS if any(name in d.get("tasks", {}) for d in docs)]
    header = ["model", *(n.removeprefix("dev_") for n in names), "dev_avg"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [":---:"] * (len(header) - 1)) + "|"]
    for doc in docs:
        cells = []
        for name in names:
            score = doc.get("tasks", {}).get(name, {}).get("score")
            cells.append("–" if score is None else f"{100 * score:.1f}")
        avg = doc.get("dev_avg")
        model = " ".join(str(doc.get("model", "?")).splitlines()).replace("|", "\\|")  # one cell, one row
        lines.append(f"| {model} | " + " | ".join([*cells, "–" if avg is None else f"{100 * avg:.1f}"]) + " |")
    lines += [
        "",
        "- Percentages (top-1 accuracy, NMI x 100, Spearman x 100); – = skipped (resource missing). Generated from "
        "`results/baselines/dev-*.json` by `phrasezoo dev-eval --table`.",
    ]
    return "\n".join(lines)
