"""The PNTM network: a dictionary autoencoder over frozen document embeddings (paper, section 6.1.1).

A document vector ``x`` is scored against the K rows of a topic matrix ``R`` (rows L2-normalised, as in the released
code), the scores go through a softmax into a topic mixture ``d``, and the reconstruction is ``r = d R``. Training
pushes ``r`` towards ``x`` and away from randomly sampled other documents with a hinge loss on inner products
(cosines here, since all vectors are unit length):

    L = sum_j max(0, margin - <r, x> + <r, n_j>) + lambda * ||R R^T - I||_F^2

with ``j`` over ``n_negatives`` negative documents (5 in the paper) and the orthogonality penalty of Iyyer et al.
(2016) discouraging duplicate topics. Deviation: the softmax divides the scores by a ``temperature``. The paper
scores raw BERT document vectors, whose norms (5-10) sharpen the softmax; zoo encoders return unit vectors, whose
cosines in [-1, 1] would give an almost uniform mixture, so the temperature restores that scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class TopicModelOutput:
    """``mixture (n, K)`` topic distribution of each document and its ``reconstruction (n, d)``."""

    mixture: torch.Tensor
    reconstruction: torch.Tensor


class TopicAutoencoder(nn.Module):
    """``K`` topic embeddings over a ``dim``-dimensional document space, initialised (semi-)orthogonal."""

    def __init__(self, dim: int, n_topics: int, temperature: float = 0.1, seed: int = 0):
        super().__init__()
        if n_topics < 1 or dim < 1:
            raise ValueError(f"Need at least one topic and one dimension, got n_topics={n_topics}, dim={dim}.")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}.")
        self.temperature = temperature
        generator = torch.Generator().manual_seed(seed)
        topics = torch.empty(n_topics, dim)
        nn.init.orthogonal_(topics, generator=generator)
        self.topics = nn.Parameter(topics)

    @property
    def n_topics(self) -> int:
        return self.topics.shape[0]

    def topic_matrix(self) -> torch.Tensor:
        """``R`` with unit-length rows, ``(K, dim)``."""
        return F.normalize(self.topics, dim=-1)

    def forward(self, documents: torch.Tensor) -> TopicModelOutput:
        """Topic mixtures and reconstructions of unit-length document vectors ``(n, dim)``."""
        topics = self.topic_matrix()
        mixture = torch.softmax(documents @ topics.T / self.temperature, dim=-1)
        return TopicModelOutput(mixture=mixture, reconstruction=mixture @ topics)


def contrastive_hinge_loss(
    reconstruction: torch.Tensor, documents: torch.Tensor, negatives: torch.Tensor, margin: float = 1.0
) -> torch.Tensor:
    """``mean_i sum_j max(0, margin - <r_i, x_i> + <r_i, n_ij>)`` for ``r, x (n, d)`` and ``negatives (n, m, d)``."""
    positive = (reconstruction * documents).sum(-1, keepdim=True)
    negative = torch.einsum("nd,nmd->nm", reconstruction, negatives)
    return F.relu(margin - positive + negative).sum(-1).mean()


def orthogonality_penalty(topics: torch.Tensor) -> torch.Tensor:
    """``||R R^T - I||_F^2`` for a topic matrix ``R (K, d)``."""
    gram = topics @ topics.T
    return ((gram - torch.eye(topics.shape[0], device=topics.device, dtype=topics.dtype)) ** 2).sum()
