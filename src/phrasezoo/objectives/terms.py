"""The teacher's terms in a training loss: similarity distillation and the lexicon term, with their weights.

A training task holds one :class:`TeacherTerms` instead of copying the teacher's fields, its look-ahead and its facts
(issue 45). The task still decides what the student vectors are (a phrase encoder's embeddings, span states) and how
the lexicon's words are tokenized; this object adds the weighted terms to the loss and logs them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from phrasezoo.objectives.distributed import gather_rows
from phrasezoo.objectives.losses import similarity_distillation

#: ``training.method_args`` keys the terms read (the rest goes to the method's task)
TERM_ARGS = ("distill_weight", "teacher", "teacher_guard", "lexicon_weight", "lexicon")


#: ``(anchor, positive, hard negatives)``: batch positions of one training row's texts
Group = tuple[int, int, Sequence[int]]


def misranked_rows(rows: torch.Tensor, found: torch.Tensor, groups: Sequence[Group]) -> torch.Tensor:
    """A bool mask over ``rows``: the positive and the hard negatives of each group whose teacher cosine to the
    anchor is at least as high for some negative as for the positive. A group whose anchor or positive the teacher
    does not know, or with no known negative, is kept."""
    off = torch.zeros(len(rows), dtype=torch.bool)
    unit = torch.nn.functional.normalize(rows.float(), dim=-1)
    for anchor, positive, negatives in groups:
        known = [j for j in negatives if found[j]]
        if not known or not (found[anchor] and found[positive]):
            continue
        if (unit[known] @ unit[anchor]).max() >= unit[positive] @ unit[anchor]:
            off[positive] = True
            off[known] = True
    return off


@dataclass
class TeacherTerms:
    """``distill_weight`` x similarity distillation against ``teacher`` (a
    :class:`~phrasezoo.objectives.teacher.TeacherEmbeddings`) and ``lexicon_weight`` x the lexicon term ``lexicon``
    (a :class:`~phrasezoo.objectives.lexicon_distillation.LexiconDistillation`); a zero weight turns a term off.

    ``guard``: the teacher is kept off the rows it would teach wrongly. A task that passes ``groups`` to
    :meth:`add_distillation` (an anchor, its positive view and its hard negatives, as batch positions) gets the
    positive and the negatives of every group whose teacher ranks a negative at or above the positive left out of the
    distillation matrix (:func:`misranked_rows`), so a teacher that puts "World Trade Organization" nearer "WHO" than
    "World Health Organization" does not pull the student its way (issue 46, item 2)."""

    distill_weight: float = 0.0
    teacher: Any = None
    lexicon_weight: float = 0.0
    lexicon: Any = None
    guard: bool = False

    def __post_init__(self) -> None:
        if self.distill_weight and self.teacher is None:
            raise ValueError(
                "distill_weight > 0 needs teacher embeddings (phrasezoo.objectives.teacher.teacher_embeddings)."
            )
        if self.lexicon_weight and not hasattr(self.lexicon, "sample"):
            raise ValueError("lexicon_weight > 0 needs the lexicon term (phrasezoo.objectives.lexicon_distillation).")
        if not self.lexicon_weight:
            self.lexicon = None

    def facts(self) -> dict[str, Any]:
        """The lexicon term's facts for the model card (the teacher's own line is a fact of the assembly)."""
        return self.lexicon.facts() if self.lexicon is not None else {}

    def prefetch(self, texts: Iterable[str]) -> None:
        """Embed the teacher rows of ``texts`` (the coming steps' draws) before the first step, in large batches.

        ``texts`` may be a lazy generator: it is only read when the distillation term is on."""
        if self.distill_weight and hasattr(self.teacher, "prefetch"):
            self.teacher.prefetch(texts)

    def sample_lexicon(self, rng: random.Random) -> tuple[list[int], list[str]] | None:
        """A lexicon batch ``(ids, words)`` drawn from ``rng``, or ``None`` when the term is off. Tasks draw it last,
        so the rest of a batch is the one a run without the term gets."""
        return self.lexicon.sample(rng) if self.lexicon is not None else None

    def add_distillation(
        self,
        loss: torch.Tensor,
        logs: dict[str, float],
        student: torch.Tensor,
        texts: Sequence[str],
        groups: Sequence[Group] | None = None,
    ) -> torch.Tensor:
        """``loss`` plus the weighted distillation of ``student``'s similarity matrix over ``texts``: over the
        global batch when several processes train (:mod:`phrasezoo.objectives.distributed`). With ``guard`` on,
        the rows :func:`misranked_rows` finds in ``groups`` are left out (decided per process, before the gather)."""
        if not self.distill_weight:
            return loss
        rows, found = self.teacher.lookup(texts)
        if self.guard and groups:
            off = misranked_rows(rows, found, groups)
            found = found & ~off
            logs["teacher_off"] = float(off.sum()) / max(1, len(texts))
        rows, found = gather_rows(rows.to(student.device)), gather_rows(found.to(student.device))
        distill = similarity_distillation(gather_rows(student), rows, found)
        logs["distill"] = float(distill.detach())
        return loss + self.distill_weight * distill

    def add_lexicon(
        self, loss: torch.Tensor, logs: dict[str, float], student: torch.Tensor, ids: Sequence[int]
    ) -> torch.Tensor:
        """``loss`` plus the weighted lexicon term of ``student`` (the vectors of the words of ``ids``). Each process
        draws its own lexicon batch, so the term stays a local mean (DDP averages it)."""
        lexicon = self.lexicon.loss(student, ids)
        logs["lexicon"] = float(lexicon.detach())
        return loss + self.lexicon_weight * lexicon
