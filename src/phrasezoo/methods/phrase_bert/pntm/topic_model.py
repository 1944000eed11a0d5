"""PNTM, the phrase-based neural topic model of Phrase-BERT (section 6), behind a BERTopic-style facade.

    from phrasezoo.methods.phrase_bert.pntm import PNTM
    model = PNTM(encoder="phrase-bert-mini", n_topics=20).fit(documents)
    model.get_topics(top_n=10)            # [[("tropical storm", 0.83), ("hurricane", 0.81), ...], ...]
    model.transform(new_documents)        # (n, 20) topic mixtures
    model.save("outputs/pntm-wiki"); PNTM.load("outputs/pntm-wiki")

Documents are embedded once with the encoder (any zoo model, a ``baseline:`` spec, or an object with ``encode``),
the :class:`~.model.TopicAutoencoder` is trained on the frozen vectors, and topics are read as nearest neighbours of
each topic row among the vocabulary (words, mined phrases, optionally sentences) embedded with the same encoder:
the paper's ``L R^T``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from tqdm.auto import tqdm

from phrasezoo.encoders import load_encoder, supported

from .corpus import Vocabulary, vocabulary_from_documents
from .model import TopicAutoencoder, contrastive_hinge_loss, orthogonality_penalty

WEIGHTS_FILE = "pntm.safetensors"
CONFIG_FILE = "pntm.json"


def as_encode_fn(encoder: Any, batch_size: int = 64, progress: bool = True) -> Callable[[list[str]], np.ndarray]:
    """A function ``texts -> unit-length float32 rows`` from a zoo spec string, a suite ``Encoder``, or any object
    with ``encode(texts)`` (zoo models get ``batch_size`` and a progress bar)."""
    if isinstance(encoder, (str, os.PathLike)):
        encoder = load_encoder(os.fspath(encoder), batch_size=batch_size, progress=progress)
    if not callable(getattr(encoder, "encode", None)):
        raise TypeError(f"{type(encoder).__name__} cannot encode texts: give a zoo spec or an object with encode().")

    def encode(texts: list[str]) -> np.ndarray:
        # zoo models take batch_size and a progress bar; suite encoders and plain objects only the texts
        options = supported(encoder.encode, {"batch_size": batch_size, "show_progress_bar": progress})
        vectors = encoder.encode(texts, **options)
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().float().cpu().numpy()
        vectors = np.asarray(vectors, dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    return encode


class PNTM:
    """Phrase-based neural topic model (see the module docstring).

    Args:
        encoder: what embeds documents and vocabulary: a zoo spec (``"phrase-bert-mini"``, an exported folder,
            ``"baseline:minilm-l6"``) or an object with ``encode``. Not needed to read topics of a loaded model.
        n_topics: K, the number of rows of the topic matrix.
        vocabulary: a :class:`~.corpus.Vocabulary` (or a list of terms) to describe topics with; by default it is
            mined from the documents given to :meth:`fit` (words + spaCy phrases).
        n_negatives: negative documents per document in the hinge loss (paper: 5).
        margin: hinge margin. orthogonality: weight of ``||R R^T - I||^2``. temperature: softmax temperature.
        epochs, batch_size, learning_rate: Adam over the topic matrix only (the encoder stays frozen).
        seed: initialisation and negative sampling.
        n_sentences: sentences added to a mined vocabulary for sentence-level topic reading.
        encode_batch_size, progress: encoding options.
    """

    def __init__(
        self,
        encoder: Any = None,
        n_topics: int = 20,
        vocabulary: Vocabulary | Sequence[str] | None = None,
        n_negatives: int = 5,
        margin: float = 1.0,
        orthogonality: float = 1.0,
        temperature: float = 0.1,
        epochs: int = 30,
        batch_size: int = 64,
        learning_rate: float = 1e-2,
        seed: int = 0,
        n_sentences: int = 0,
        encode_batch_size: int = 64,
        progress: bool = True,
    ):
        self.encoder = encoder
        self.n_topics = n_topics
        self.vocabulary = Vocabulary.from_terms(vocabulary) if isinstance(vocabulary, (list, tuple)) else vocabulary
        self.n_negatives = n_negatives
        self.margin = margin
        self.orthogonality = orthogonality
        self.temperature = temperature
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.seed = seed
        self.n_sentences = n_sentences
        self.encode_batch_size = encode_batch_size
        self.progress = progress
        self.network: TopicAutoencoder | None = None
        self.vocabulary_vectors: np.ndarray | None = None
        self.history: list[dict[str, float]] = []
        self._encode_fn: Callable[[list[str]], np.ndarray] | None = None

    # ------------------------------------------------------------------------------------------------- encoding
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors of ``texts`` from the model's encoder."""
        if self.encoder is None:
            raise ValueError("This PNTM has no encoder; pass encoder=... (e.g. PNTM.load(path, encoder=...)).")
        if self._encode_fn is None:
            self._encode_fn = as_encode_fn(self.encoder, self.encode_batch_size, self.progress)
        texts = list(texts)
        if not texts:
            raise ValueError("Nothing to encode: got an empty list of texts.")
        return self._encode_fn(texts)

    # ------------------------------------------------------------------------------------------------- training
    def fit(
        self,
        documents: Sequence[str],
        vocabulary: Vocabulary | Sequence[str] | None = None,
        document_vectors: np.ndarray | None = None,
        vocabulary_vectors: np.ndarray | None = None,
    ) -> PNTM:
        """Train on ``documents`` (strings). Precomputed ``document_vectors`` / ``vocabulary_vectors`` (unit rows, in
        the encoder's space) skip encoding, e.g. to train several K on one encoding."""
        documents = [d for d in documents if d and d.strip()]
        if len(documents) < 2:
            raise ValueError(f"PNTM needs at least two non-empty documents, got {len(documents)}.")
        if vocabulary is not None:
            self.vocabulary = Vocabulary.from_terms(vocabulary) if isinstance(vocabulary, (list, tuple)) else vocabulary
        if self.vocabulary is None:
            self.vocabulary = vocabulary_from_documents(documents, n_sentences=self.n_sentences, progress=self.progress)
        if len(self.vocabulary) == 0:
            raise ValueError("The vocabulary is empty: give more documents or a vocabulary.")
        x = _unit_rows(document_vectors) if document_vectors is not None else self.encode(documents)
        self.vocabulary_vectors = (
            _unit_rows(vocabulary_vectors) if vocabulary_vectors is not None else self.encode(self.vocabulary.terms)
        )
        if len(self.vocabulary_vectors) != len(self.vocabulary):
            raise ValueError("vocabulary_vectors must have one row per vocabulary term.")
        self._train(torch.from_numpy(x))
        return self

    def _train(self, x: torch.Tensor) -> None:
        torch_seed = torch.Generator().manual_seed(self.seed)
        self.network = TopicAutoencoder(x.shape[1], self.n_topics, self.temperature, self.seed)
        optimizer = torch.optim.Adam(self.network.parameters(), lr=self.learning_rate)
        n = x.shape[0]
        m = min(self.n_negatives, n - 1)
        self.history = []
        bar = tqdm(range(self.epochs), desc="PNTM epochs", disable=not self.progress)
        for epoch in bar:
            order = torch.randperm(n, generator=torch_seed)
            totals = {"hinge": 0.0, "orthogonality": 0.0}
            for start in range(0, n, self.batch_size):
                ids = order[start : start + self.batch_size]
                # negatives: random other documents (an offset in 1..n-1 never lands on the document itself)
                offsets = torch.randint(1, n, (len(ids), m), generator=torch_seed)
                negatives = x[(ids.unsqueeze(1) + offsets) % n]
                out = self.network(x[ids])
                hinge = contrastive_hinge_loss(out.reconstruction, x[ids], negatives, self.margin)
                ortho = orthogonality_penalty(self.network.topic_matrix())
                loss = hinge + self.orthogonality * ortho
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                totals["hinge"] += float(hinge.detach()) * len(ids) / n
                totals["orthogonality"] = float(ortho.detach())
            self.history.append({"epoch": epoch + 1, **totals})
            bar.set_postfix(hinge=f"{totals['hinge']:.3f}", ortho=f"{totals['orthogonality']:.3f}")

    # ------------------------------------------------------------------------------------------------ inference
    def _require_fit(self) -> TopicAutoencoder:
        if self.network is None:
            raise ValueError("This PNTM is not trained yet: call fit(documents) first (or PNTM.load(path)).")
        return self.network

    def transform(
        self, documents: Sequence[str] | None = None, document_vectors: np.ndarray | None = None
    ) -> np.ndarray:
        """Topic mixtures ``(n, K)`` of ``documents`` (or of precomputed ``document_vectors``)."""
        network = self._require_fit()
        if document_vectors is None:
            if not documents:
                raise ValueError("transform needs documents or document_vectors.")
            document_vectors = self.encode(list(documents))
        with torch.no_grad():
            return network(torch.from_numpy(_unit_rows(document_vectors))).mixture.numpy()

    def topic_vectors(self) -> np.ndarray:
        """The unit-length topic matrix ``R`` as ``(K, d)`` numpy."""
        with torch.no_grad():
            return self._require_fit().topic_matrix().numpy().copy()

    def topic_term_scores(self, kinds: Sequence[str] = ("word", "phrase")) -> tuple[np.ndarray, list[int]]:
        """Cosine of every topic with every vocabulary term of ``kinds``: ``(K, n_terms)`` and the term indices."""
        self._require_fit()
        if self.vocabulary is None or self.vocabulary_vectors is None:
            raise ValueError("This PNTM has no vocabulary vectors; fit it first.")
        ids = self.vocabulary.select(kinds)
        if not ids:
            raise ValueError(f"The vocabulary has no terms of kinds {list(kinds)}.")
        return self.topic_vectors() @ self.vocabulary_vectors[ids].T, ids

    def get_topics(self, top_n: int = 10, kinds: Sequence[str] = ("word", "phrase")) -> list[list[tuple[str, float]]]:
        """Per topic, its ``top_n`` nearest vocabulary terms of ``kinds`` with their cosine, best first."""
        scores, ids = self.topic_term_scores(kinds)
        topics = []
        for row in scores:
            top = np.argsort(-row, kind="stable")[:top_n]
            topics.append([(self.vocabulary.terms[ids[j]], float(row[j])) for j in top])
        return topics

    def get_topic(self, topic: int, top_n: int = 10, kinds: Sequence[str] = ("word", "phrase")):
        """The ``top_n`` terms of one topic (see :meth:`get_topics`)."""
        if not 0 <= topic < self.n_topics:
            raise ValueError(f"Topic {topic} does not exist; this model has topics 0..{self.n_topics - 1}.")
        return self.get_topics(top_n, kinds)[topic]

    def topic_sizes(self, mixtures: np.ndarray) -> np.ndarray:
        """Share of documents whose most probable topic is each topic, from ``transform`` output."""
        counts = np.bincount(np.asarray(mixtures).argmax(1), minlength=self.n_topics)
        return counts / max(1, counts.sum())

    # ---------------------------------------------------------------------------------------------- persistence
    def config(self) -> dict[str, Any]:
        encoder = os.fspath(self.encoder) if isinstance(self.encoder, (str, os.PathLike)) else None
        return {
            "encoder": encoder,
            "n_topics": self.n_topics,
            "n_negatives": self.n_negatives,
            "margin": self.margin,
            "orthogonality": self.orthogonality,
            "temperature": self.temperature,
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "learning_rate": self.learning_rate,
            "seed": self.seed,
            "n_sentences": self.n_sentences,
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write ``pntm.safetensors`` (topic matrix, vocabulary vectors) and ``pntm.json`` (settings, vocabulary,
        training history) into folder ``path``; each file is written aside and moved into place."""
        network = self._require_fit()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        document = {
            "format": "phrasezoo-pntm",
            "version": 1,
            "config": self.config(),
            "vocabulary": self.vocabulary.to_dict(),
            "history": self.history,
        }
        tensors = {
            "topics": network.topics.detach().clone().contiguous(),
            "vocabulary_vectors": torch.from_numpy(np.ascontiguousarray(self.vocabulary_vectors)),
        }
        tmp = Path(tempfile.mkdtemp(dir=path, prefix=".pntm-"))
        try:
            save_file(tensors, str(tmp / WEIGHTS_FILE))
            (tmp / CONFIG_FILE).write_text(json.dumps(document, indent=1))
            for name in (WEIGHTS_FILE, CONFIG_FILE):
                os.replace(tmp / name, path / name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, encoder: Any = None) -> PNTM:
        """Read a folder written by :meth:`save`. ``encoder`` overrides the saved encoder spec (needed for
        :meth:`transform` when the model was trained with an in-memory encoder)."""
        path = Path(path)
        if not (path / CONFIG_FILE).exists() or not (path / WEIGHTS_FILE).exists():
            raise FileNotFoundError(f"{path} holds no saved PNTM ({CONFIG_FILE} and {WEIGHTS_FILE} expected).")
        document = json.loads((path / CONFIG_FILE).read_text())
        if document.get("format") != "phrasezoo-pntm":
            raise ValueError(f"{path / CONFIG_FILE} is not a phrasezoo PNTM file.")
        config = dict(document["config"])
        saved_encoder = config.pop("encoder")
        model = cls(encoder=encoder if encoder is not None else saved_encoder, **config)
        tensors = load_file(str(path / WEIGHTS_FILE))
        model.vocabulary = Vocabulary.from_dict(document["vocabulary"])
        model.vocabulary_vectors = tensors["vocabulary_vectors"].numpy()
        model.network = TopicAutoencoder(tensors["topics"].shape[1], tensors["topics"].shape[0], model.temperature)
        with torch.no_grad():
            model.network.topics.copy_(tensors["topics"])
        model.history = document.get("history", [])
        return model


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2 or not np.isfinite(matrix).all():
        raise ValueError("Vectors must be a finite 2-D array (one row per text).")
    return np.ascontiguousarray(matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12))
