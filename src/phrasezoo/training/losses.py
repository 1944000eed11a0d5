"""Contrastive losses of the zoo, as small documented functions (sentence-transformers style)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def nt_xent(anchors: torch.Tensor, candidates: torch.Tensor, temperature: float) -> torch.Tensor:
    """NT-Xent / InfoNCE: anchor ``i``'s positive is candidate ``i``; every other candidate is a negative.

    ``anchors (n, d)`` and ``candidates (m, d)`` with ``m >= n`` are L2-normalised; candidates beyond ``n`` are
    extra negatives shared by all anchors (PEARL's hard negatives, UCTopic's other-cluster phrases).
    """
    if candidates.shape[0] < anchors.shape[0]:
        raise ValueError("nt_xent needs at least one candidate (the positive) per anchor.")
    logits = anchors @ candidates.T / temperature
    labels = torch.arange(anchors.shape[0], device=anchors.device)
    return F.cross_entropy(logits, labels)


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float = 1.0):
    """Triplet loss with Euclidean distance: ``max(0, |a - p| - |a - n| + margin)`` (Phrase-BERT)."""
    return F.relu(F.pairwise_distance(anchor, positive) - F.pairwise_distance(anchor, negative) + margin).mean()
