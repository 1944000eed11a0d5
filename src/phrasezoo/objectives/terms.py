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
TERM_ARGS = ("distill_weight", "teacher", "lexicon_weight", "lexicon")


@dataclass
class TeacherTerms:
    """``distill_weight`` x similarity distillation against ``teacher`` (a
    :class:`~phrasezoo.objectives.teacher.TeacherEmbeddings`) and ``lexicon_weight`` x the lexicon term ``lexicon``
    (a :class:`~phrasezoo.objectives.lexicon_distillation.LexiconDistillation`); a zero weight turns a term off."""

    distill_weight: float = 0.0
    teacher: Any = None
    lexicon_weight: float = 0.0
    lexicon: Any = None

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
        self, loss: torch.Tensor, logs: dict[str, float], student: torch.Tensor, texts: Sequence[str]
    ) -> torch.Tensor:
        """``loss`` plus the weighted distillation of ``student``'s similarity matrix over ``texts``: over the
        global batch when several processes train (:mod:`phrasezoo.objectives.distributed`)."""
        if not self.distill_weight:
            return loss
        rows, found = self.teacher.lookup(texts)
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
