"""The PNTM network and its losses on hand-computed examples."""

from __future__ import annotations

import math

import pytest
import torch

from phrasezoo.methods.phrase_bert.pntm.model import TopicAutoencoder, contrastive_hinge_loss, orthogonality_penalty


def axis_model(temperature: float = 1.0) -> TopicAutoencoder:
    model = TopicAutoencoder(dim=4, n_topics=2, temperature=temperature)
    with torch.no_grad():
        model.topics.copy_(torch.tensor([[2.0, 0, 0, 0], [0, 3.0, 0, 0]]))  # rows are normalised on use
    return model


def test_mixture_is_a_softmax_against_the_normalised_topics():
    out = axis_model()(torch.tensor([[1.0, 0, 0, 0]]))
    p = math.e / (math.e + 1)
    torch.testing.assert_close(out.mixture, torch.tensor([[p, 1 - p]]))
    torch.testing.assert_close(out.reconstruction, torch.tensor([[p, 1 - p, 0, 0]]))
    sharp = axis_model(temperature=0.01)(torch.tensor([[1.0, 0, 0, 0]]))
    assert sharp.mixture[0, 0] > 0.999


def test_hinge_loss_sums_over_negatives():
    p = math.e / (math.e + 1)
    reconstruction = torch.tensor([[p, 1 - p, 0, 0]])
    document = torch.tensor([[1.0, 0, 0, 0]])
    negatives = torch.tensor([[[0.0, 1, 0, 0], [0, 0, 1, 0]]])
    expected = (1 - p + (1 - p)) + (1 - p)  # max(0, 1 - <r,x> + <r,n1>) + max(0, 1 - <r,x> + <r,n2>)
    assert contrastive_hinge_loss(reconstruction, document, negatives).item() == pytest.approx(expected, abs=1e-6)
    assert contrastive_hinge_loss(document, document, -negatives, margin=0.5).item() == 0.0


def test_orthogonality_penalty():
    assert orthogonality_penalty(torch.eye(3)).item() == 0.0
    same = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    assert orthogonality_penalty(same).item() == pytest.approx(2.0)  # two off-diagonal ones
    model = TopicAutoencoder(dim=8, n_topics=4, seed=1)
    assert orthogonality_penalty(model.topic_matrix()).item() == pytest.approx(0.0, abs=1e-10)  # orthogonal init


def test_bad_settings_raise():
    with pytest.raises(ValueError, match="temperature"):
        TopicAutoencoder(4, 2, temperature=0)
    with pytest.raises(ValueError, match="at least one topic"):
        TopicAutoencoder(4, 0)
