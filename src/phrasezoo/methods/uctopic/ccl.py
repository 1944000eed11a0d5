"""Cluster-assisted contrastive learning (CCL, UCTopic section 3.2): finetune a phrase-mention encoder on a dataset.

Shared by topic mining (:mod:`phrasezoo.methods.uctopic.topic_mining`) and the CCL evaluation tasks (:mod:`.tasks.clustering`).

In-batch negatives hurt on a dataset with few topics, because many in-batch "negatives" share the anchor's topic.
CCL takes its negatives from *other clusters* instead:

1. cluster the pretrained mention embeddings with KMeans (k topics);
2. keep the ``top_fraction`` (t) most confident instances of each cluster: the members closest to their centroid
   (cosine), t of each cluster's members;
3. give every phrase (lemmatized key) the majority label of its confident instances (:func:`majority_vote`);
4. train with the paper's eq. 3: anchor = a mention of a labelled phrase (masked), positive = another mention of the
   same phrase (kept unmasked with probability p), negatives = mentions of phrases labelled with other topics (kept
   unmasked with probability p); InfoNCE with temperature 0.05.

No gold label is used anywhere: inputs are the mentions, their phrase keys and k. The encoder is duck-typed: any
model with ``prepare_mentions``/``collate`` (or ``tokenize_mentions``) whose forward returns ``embeddings``, i.e.
:class:`~phrasezoo.models.uctopic.modeling_uctopic.UCTopicModel` or the same class loaded with trust_remote_code.
"""

from __future__ import annotations

import copy
import logging
import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from phrasezoo.core.machine import has_fast_bf16
from phrasezoo.objectives.losses import info_nce
from phrasezoo.objectives.weight_averaging import soup_state_dicts

logger = logging.getLogger(__name__)

Mention = tuple[str, tuple[int, int]]


@dataclass
class CCLConfig:
    """Options of CCL finetuning (paper values where the paper gives them).

    Args:
        top_fraction: t, the share of each cluster's members used as pseudo-labelled instances (paper: 5-50%).
        steps: optimisation steps.
        batch_size: anchors per step (each with one positive).
        negatives: negatives sampled per anchor from other clusters (the official code uses 5). Every sampled
            negative and every other anchor's positive from another cluster is a negative of all anchors of the
            batch, so one step scores each anchor against up to ``batch_size * (negatives + 1)`` candidates.
        learning_rate: Adam learning rate (paper: 1e-5).
        temperature: InfoNCE temperature (paper: 0.05).
        keep_mention_probability: p, chance that a positive or negative keeps its mention unmasked (paper: 0.5);
            anchors are always masked unless ``anchor_keep_probability`` says otherwise.
        anchor_keep_probability: chance that an anchor keeps its mention unmasked (paper: 0, always masked).
        max_seq_length: training window of tokens around the span (``None``: the model's limit).
        mixed_precision: ``"bf16"`` autocast for the forward pass (CPU or GPU), ``"no"``, or ``"auto"``: bf16 where
            the hardware has bf16 units (:func:`has_fast_bf16`), else float32.
        seed: seed of KMeans and of the sampling.
        check_every: every this many steps (and before the first), score the model with the label-free ``monitor``
            given to :func:`ccl_finetune` (0: no checks, all ``steps`` are run).
        patience: stop when this many checks in a row do not beat the best score by ``min_delta``; the weights of
            the best check are restored (the label-free stand-in for the paper's "best result during training").
        min_delta: improvement a check needs to count as better.
        recluster: at each check, re-derive the pseudo labels from the current vectors (KMeans again, confident
            instances, majority vote), so later steps learn from the sharpened clusters; needs a monitor that
            returns ``"vectors"``.
        monitor: the label-free score :func:`build_monitor` makes for the checks: ``"silhouette"`` (KMeans
            silhouette of a mention sample) or ``"held_out_silhouette"`` (the same, on the mentions of phrases
            without a pseudo label, i.e. not trained on).
        monitor_max_items: mentions encoded at each check (a fixed random sample).
        instances: the mentions CCL trains on. ``"all"``: every mention of a pseudo-labelled phrase (the official
            code: a phrase's label is spread to all its mentions); ``"confident"``: only the confident instances
            (the top ``top_fraction`` of each cluster), so a mention whose context points to another type than its
            phrase's majority (a country as a sports team) is not pulled into the majority's cluster.
        loss_vector: the vector the contrastive loss acts on. ``"training"``: the forward pass's training-mode
            ``embeddings`` (the official code; through the MLP head); ``"inference"``: the vector ``encode()``
            returns and KMeans clusters, which differs for a model built with ``mlp_only_train`` (its span vector,
            without the head). Without ``mlp_only_train`` both are the same.
        soup_seeds: when given, :func:`ccl_soup` runs CCL once per seed (each its own KMeans pseudo labels and
            sampling, all from the same start) and averages the finetuned weights uniformly (a model soup): the
            average of a few short finetunes is steadier than any one of them, whose effect can be as large as its
            seed noise. ``seed`` is then unused. Not in the paper.
    """

    top_fraction: float = 0.1
    steps: int = 100
    batch_size: int = 16
    negatives: int = 5
    learning_rate: float = 1e-5
    temperature: float = 0.05
    keep_mention_probability: float = 0.5
    anchor_keep_probability: float = 0.0
    max_seq_length: int | None = 64
    mixed_precision: str = "bf16"
    seed: int = 0
    check_every: int = 0
    patience: int = 2
    min_delta: float = 0.0
    recluster: bool = False
    monitor: str = "silhouette"
    monitor_max_items: int = 2000
    instances: str = "all"
    loss_vector: str = "training"
    soup_seeds: list[int] | None = None

    def __post_init__(self) -> None:
        if self.soup_seeds is not None:
            if (
                not isinstance(self.soup_seeds, (list, tuple))
                or not self.soup_seeds
                or not all(isinstance(s, int) and not isinstance(s, bool) for s in self.soup_seeds)
            ):
                raise ValueError(f"CCLConfig.soup_seeds must be a non-empty list of ints, got {self.soup_seeds!r}.")
            if len(set(self.soup_seeds)) != len(self.soup_seeds):
                raise ValueError(f"CCLConfig.soup_seeds repeats a seed: {self.soup_seeds!r}.")
        if self.loss_vector not in ("training", "inference"):
            raise ValueError(f"CCLConfig.loss_vector must be 'training' or 'inference', got {self.loss_vector!r}.")
        if self.instances not in ("all", "confident"):
            raise ValueError(f"CCLConfig.instances must be 'all' or 'confident', got {self.instances!r}.")
        if self.instances == "confident" and self.recluster:
            raise ValueError("CCLConfig.recluster needs instances='all' (the confident set is fixed before training).")

    @property
    def masking(self) -> str:
        """How training masks the mentions, in words (for result notes and study tables)."""
        anchor, others = self.anchor_keep_probability, self.keep_mention_probability
        if anchor >= 1 and others >= 1:
            return "mentions unmasked"
        if anchor == 0 and others == 0.5:
            return "the paper's masking"
        return f"mentions kept: anchors p={anchor:g}, others p={others:g}"


@dataclass
class PseudoLabels:
    """Result of clustering + confident-instance selection + majority vote."""

    assignments: np.ndarray  # KMeans cluster of every instance
    centroids: np.ndarray  # (k, dim), L2-normalised
    confident: np.ndarray  # indices of the selected instances (top t of each cluster)
    by_key: dict[str, int]  # phrase key -> pseudo label (majority vote of its confident instances)

    @property
    def n_clusters(self) -> int:
        return int(self.centroids.shape[0])


@dataclass
class CCLResult:
    """What a CCL run did (for logs, model cards and tests)."""

    steps: int
    losses: list[float] = field(default_factory=list)
    labelled_phrases: int = 0
    anchor_instances: int = 0
    skipped_reason: str | None = None
    checks: list[dict] = field(default_factory=list)  # {"step", "score", ...} of every monitor check
    best_step: int | None = None  # the step whose weights were kept (None: no checks, the last step)


# ------------------------------------------------------------------------------------------------ pseudo labels
def kmeans(embeddings: np.ndarray, n_clusters: int, seed: int = 0, n_init: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """KMeans on L2-normalised rows (single-threaded, deterministic); returns assignments and normalised centroids."""
    from sklearn.cluster import KMeans  # lazy: keeps scikit-learn off 'phrasezoo --help'

    vectors = unit_rows(embeddings)
    with threadpool_limits(limits=1):
        model = KMeans(n_clusters=n_clusters, random_state=seed, n_init=n_init).fit(vectors)
    return model.labels_.astype(np.int64), unit_rows(model.cluster_centers_)


def select_confident(
    embeddings: np.ndarray, centroids: np.ndarray, assignments: np.ndarray, top_fraction: float
) -> np.ndarray:
    """Indices of the ``top_fraction`` members of each cluster closest (cosine) to their centroid, at least one per
    non-empty cluster, sorted."""
    if not 0 < top_fraction <= 1:
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction}.")
    similarity = unit_rows(embeddings) @ unit_rows(centroids).T
    chosen = []
    for cluster in range(centroids.shape[0]):
        members = np.flatnonzero(assignments == cluster)
        if len(members) == 0:
            continue
        keep = max(1, math.ceil(top_fraction * len(members)))
        order = np.argsort(-similarity[members, cluster], kind="stable")
        chosen.extend(members[order[:keep]].tolist())
    return np.asarray(sorted(chosen), dtype=np.int64)


def majority_vote(
    keys: Sequence[str], labels: Sequence[int], indices: Sequence[int], confidence: Sequence[float] | None = None
) -> dict[str, int]:
    """The pseudo label of each phrase key: the most frequent label among its instances in ``indices``.

    Ties go to the label whose instances have the larger summed ``confidence`` (then the smaller label).
    """
    votes: dict[str, Counter] = defaultdict(Counter)
    weight: dict[str, Counter] = defaultdict(Counter)
    for i in indices:
        votes[keys[i]][int(labels[i])] += 1
        weight[keys[i]][int(labels[i])] += float(confidence[i]) if confidence is not None else 0.0
    return {
        key: min(counter, key=lambda label: (-counter[label], -weight[key][label], label))
        for key, counter in votes.items()
    }


def pseudo_labels(
    embeddings: np.ndarray,
    keys: Sequence[str],
    n_clusters: int,
    top_fraction: float = 0.1,
    seed: int = 0,
    centroids: np.ndarray | None = None,
    assignments: np.ndarray | None = None,
) -> PseudoLabels:
    """Steps 1-3 of CCL: KMeans (unless ``centroids``/``assignments`` are given), confident instances, majority vote."""
    if len(keys) != len(embeddings):
        raise ValueError(f"{len(keys)} keys for {len(embeddings)} embeddings.")
    if centroids is None or assignments is None:
        assignments, centroids = kmeans(embeddings, n_clusters, seed=seed)
    centroids = unit_rows(centroids)
    confident = select_confident(embeddings, centroids, assignments, top_fraction)
    confidence = (unit_rows(embeddings) * centroids[assignments]).sum(1)
    by_key = majority_vote(keys, assignments, confident, confidence)
    return PseudoLabels(np.asarray(assignments), centroids, confident, by_key)


# ------------------------------------------------------------------------------------------------------ sampling
class CCLSampler:
    """Draws CCL batches: anchors of labelled phrases with a second mention, their positives, other-topic negatives.

    Every mention of a labelled phrase takes the phrase's label (as in the official code). A mention can anchor when
    its phrase has another mention; the positive is another mention of the phrase, from a different sentence when
    there is one.
    """

    def __init__(self, mentions: Sequence[Mention], keys: Sequence[str], labels_by_key: dict[str, int]):
        self.mentions = list(mentions)
        self.keys = list(keys)
        self.label = {i: labels_by_key[k] for i, k in enumerate(self.keys) if k in labels_by_key}
        by_key: dict[str, list[int]] = defaultdict(list)
        self.by_topic: dict[int, list[int]] = defaultdict(list)
        for i, label in self.label.items():
            by_key[self.keys[i]].append(i)
            self.by_topic[label].append(i)
        self.positives: dict[int, list[int]] = {}
        for members in by_key.values():
            for i in members:
                others = [j for j in members if j != i]
                elsewhere = [j for j in others if self.mentions[j][0] != self.mentions[i][0]]
                if others:
                    self.positives[i] = elsewhere or others
        self.anchors = sorted(self.positives)
        self.topics = sorted(self.by_topic)

    @property
    def usable(self) -> bool:
        """True when there is an anchor and at least two topics (a negative exists)."""
        return bool(self.anchors) and len(self.topics) >= 2

    def sample(self, rng: random.Random, batch_size: int, negatives: int) -> tuple[list[int], list[int], list[int]]:
        """``(anchors, positives, negatives)`` instance indices; negatives are drawn topic by topic (a topic other
        than the anchor's, then one of its mentions), ``negatives`` per anchor."""
        anchors = rng.sample(self.anchors, min(batch_size, len(self.anchors)))
        positives = [rng.choice(self.positives[a]) for a in anchors]
        drawn = []
        for anchor in anchors:
            others = [t for t in self.topics if t != self.label[anchor]]
            for _ in range(negatives):
                drawn.append(rng.choice(self.by_topic[rng.choice(others)]))
        return anchors, positives, drawn


def ccl_loss(
    anchors: torch.Tensor,
    positives: torch.Tensor,
    negatives: torch.Tensor,
    anchor_labels: torch.Tensor,
    positive_labels: torch.Tensor,
    negative_labels: torch.Tensor,
    temperature: float = 0.05,
) -> torch.Tensor:
    """The paper's eq. 3 over a batch: anchor ``i`` against its positive ``i`` and every candidate of the batch from
    another topic (the other anchors' positives and all sampled negatives whose label differs from ``i``'s).

    All inputs are L2-normalised; labels are pseudo labels. Computed in float32.
    """
    candidates = torch.cat([positives, negatives]).float()
    candidate_labels = torch.cat([positive_labels, negative_labels])
    same_topic = candidate_labels.unsqueeze(0) == anchor_labels.unsqueeze(1)  # not negatives (own positive kept)
    return info_nce(anchors.float(), candidates, temperature, ignore=same_topic)


# ------------------------------------------------------------------------------------------------------ training
def ccl_finetune(
    model,
    mentions: Sequence[Mention],
    keys: Sequence[str],
    labels_by_key: dict[str, int],
    config: CCLConfig | None = None,
    progress: bool = True,
    monitor: Callable[[Any], dict] | None = None,
    confident: Sequence[int] | None = None,
) -> CCLResult:
    """Finetune ``model`` in place with CCL (step 4 of the module docstring); returns what it did.

    With ``config.check_every`` and a ``monitor`` (a callable taking the model, in eval mode, and returning
    ``{"score": float, ...}``, e.g. :func:`silhouette_monitor`), the model is scored before the first step and every
    ``check_every`` steps; training stops after ``patience`` checks without a better score and the best-scoring
    weights are restored. The monitor must not use gold labels (it decides when to stop).

    ``confident`` (the indices of :attr:`PseudoLabels.confident`) is required with ``config.instances ==
    "confident"``: only those mentions are then sampled.

    When no phrase has two mentions or only one topic has labelled phrases, nothing is trained and
    ``skipped_reason`` says why.
    """
    config = config or CCLConfig()
    if config.instances == "confident":
        if confident is None:
            raise ValueError("CCL instances='confident' needs the confident indices: pass confident=labels.confident.")
        kept = sorted({int(i) for i in confident})
        mentions, keys = [mentions[i] for i in kept], [keys[i] for i in kept]
    if config.check_every and monitor is None:
        raise ValueError("check_every > 0 needs a monitor, e.g. phrasezoo.methods.uctopic.ccl.silhouette_monitor(...).")
    sampler = CCLSampler(mentions, keys, labels_by_key)
    result = CCLResult(steps=0, labelled_phrases=len(labels_by_key), anchor_instances=len(sampler.anchors))
    result.skipped_reason = _skip_reason(sampler)
    if result.skipped_reason:
        logger.warning("CCL skipped: %s.", result.skipped_reason)
        return result
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate)
    was_training = model.training
    n_clusters = max(labels_by_key.values()) + 1
    best = _BestWeights(model, monitor, config, result, mentions, keys, n_clusters) if config.check_every else None
    model.train()
    stopped = False
    if best is not None:
        stopped, sampler = best.check(0, sampler)
    bar = tqdm(range(config.steps), desc="CCL finetuning", disable=not progress or stopped)
    for step in bar:
        if stopped:
            break
        result.losses.append(_ccl_step(model, sampler, rng, config, optimizer))
        result.steps += 1
        bar.set_postfix(loss=f"{result.losses[-1]:.3f}")
        if best is not None and (step + 1) % config.check_every == 0:
            stopped, sampler = best.check(step + 1, sampler)
    if best is not None and result.steps % config.check_every and not stopped:
        best.check(result.steps, sampler)  # score the last steps too
    if best is not None and best.state is not None:
        model.load_state_dict(best.state)
        result.best_step = best.step
    if not was_training:
        model.eval()
    return result


def _skip_reason(sampler: CCLSampler) -> str | None:
    """Why CCL cannot train on what ``sampler`` holds (no positive pair, or no negative), ``None`` when it can."""
    if sampler.usable:
        return None
    if not sampler.anchors:
        return "no labelled phrase has a second mention (no positive pair)"
    return "the confident instances cover a single topic (no negative)"


def _ccl_step(model, sampler: CCLSampler, rng: random.Random, config: CCLConfig, optimizer) -> float:
    """One CCL optimisation step on a batch drawn from ``sampler`` (masking drawn from ``rng``); its loss."""
    device = next(model.parameters()).device
    anchors, positives, negatives = sampler.sample(rng, config.batch_size, config.negatives)
    others = positives + negatives
    anchor_flags = (  # no draw at p 0 (the paper), so such runs keep the random stream they always had
        [rng.random() >= config.anchor_keep_probability for _ in anchors]
        if config.anchor_keep_probability
        else [True] * len(anchors)
    )
    flags = anchor_flags + [rng.random() >= config.keep_mention_probability for _ in others]
    batch = [sampler.mentions[i] for i in anchors + others]
    features = _features(model, batch, flags, config.max_seq_length)
    features = {k: v.to(device) for k, v in features.items()}
    with _autocast(config.mixed_precision, device):
        output = model(**features)
    embeddings = output.embeddings
    if config.loss_vector == "inference" and _mlp_only_train(model):
        embeddings = torch.nn.functional.normalize(output.span_states.float(), dim=-1)
    n, m = len(anchors), len(positives)
    labels = torch.tensor([sampler.label[i] for i in anchors + others], device=device)
    loss = ccl_loss(
        embeddings[:n], embeddings[n : n + m], embeddings[n + m :],
        labels[:n], labels[n : n + m], labels[n + m :], config.temperature,
    )  # fmt: skip
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.detach())


@dataclass
class _BestWeights:
    """CCL's early stopping: scores the model with the monitor, keeps the best-scoring weights (on the CPU) and
    counts the checks since the last improvement; with ``config.recluster`` it re-derives the pseudo labels from
    the monitor's vectors, so the next batches come from the fresh clusters."""

    model: Any
    monitor: Callable[[Any], dict]
    config: CCLConfig
    result: CCLResult
    mentions: Sequence[Mention]
    keys: Sequence[str]
    n_clusters: int
    score: float = -math.inf
    step: int | None = None
    state: dict[str, torch.Tensor] | None = None
    stale: int = 0

    def check(self, step: int, sampler: CCLSampler) -> tuple[bool, CCLSampler]:
        """Score the model after ``step`` steps: ``(stop, the sampler to go on with)``."""
        self.model.eval()
        with torch.no_grad():
            report = self.monitor(self.model)
        self.model.train()
        score = float(report["score"])
        entry = {"step": step, "score": round(score, 6)}
        entry.update({k: v for k, v in report.items() if k not in ("score", "vectors")})
        self.result.checks.append(entry)
        if score > self.score + self.config.min_delta or self.state is None:
            self.score, self.step, self.stale = score, step, 0
            self.state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
        else:
            self.stale += 1
        if self.config.recluster and step > 0 and "vectors" in report:
            config = self.config
            labels = pseudo_labels(report["vectors"], self.keys, self.n_clusters, config.top_fraction, config.seed)
            fresh = CCLSampler(self.mentions, self.keys, labels.by_key)
            if fresh.usable:
                sampler = fresh
                entry["labelled_phrases"] = len(labels.by_key)
        return self.stale >= self.config.patience, sampler


def ccl_soup(
    model,
    mentions: Sequence[Mention],
    keys: Sequence[str],
    start_vectors: np.ndarray,
    n_clusters: int,
    config: CCLConfig,
    progress: bool = True,
    monitor_for: Callable[[int, PseudoLabels], Callable[[Any], dict] | None] | None = None,
) -> tuple[Any, list[CCLResult], list[PseudoLabels]]:
    """CCL from ``model`` once per seed of ``config.soup_seeds`` (or once with ``config.seed``), on copies; returns
    ``(tuned, results, labels)``: a copy holding the uniform mean of the finetuned weights (the single run's weights
    with one seed), and each run's result and pseudo labels. ``model`` is untouched.

    Each run draws its own pseudo labels (KMeans on ``start_vectors``, the model's vectors of ``mentions``, with
    that seed) and batches. ``monitor_for(seed, labels)`` gives a run its monitor (needed with
    ``config.check_every``; the best-check restore applies to each run before averaging).
    """
    seeds = list(config.soup_seeds or [config.seed])
    results, all_labels, states = [], [], []
    tuned = None
    for seed in seeds:
        run_config = replace(config, seed=seed, soup_seeds=None)
        labels = pseudo_labels(start_vectors, keys, n_clusters, top_fraction=config.top_fraction, seed=seed)
        tuned = copy.deepcopy(model)
        monitor = monitor_for(seed, labels) if monitor_for is not None else None
        result = ccl_finetune(
            tuned, mentions, keys, labels.by_key, run_config, progress, monitor, confident=labels.confident
        )
        results.append(result)
        all_labels.append(labels)
        if len(seeds) > 1:
            states.append({k: v.detach().to("cpu", copy=True) for k, v in tuned.state_dict().items()})
    if len(seeds) > 1:
        tuned.load_state_dict(soup_state_dicts(states, shared=list(states[0])))
    return tuned, results, all_labels


def silhouette_monitor(
    mentions: Sequence[Mention],
    keys: Sequence[str],
    n_clusters: int,
    held_out_keys: set[str] | None = None,
    max_items: int = 2000,
    seed: int = 0,
    batch_size: int = 64,
    all_vectors: bool = False,
) -> Callable[[Any], dict]:
    """A label-free monitor for :func:`ccl_finetune`: the silhouette (cosine) of KMeans (``n_clusters``) on the
    model's vectors of a fixed random sample of at most ``max_items`` mentions.

    With ``held_out_keys`` (the phrase keys CCL does *not* train on), the score is the silhouette of the sampled
    mentions of those phrases only (KMeans still sees the whole sample): whether the structure CCL learns on its
    confident phrases carries over to phrases it never saw. Returns ``{"score", "silhouette_all"[,
    "silhouette_held_out"][, "vectors"]}``; ``all_vectors`` encodes every mention and returns their vectors (what
    ``recluster`` needs).
    """
    from sklearn.metrics import silhouette_score  # lazy: keeps scikit-learn off 'phrasezoo --help'

    mentions = list(mentions)
    keys = list(keys)
    sample = np.arange(len(mentions))
    if len(sample) > max_items:
        sample = np.sort(np.random.default_rng(seed).choice(sample, max_items, replace=False))
    held_out = None if held_out_keys is None else np.asarray([keys[i] in held_out_keys for i in sample])

    def silhouette(vectors: np.ndarray, assignments: np.ndarray) -> float:
        if len(vectors) < 3 or len(set(assignments.tolist())) < 2:
            return -1.0
        return float(silhouette_score(vectors, assignments, metric="cosine"))

    def score(model) -> dict:
        report: dict[str, Any] = {}
        if all_vectors:
            everything = unit_rows(model.encode(mentions, batch_size=batch_size, show_progress_bar=False))
            vectors = everything[sample]
            report["vectors"] = everything
        else:
            chosen = [mentions[i] for i in sample]
            vectors = unit_rows(model.encode(chosen, batch_size=batch_size, show_progress_bar=False))
        assignments, _ = kmeans(vectors, n_clusters, seed=seed)
        report["silhouette_all"] = round(silhouette(vectors, assignments), 6)
        report["score"] = report["silhouette_all"]
        if held_out is not None:
            report["silhouette_held_out"] = round(silhouette(vectors[held_out], assignments[held_out]), 6)
            report["score"] = report["silhouette_held_out"]
        return report

    return score


def build_monitor(
    config: CCLConfig, mentions: Sequence[Mention], keys: Sequence[str], n_clusters: int, labelled_keys: set[str]
) -> Callable[[Any], dict]:
    """The monitor ``config.monitor`` names, for :func:`ccl_finetune` (``labelled_keys``: the pseudo-labelled
    phrases, left out of ``"held_out_silhouette"``)."""
    if config.monitor not in ("silhouette", "held_out_silhouette"):
        raise ValueError(f"monitor must be 'silhouette' or 'held_out_silhouette', got {config.monitor!r}.")
    held_out = {k for k in keys if k not in labelled_keys} if config.monitor == "held_out_silhouette" else None
    return silhouette_monitor(
        mentions, keys, n_clusters, held_out_keys=held_out, max_items=config.monitor_max_items, seed=config.seed,
        all_vectors=config.recluster,
    )  # fmt: skip


def _features(model, mentions: list[Mention], flags: list[bool], max_seq_length: int | None) -> dict:
    if hasattr(model, "prepare_mentions"):
        prepared = model.prepare_mentions(mentions, mask_mention=flags, max_seq_length=max_seq_length)
        return model.collate(prepared)
    return model.tokenize_mentions(mentions, mask_mention=flags)


def _mlp_only_train(model) -> bool:
    """Whether ``model`` drops its head at inference (SimCSE's ``mlp_only_train``), so that training-mode
    ``embeddings`` are not the vectors ``encode()`` returns."""
    return bool(getattr(getattr(model, "config", None), "mlp_only_train", False))


def is_ccl_trainable(model) -> bool:
    """Whether ``model`` is a torch module with UCTopic's mention inputs (what :func:`ccl_finetune` needs)."""
    return isinstance(model, torch.nn.Module) and callable(getattr(model, "tokenize_mentions", None))


def _autocast(mixed_precision: str, device: torch.device):
    if mixed_precision == "auto":
        mixed_precision = "bf16" if has_fast_bf16(device) else "no"
    if mixed_precision in (None, "no", "fp32"):
        return nullcontext()
    if mixed_precision != "bf16":
        raise ValueError(f"mixed_precision must be 'auto', 'bf16' or 'no', got {mixed_precision!r}.")
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` as float32 with L2-normalised rows (the last axis; zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=-1, keepdims=True), 1e-12)
