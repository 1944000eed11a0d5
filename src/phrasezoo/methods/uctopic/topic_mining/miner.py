"""The topic miner: a ``fit`` / ``transform`` / ``get_topics`` / ``save`` / ``load`` facade over raw documents.

UCTopic's topical phrase mining (section 4.3 and appendix A.1), BERTopic-style with injectable parts:

1. phrase mentions: spaCy noun chunks without lone pronouns (:class:`~.phrases.NounPhraseExtractor`, replaceable);
2. encode a sample of mentions (``sample_size``, the paper uses 10k) in their sentences with the UCTopic model;
3. number of topics: ``n_topics``, or the best silhouette score of KMeans over ``topic_range``;
4. KMeans, the ``top_fraction`` most confident instances of each cluster, majority vote per lemmatized phrase;
5. CCL finetuning of (a copy of) the model on the sample (:mod:`.ccl`);
6. encode every mention with the finetuned model; topic representations = the L2-normalised means of each
   cluster's sample mentions in the finetuned space; a mention's topic is its nearest centroid (cosine) and its
   topic distribution the softmax of its cosines / ``topic_temperature``;
7. per phrase: the distribution averaged over its mentions, topic = its argmax, score = that probability.

A corpus with fewer distinct phrases than requested topics does not fail: the miner says so (a warning and
``messages_``) and uses as many topics as there are distinct phrases (and skips CCL when it cannot form pairs).
"""

from __future__ import annotations

import copy
import json
import logging
import random
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from transformers import AutoModel

from phrasezoo.core.errors import InputError
from phrasezoo.encoders import supported

from ..ccl import CCLConfig, CCLResult, ccl_finetune, kmeans, pseudo_labels, unit_rows
from .phrases import NounPhraseExtractor, PhraseExtractor, PhraseMention

logger = logging.getLogger(__name__)

STATE_FILE = "topic_miner.json"
CENTROIDS_FILE = "centroids.npy"
PHRASE_VECTORS_FILE = "phrase_vectors.npy"
MODEL_DIR = "model"


@dataclass
class TopicAssignment:
    """A mention of a transformed document with its topic (nearest centroid) and that topic's probability."""

    text: str
    sentence: str
    start: int
    end: int
    key: str
    topic: int
    probability: float


@dataclass
class PhraseTopic:
    """A phrase of the fitted corpus: its most common surface form, mention count and averaged topic distribution."""

    key: str
    text: str
    count: int
    topic: int
    score: float
    distribution: list[float]


class TopicMiner:
    """Mine topics and their top phrases from raw documents with a UCTopic encoder (see the module docstring).

    Args:
        model: a UCTopic model (a zoo ``UCTopicModel`` or the same loaded with ``trust_remote_code``). Any object with
            ``encode_mentions`` works when ``ccl=False``.
        n_topics: number of topics, or ``None`` to choose it by silhouette score over ``topic_range``.
        topic_range: smallest and largest number of topics tried (inclusive).
        ccl: finetune with cluster-assisted contrastive learning before assigning topics.
        ccl_config: CCL options (:class:`~.ccl.CCLConfig`); ``top_fraction`` is the share of confident instances.
        sample_size: mentions used to choose k and to finetune (``None``: all).
        silhouette_sample: points used per silhouette score (sklearn's ``sample_size``).
        min_frequency: phrases seen fewer times are left out of :meth:`get_topics` (the paper shows frequency >= 3).
        topic_temperature: softmax temperature of the topic distributions (the contrastive temperature, 0.05).
        phrase_extractor: callable documents -> :class:`~.phrases.PhraseMention` list (default: noun chunks).
        batch_size: encoding batch size.
        mixed_precision: ``"bf16"`` autocasts encoding and CCL (about 2x faster on CPUs with bf16 units), or ``"no"``.
        copy_model: finetune a copy, leaving the given model untouched.
        seed: seed of sampling, KMeans and CCL.
        progress: progress bars and messages.
    """

    def __init__(
        self,
        model,
        n_topics: int | None = None,
        topic_range: tuple[int, int] = (2, 15),
        ccl: bool = True,
        ccl_config: CCLConfig | None = None,
        sample_size: int | None = 10_000,
        silhouette_sample: int = 3_000,
        min_frequency: int = 3,
        topic_temperature: float = 0.05,
        phrase_extractor: PhraseExtractor | None = None,
        batch_size: int = 64,
        mixed_precision: str = "bf16",
        copy_model: bool = True,
        seed: int = 0,
        progress: bool = True,
    ):
        if n_topics is not None and n_topics < 1:
            raise ValueError(f"n_topics must be at least 1 (or None to choose it), got {n_topics}.")
        if topic_range[0] < 2 or topic_range[1] < topic_range[0]:
            raise ValueError(f"topic_range must be (low, high) with 2 <= low <= high, got {topic_range}.")
        self.model = model
        self.n_topics = n_topics
        self.topic_range = (int(topic_range[0]), int(topic_range[1]))
        self.ccl = ccl
        self.ccl_config = ccl_config or CCLConfig(seed=seed, mixed_precision=mixed_precision)
        if self.ccl_config.soup_seeds:
            raise ValueError(
                "TopicMiner trains one CCL run on its own topics; CCLConfig.soup_seeds (one run per seed, each with "
                "its own KMeans topics, weights averaged) is for the context-clustering evaluation. Drop soup_seeds."
            )
        self.sample_size = sample_size
        self.silhouette_sample = silhouette_sample
        self.min_frequency = min_frequency
        self.topic_temperature = topic_temperature
        self.phrase_extractor = phrase_extractor or NounPhraseExtractor()
        self.batch_size = batch_size
        self.mixed_precision = mixed_precision
        self.copy_model = copy_model
        self.seed = seed
        self.progress = progress
        self.messages_: list[str] = []

    # ------------------------------------------------------------------------------------------------------ fit
    def fit(self, documents: Sequence[str]) -> TopicMiner:
        """Find the topics of ``documents`` (steps 1-7 of the module docstring)."""
        self.messages_ = []
        mentions = self._extract(documents)
        if not mentions:
            raise InputError("No noun phrase was found in the documents; topic mining needs phrases.")
        rng = random.Random(self.seed)
        indices = list(range(len(mentions)))
        if self.sample_size is not None and len(indices) > self.sample_size:
            indices = sorted(rng.sample(indices, self.sample_size))
        sample = [mentions[i] for i in indices]
        sample_vectors = self._encode(self.model, sample)
        keys = [m.key for m in sample]
        k, scores = self._choose_k(sample_vectors, keys)
        self.silhouette_scores_ = scores
        self.n_topics_ = k
        if k == 1:
            assignments = np.zeros(len(sample), dtype=np.int64)
            centroids = unit_rows(sample_vectors.mean(0, keepdims=True))
        else:
            assignments, centroids = kmeans(sample_vectors, k, seed=self.seed)
        labels = pseudo_labels(
            sample_vectors, keys, k, self.ccl_config.top_fraction, self.seed, centroids=centroids,
            assignments=assignments,
        )  # fmt: skip
        model = copy.deepcopy(self.model) if self.copy_model else self.model
        self.ccl_result_: CCLResult | None = None
        if self.ccl and k >= 2:
            self._say(f"CCL finetuning on {len(sample)} mentions ({len(labels.by_key)} pseudo-labelled phrases)")
            self.ccl_result_ = ccl_finetune(
                model,
                [m.mention for m in sample],
                keys,
                labels.by_key,
                self.ccl_config,
                self.progress,
                confident=labels.confident,
            )
            if self.ccl_result_.skipped_reason:
                self._say(f"CCL skipped: {self.ccl_result_.skipped_reason}.", warn=True)
        elif self.ccl:
            self._say("CCL skipped: a single topic has no other cluster to take negatives from.", warn=True)
        self.model_ = model
        tuned = self.ccl_result_ is not None and self.ccl_result_.steps > 0
        if tuned:
            vectors = self._encode(model, mentions)
            sample_tuned = vectors[indices]
            centroids = np.stack([unit_rows(sample_tuned[assignments == c].mean(0)) for c in range(k)])
        else:
            vectors = self._encode(model, mentions, known=dict(zip(indices, sample_vectors)))
        self.centroids_ = unit_rows(centroids)
        self.mentions_ = mentions
        probabilities = self._distributions(vectors)
        self.mention_probabilities_ = probabilities
        self.mention_topics_ = probabilities.argmax(1)
        self._phrase_table(mentions, vectors, probabilities)
        return self

    def fit_transform(self, documents: Sequence[str]) -> list[list[TopicAssignment]]:
        """:meth:`fit`, then the topic of every mention of every document."""
        self.fit(documents)
        return self._assignments(self.mentions_, self.mention_topics_, self.mention_probabilities_, len(documents))

    def transform(self, documents: Sequence[str]) -> list[list[TopicAssignment]]:
        """Topics of the mentions of new documents: one list of :class:`TopicAssignment` per document."""
        self._check_fitted()
        mentions = self._extract(documents)
        if not mentions:
            return [[] for _ in documents]
        probabilities = self._distributions(self._encode(self.model_, mentions))
        return self._assignments(mentions, probabilities.argmax(1), probabilities, len(documents))

    # ------------------------------------------------------------------------------------------------- results
    def get_topics(self, top_n: int = 10, min_frequency: int | None = None) -> dict[int, list[tuple[str, float]]]:
        """Top phrases per topic: ``{topic: [(phrase, score), ...]}``, phrases seen at least ``min_frequency`` times
        (default: the miner's), ranked by their averaged topic probability."""
        self._check_fitted()
        min_frequency = self.min_frequency if min_frequency is None else min_frequency
        topics: dict[int, list[PhraseTopic]] = {t: [] for t in range(self.n_topics_)}
        for phrase in self.phrases_.values():
            if phrase.count >= min_frequency:
                topics[phrase.topic].append(phrase)
        return {
            t: [(p.text, round(p.score, 4)) for p in sorted(ps, key=lambda p: (-p.score, -p.count, p.text))[:top_n]]
            for t, ps in topics.items()
        }

    def get_topic_info(self) -> list[dict[str, Any]]:
        """One row per topic: number of phrases and of mentions, and its three top phrases."""
        self._check_fitted()
        top = self.get_topics(top_n=3)
        rows = []
        for t in range(self.n_topics_):
            members = [p for p in self.phrases_.values() if p.topic == t]
            rows.append(
                {
                    "topic": t,
                    "phrases": len(members),
                    "mentions": sum(p.count for p in members),
                    "top_phrases": [text for text, _ in top[t]],
                }
            )
        return rows

    def format_topics(self, top_n: int = 10, min_frequency: int | None = None) -> str:
        """The topics as text, one block per topic, as the CLI prints them."""
        info = {row["topic"]: row for row in self.get_topic_info()}
        lines = []
        for topic, phrases in self.get_topics(top_n, min_frequency).items():
            row = info[topic]
            shown = ", ".join(text for text, _ in phrases) or "(no phrase reaches the minimum frequency)"
            lines.append(f"Topic {topic} ({row['phrases']} phrases, {row['mentions']} mentions): {shown}")
        return "\n".join(lines)

    # -------------------------------------------------------------------------------------------- persistence
    def save(self, folder: str | Path) -> Path:
        """Write the fitted miner: the (finetuned) model, centroids, phrase table and options."""
        self._check_fitted()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if hasattr(self.model_, "save_pretrained"):
            self.model_.save_pretrained(folder / MODEL_DIR, safe_serialization=True)
            tokenizer = getattr(self.model_, "tokenizer", None)
            if tokenizer is not None:
                tokenizer.save_pretrained(folder / MODEL_DIR)
        np.save(folder / CENTROIDS_FILE, self.centroids_)
        keys = list(self.phrase_vectors_)
        np.save(
            folder / PHRASE_VECTORS_FILE,
            np.stack([self.phrase_vectors_[k] for k in keys]) if keys else np.zeros((0, 0)),
        )
        state = {
            "options": self._options(),
            "n_topics": self.n_topics_,
            "silhouette_scores": {str(k): v for k, v in self.silhouette_scores_.items()},
            "messages": self.messages_,
            "ccl": asdict(self.ccl_result_) if self.ccl_result_ is not None else None,
            "phrases": [asdict(p) for p in self.phrases_.values()],
            "phrase_vector_keys": keys,
            "topics": {str(t): phrases for t, phrases in self.get_topics(top_n=50).items()},
        }
        (folder / STATE_FILE).write_text(json.dumps(state, indent=1, ensure_ascii=False))
        return folder

    @classmethod
    def load(cls, folder: str | Path, model=None, load_model: bool = True, progress: bool = True) -> TopicMiner:
        """A fitted miner from :meth:`save`; the model is read from ``folder/model`` unless one is given (or
        ``load_model=False``: topics only, no :meth:`transform`)."""
        folder = Path(folder)
        state_path = folder / STATE_FILE
        if not state_path.exists():
            raise FileNotFoundError(f"{folder} holds no saved topic miner ({STATE_FILE} is missing).")
        state = json.loads(state_path.read_text())
        if model is None and load_model:
            if not (folder / MODEL_DIR / "config.json").exists():
                raise FileNotFoundError(f"{folder / MODEL_DIR} holds no model; pass model= to TopicMiner.load.")
            model = AutoModel.from_pretrained(str(folder / MODEL_DIR), trust_remote_code=True).eval()
        options = dict(state["options"])
        ccl_config = CCLConfig(**options.pop("ccl_config"))
        options["topic_range"] = tuple(options["topic_range"])
        miner = cls(model, ccl_config=ccl_config, progress=progress, copy_model=False, **options)
        miner.model_ = model
        miner.n_topics_ = int(state["n_topics"])
        miner.centroids_ = np.load(folder / CENTROIDS_FILE)
        miner.silhouette_scores_ = {int(k): v for k, v in state["silhouette_scores"].items()}
        miner.messages_ = list(state["messages"])
        miner.ccl_result_ = CCLResult(**state["ccl"]) if state["ccl"] else None
        miner.phrases_ = {p["key"]: PhraseTopic(**p) for p in state["phrases"]}
        vectors = np.load(folder / PHRASE_VECTORS_FILE)
        miner.phrase_vectors_ = dict(zip(state["phrase_vector_keys"], vectors))
        miner.mentions_ = []
        return miner

    # ------------------------------------------------------------------------------------------------ internals
    def _options(self) -> dict[str, Any]:
        return {
            "n_topics": self.n_topics,
            "topic_range": list(self.topic_range),
            "ccl": self.ccl,
            "ccl_config": asdict(self.ccl_config),
            "sample_size": self.sample_size,
            "silhouette_sample": self.silhouette_sample,
            "min_frequency": self.min_frequency,
            "topic_temperature": self.topic_temperature,
            "batch_size": self.batch_size,
            "mixed_precision": self.mixed_precision,
            "seed": self.seed,
        }

    def _extract(self, documents: Sequence[str]) -> list[PhraseMention]:
        if isinstance(documents, str) or not isinstance(documents, Sequence):
            raise ValueError("Expected a list of documents (strings).")
        if not documents:
            raise ValueError("Expected at least one document, got an empty list.")
        for i, document in enumerate(documents):
            if not isinstance(document, str):
                raise ValueError(f"Document {i} is a {type(document).__name__}, not a string.")
        # an injected extractor may not take the progress keyword
        return list(self.phrase_extractor(documents, **supported(self.phrase_extractor, {"progress": self.progress})))

    def _encode(self, model, mentions: list[PhraseMention], known: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """L2-normalised vectors of ``mentions`` (rows in ``known`` are reused, not re-encoded)."""
        known = known or {}
        todo = [i for i in range(len(mentions)) if i not in known]
        out = np.zeros((len(mentions), 0), dtype=np.float32)
        if todo:
            with _autocast(self.mixed_precision, model):
                vectors = model.encode_mentions(
                    [mentions[i].mention for i in todo], batch_size=self.batch_size, show_progress_bar=self.progress
                )
            vectors = unit_rows(np.asarray(vectors, dtype=np.float32))
            out = np.zeros((len(mentions), vectors.shape[1]), dtype=np.float32)
            out[todo] = vectors
        elif known:
            out = np.zeros((len(mentions), len(next(iter(known.values())))), dtype=np.float32)
        for i, vector in known.items():
            out[i] = vector
        return out

    def _choose_k(self, vectors: np.ndarray, keys: list[str]) -> tuple[int, dict[int, float]]:
        """The number of topics: the requested one, capped by the number of distinct phrases, or the best silhouette."""
        distinct = min(len(set(keys)), len(np.unique(np.round(vectors, 5), axis=0)))
        if self.n_topics is not None:
            if self.n_topics > distinct:
                self._say(
                    f"The corpus has only {distinct} distinct phrase(s), fewer than the {self.n_topics} topics "
                    f"requested: using {distinct} topic(s).",
                    warn=True,
                )
                return max(1, distinct), {}
            return self.n_topics, {}
        low, high = self.topic_range
        high = min(high, distinct - 1)
        if high < low:
            k = max(1, min(distinct, low))
            self._say(
                f"The corpus has only {distinct} distinct phrase(s), too few to choose among {self.topic_range[0]}.."
                f"{self.topic_range[1]} topics by silhouette: using {k} topic(s).",
                warn=True,
            )
            return k, {}
        from sklearn.metrics import silhouette_score  # lazy: keeps scikit-learn off 'phrasezoo --help'

        scores = {}
        for k in range(low, high + 1):
            assignments, _ = kmeans(vectors, k, seed=self.seed)
            if len(set(assignments.tolist())) < 2:
                continue
            with threadpool_limits(limits=1):
                scores[k] = float(
                    silhouette_score(
                        vectors,
                        assignments,
                        metric="cosine",
                        sample_size=min(self.silhouette_sample, len(vectors)),
                        random_state=self.seed,
                    )  # fmt: skip
                )
        if not scores:
            self._say("No number of topics gave two non-empty clusters: using 1 topic.", warn=True)
            return 1, {}
        best = max(scores, key=lambda k: (scores[k], -k))
        self._say(f"Number of topics by silhouette score: {best} (score {scores[best]:.3f}).")
        return best, scores

    def _distributions(self, vectors: np.ndarray) -> np.ndarray:
        """Topic distribution of each mention: softmax of its cosines to the centroids / ``topic_temperature``."""
        logits = vectors @ self.centroids_.T / self.topic_temperature
        logits -= logits.max(1, keepdims=True)
        probabilities = np.exp(logits)
        return probabilities / probabilities.sum(1, keepdims=True)

    def _phrase_table(self, mentions: list[PhraseMention], vectors: np.ndarray, probabilities: np.ndarray) -> None:
        """Average the topic distributions (and vectors) of each phrase's mentions (section 4.3)."""
        groups: dict[str, list[int]] = defaultdict(list)
        for i, mention in enumerate(mentions):
            groups[mention.key].append(i)
        self.phrases_: dict[str, PhraseTopic] = {}
        self.phrase_vectors_: dict[str, np.ndarray] = {}
        for key, members in groups.items():
            distribution = probabilities[members].mean(0)
            topic = int(distribution.argmax())
            surface = Counter(mentions[i].text for i in members)
            text = min(surface, key=lambda s: (-surface[s], s))
            self.phrases_[key] = PhraseTopic(
                key, text, len(members), topic, float(distribution[topic]), [round(float(p), 6) for p in distribution]
            )
            if len(members) >= self.min_frequency:
                self.phrase_vectors_[key] = unit_rows(vectors[members].mean(0))

    def _assignments(self, mentions, topics, probabilities, n_documents: int) -> list[list[TopicAssignment]]:
        out: list[list[TopicAssignment]] = [[] for _ in range(n_documents)]
        for mention, topic, distribution in zip(mentions, topics, probabilities):
            out[mention.doc_id].append(
                TopicAssignment(
                    mention.text,
                    mention.sentence,
                    mention.start,
                    mention.end,
                    mention.key,
                    int(topic),
                    float(distribution[topic]),
                )  # fmt: skip
            )
        return out

    def _check_fitted(self) -> None:
        if not hasattr(self, "centroids_"):
            raise RuntimeError("This TopicMiner is not fitted yet: call fit(documents) first.")

    def _say(self, message: str, warn: bool = False) -> None:
        self.messages_.append(message)
        if warn:
            warnings.warn(message, stacklevel=3)
        elif self.progress:
            logger.info(message)


def _autocast(mixed_precision: str, model):
    if mixed_precision in (None, "no", "fp32"):
        return nullcontext()
    device = next(model.parameters()).device if hasattr(model, "parameters") else torch.device("cpu")
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
