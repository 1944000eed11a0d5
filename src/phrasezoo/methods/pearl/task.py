"""PEARL's training task: batches and loss over its phrase table (the registry entry is in ``__init__``).

Training follows the paper (section 3.4) and the official code's choices listed in DESIGN.md:

* each anchor phrase gets one positive view from the augmentation mix (character / token / phrase level);
* two hard negatives per anchor (small edit distance, low cosine under the base encoder) join the batch;
* loss = NT-Xent (tau 0.07) of anchors against positives + hard negatives, plus the phrase-type cross-entropy on
  anchors and positives (both share the anchor's type);
* before that, the character encoder is pretrained LOVE-style to mimic word vectors (GloVe for the embedded
  default) from characters and word pieces, with typos of the words as extra inputs;
* at the end, weight averaging blends the phrase encoder with its pretrained weights (``training.weight_average``);
* optionally (``distill_weight > 0``, not in the paper), a teacher's similarities: the phrase encoder's cosine
  matrix over the batch is pulled towards all-mpnet-base-v2's
  (:func:`phrasezoo.objectives.losses.similarity_distillation`; the teacher embeds the phrases a run draws before its
  first step, see :mod:`phrasezoo.objectives.teacher`). With
  ``distill_words > 0`` the batch also holds up to that many words of each multiword anchor that the teacher knows
  (the phrase table's own one-word entries): they join the distillation matrix only (no NT-Xent, no type label), so
  the student learns how similar a phrase is to its own words, the confound of Turney's distractors;
* optionally (``lexicon_weight > 0``, not in the paper), the lexicon term: each step also draws WordNet words and
  their teacher neighbours, and the phrase encoder's ranking of them is pulled towards the teacher's
  (:mod:`phrasezoo.objectives.lexicon_distillation`);
* optionally (``teacher_guard``, not in the paper), the teacher is kept off the rows it would teach wrongly: when a
  row's positive is another name of its anchor (an alias) and the teacher ranks one of the row's hard negatives at or
  above it, that alias and those negatives leave the distillation matrix (issue 46, item 2:
  :func:`phrasezoo.objectives.terms.misranked_rows`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from phrasezoo.core.progress import progress_enabled
from phrasezoo.models.pearl.modeling_pearl import PearlModel, mean_pooling
from phrasezoo.objectives.distributed import gather_rows, unwrap_parallel, world_size
from phrasezoo.objectives.losses import info_nce
from phrasezoo.objectives.terms import TeacherTerms

from .char_pretrain import CHAR_PRETRAIN_DEFAULTS, pretrain_char_encoder


class PearlTask:
    """Batches and loss of PEARL training over a phrase dataset (see module docstring)."""

    averaged_prefixes = ("backbone.",)
    lora_modules_to_save = ["char_encoder", "type_head"]
    #: make_batch draws from its rng only: the GPU job may make batches ahead in worker processes
    batches_ahead = True

    def __init__(
        self,
        model: PearlModel,
        dataset,
        augment: Callable[[str, random.Random], str],
        word_noise: Callable[[str, random.Random], str],
        temperature: float = 0.07,
        hard_negatives: int = 2,
        type_loss_weight: float = 1.0,
        char_pretrain: dict[str, Any] | None = None,
        distill_words: int = 0,
        terms: TeacherTerms | None = None,
        facts: dict[str, Any] | None = None,
    ):
        terms = terms or TeacherTerms()
        if distill_words < 0:
            raise ValueError(f"distill_words must be >= 0, got {distill_words}.")
        if distill_words and not terms.distill_weight:
            raise ValueError("distill_words > 0 only feeds the teacher term: set distill_weight > 0 as well.")
        self.model = model
        self.phrases: list[str] = list(dataset["phrase"])
        self.type_ids: list[int] = list(dataset["type_id"])
        self.negatives: list[list[str]] = list(dataset["hard_negatives"])
        self.type_of = dict(zip(self.phrases, self.type_ids))
        self.augment = augment
        self.word_noise = word_noise
        self.temperature = temperature
        self.hard_negatives = hard_negatives
        self.type_loss_weight = type_loss_weight
        self.char_pretrain = {**CHAR_PRETRAIN_DEFAULTS, **(char_pretrain or {})}
        self.distill_words = distill_words
        self.terms = terms
        self._facts = facts or {}
        # another name of each phrase, for the teacher guard (read only when it is on: the column can be large)
        self.other_names: list[set[str]] = [set(p) for p in dataset["paraphrases"]] if terms.guard else []

    def num_examples(self) -> int:
        return len(self.phrases)

    def facts(self) -> dict[str, Any]:
        return {"training_phrases": len(self.phrases), **self._facts, **self.terms.facts()}

    def batch_texts(self, indices: list[int], rng: random.Random) -> tuple[list[str], list[int], int]:
        """``(texts, type ids, number of contrastive rows)`` of a batch: anchors, their views and hard negatives (and
        anchors' words with ``distill_words``), drawn from ``rng`` in that order."""
        anchors = [self.phrases[i] for i in indices]
        positives = [self.augment(self.phrases[i], rng) for i in indices]
        negatives: list[str] = []
        for i in indices:
            pool = self.negatives[i]
            negatives.extend(rng.sample(pool, min(self.hard_negatives, len(pool))))
        anchor_types = [self.type_ids[i] for i in indices]
        # hard negatives come from the phrase table, so their types are known too
        types = anchor_types + anchor_types + [self.type_of.get(n, -100) for n in negatives]
        texts = anchors + positives + negatives
        n_contrastive = len(texts)
        if self.distill_words:
            words = self.anchor_words(anchors, rng)
            texts += words
            types += [-100] * len(words)
        return texts, types, n_contrastive

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        texts, types, n_contrastive = self.batch_texts(indices, rng)
        batch = {
            "features": self.model.tokenize(texts),
            "texts": texts,
            "n_anchors": len(indices),
            "n_contrastive": n_contrastive,
            "type_ids": torch.tensor(types),
        }
        if self.terms.guard:
            batch["groups"] = self.name_groups(indices, texts)
        lexicon = self.terms.sample_lexicon(rng)  # drawn last: the rest of the batch is the one a run without it gets
        if lexicon is not None:
            ids, words = lexicon
            batch["lexicon_ids"] = ids
            batch["lexicon_features"] = self.model.tokenizer(
                words, padding=True, truncation=True, max_length=32, return_tensors="pt"
            )
        return batch

    def name_groups(self, indices: list[int], texts: list[str]) -> list[tuple[int, int, list[int]]]:
        """``(anchor, positive, hard negatives)`` batch positions of the rows whose positive view is another name of
        the anchor (an alias from the table's paraphrases, not a character or token edit): the rows the teacher
        guard judges (:func:`phrasezoo.objectives.terms.misranked_rows`)."""
        n, start, groups = len(indices), 2 * len(indices), []
        for i, index in enumerate(indices):
            count = min(self.hard_negatives, len(self.negatives[index]))
            negatives, start = list(range(start, start + count)), start + count
            if texts[n + i] != texts[i] and texts[n + i] in self.other_names[index]:
                groups.append((i, n + i, negatives))
        return groups

    def anchor_words(self, anchors: list[str], rng: random.Random) -> list[str]:
        """Up to ``distill_words`` words per multiword anchor that the teacher has a row for, drawn at random; no
        string twice in a batch (a repeated row would only add a trivial 1.0 to the similarity matrix)."""
        seen = set(anchors)
        out: list[str] = []
        for anchor in anchors:
            words = [w for w in dict.fromkeys(anchor.split()) if w in self.terms.teacher.index and w not in seen]
            if len(anchor.split()) < 2 or not words:
                continue
            for word in rng.sample(words, min(self.distill_words, len(words))):
                seen.add(word)
                out.append(word)
        return out

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        device = next(model.parameters()).device
        features = {k: v.to(device) for k, v in batch["features"].items()}
        out = model(**features)
        n, m = batch["n_anchors"], batch.get("n_contrastive", len(batch["texts"]))
        anchors, candidates = out.embeddings[:n], out.embeddings[n:m]
        type_logits, type_ids = out.type_logits, batch["type_ids"].to(device)
        if world_size() > 1:  # the global batch's anchors, positives and hard negatives (objectives.distributed)
            positives, negatives = gather_rows(out.embeddings[n : 2 * n]), gather_rows(out.embeddings[2 * n : m])
            anchors, candidates = gather_rows(anchors), torch.cat([positives, negatives])
            type_logits, type_ids = gather_rows(type_logits), gather_rows(type_ids)
        contrastive = info_nce(anchors, candidates, self.temperature)
        if bool((type_ids != -100).any()):
            type_loss = F.cross_entropy(type_logits, type_ids, ignore_index=-100)
        else:  # a batch of untyped rows only (alias rows): no type term, not a NaN
            type_loss = type_logits.sum() * 0.0
        loss = contrastive + self.type_loss_weight * type_loss
        logs = {"nt_xent": float(contrastive.detach()), "type_ce": float(type_loss.detach())}
        loss = self.terms.add_distillation(loss, logs, out.phrase_embeddings, batch["texts"], batch.get("groups"))
        if self.terms.lexicon is not None:
            features = {k: v.to(device) for k, v in batch["lexicon_features"].items()}
            hidden = unwrap_parallel(model).backbone(**features).last_hidden_state  # DDP's wrapper has no .backbone
            student = mean_pooling(hidden, features["attention_mask"])
            loss = self.terms.add_lexicon(loss, logs, student, batch["lexicon_ids"])
        return loss, logs

    def prefetch(self, steps) -> None:
        """Embed the teacher rows of the coming steps' texts (drawn as :meth:`make_batch` draws them) before the
        first step, in large batches, instead of a few in every step."""
        self.terms.prefetch(text for indices, rng in steps for text in self.batch_texts(indices, rng)[0])

    def pack_prepare(self, model: PearlModel) -> None:
        """For the GPU job (``phrasezoo device pack`` calls it on each seed's model before the weights are written):
        pretrain the character encoder here, where the word vectors are, so the machine's run starts from the
        pretrained encoder; :meth:`prepare` then has nothing left to do."""
        facts = pretrain_char_encoder(model, self.word_noise, self.char_pretrain, progress_enabled(True))
        self._facts.update({**facts, "char_pretrain": "before the run, where the pack was built"} if facts else {})
        self.char_pretrain = {**self.char_pretrain, "steps": 0}

    def prepare(self, model: PearlModel, accelerator) -> None:
        """Pretrain the character encoder to mimic word vectors (LOVE) before the main loop."""
        self._facts.update(
            pretrain_char_encoder(
                model, self.word_noise, self.char_pretrain, progress_enabled(accelerator.is_main_process)
            )
        )
