"""The zoo's training losses, written once (sentence-transformers style): InfoNCE / NT-Xent, the triplet loss, and
relational (similarity-matrix) and listwise (neighbourhood ranking) distillation from a teacher.

Used by PEARL (NT-Xent with hard negatives), UCTopic (InfoNCE with in-batch negatives and a false-negative mask),
topic mining's CCL finetuning and Phrase-BERT (triplet).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def info_nce(
    anchors: torch.Tensor,
    candidates: torch.Tensor,
    temperature: float,
    ignore: torch.Tensor | None = None,
) -> torch.Tensor:
    """InfoNCE / NT-Xent: anchor ``i``'s positive is candidate ``i``; every other candidate is a negative.

    ``anchors (n, d)`` and ``candidates (m, d)`` with ``m >= n`` are L2-normalised; candidates beyond ``n`` are
    extra negatives shared by all anchors (PEARL's hard negatives, CCL's other-cluster phrases). ``ignore (n, m)``
    (bool) drops candidates from an anchor's softmax (known false negatives, e.g. another mention of the same
    phrase); an anchor's own positive is never dropped. Computed in the inputs' dtype: pass ``.float()`` inputs
    for a float32 loss under autocast.
    """
    if candidates.shape[0] < anchors.shape[0]:
        raise ValueError("info_nce needs at least one candidate (the positive) per anchor.")
    logits = anchors @ candidates.T / temperature
    if ignore is not None:
        n = anchors.shape[0]
        own = torch.zeros(ignore.shape, dtype=torch.bool, device=ignore.device)
        own[torch.arange(n), torch.arange(n)] = True
        logits = logits.masked_fill((ignore & ~own).to(logits.device), float("-inf"))
    labels = torch.arange(anchors.shape[0], device=anchors.device)
    return F.cross_entropy(logits, labels)


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float = 1.0):
    """Triplet loss with Euclidean distance: ``max(0, |a - p| - |a - n| + margin)`` (Phrase-BERT)."""
    return F.relu(F.pairwise_distance(anchor, positive) - F.pairwise_distance(anchor, negative) + margin).mean()


def listwise_distillation(student: torch.Tensor, teacher: torch.Tensor, temperature: float = 0.05) -> torch.Tensor:
    """KL divergence from the teacher's to the student's softmax over each row's similarities to the other rows.

    Each string of the batch ranks every other string; the student learns the teacher's ranking, not its cosine
    scale (a 384-d and a 768-d encoder spread their cosines differently). Batches built from teacher
    neighbourhoods (:mod:`phrasezoo.objectives.lexicon_distillation`) make the ranking a fine one ("contrabass" closer to
    "double bass" than to "cello"). ``student (n, d_s)`` and ``teacher (n, d_t)`` are normalised here; the
    diagonal is left out; float32.
    """
    if student.shape[0] != teacher.shape[0]:
        raise ValueError(f"student and teacher need the same rows, got {student.shape[0]} and {teacher.shape[0]}.")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}.")
    n = student.shape[0]
    if n < 3:  # a row needs two others to rank
        return student.sum() * 0.0
    s = F.normalize(student.float(), dim=-1)
    t = F.normalize(teacher.float().to(s.device), dim=-1)
    diagonal = torch.eye(n, dtype=torch.bool, device=s.device)
    student_logits = (s @ s.T / temperature).masked_fill(diagonal, -1e4)
    teacher_logits = (t @ t.T / temperature).masked_fill(diagonal, -1e4)
    return F.kl_div(
        F.log_softmax(student_logits, dim=-1),
        F.log_softmax(teacher_logits, dim=-1),
        log_target=True,
        reduction="batchmean",
    )


def similarity_distillation(
    student: torch.Tensor,
    teacher: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean squared difference between the student's and the teacher's cosine-similarity matrices of one batch.

    Relational distillation: ``student (n, d_s)`` and ``teacher (n, d_t)`` may have different widths, because only
    the ``n x n`` similarities are compared (the diagonal, always 1, is left out). Rows are L2-normalised here.
    ``mask (n,)`` (bool) keeps the rows that have a teacher vector. Computed in float32.
    """
    if student.shape[0] != teacher.shape[0]:
        raise ValueError(f"student and teacher need the same rows, got {student.shape[0]} and {teacher.shape[0]}.")
    if mask is not None:
        student, teacher = student[mask], teacher[mask]
    n = student.shape[0]
    if n < 2:
        return student.sum() * 0.0
    s = F.normalize(student.float(), dim=-1)
    t = F.normalize(teacher.float().to(s.device), dim=-1)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=s.device)
    return ((s @ s.T - t @ t.T)[off_diagonal] ** 2).mean()
