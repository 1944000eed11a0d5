"""UCTopic's pretraining task: mention batches and the contrastive loss (the registry entry is in ``__init__``).

Pretraining follows the paper (section 3.1, 4.1) and its official code:

* an example is a phrase mention (sentence + character span); its positive is a mention of the same phrase in a
  *different* sentence (:mod:`phrasezoo.methods.uctopic.data` groups mentions by hyperlink target, entity text or noun-phrase
  lemma);
* the mention is replaced by mask tokens in the anchor, always, and in the positive with probability
  ``1 - keep_mention_probability`` (0.5 in the paper), so the model must read the context;
* InfoNCE with in-batch negatives, temperature 0.05, on the L2-normalised outputs of the MLP head. Another pair of the
  same phrase in the batch is not used as a negative (a known false negative on a small corpus);
* optionally a masked-language-model loss on separately masked copies of both sentences (``mlm_weight``);
* optionally (``lexicon_weight > 0``, not in the paper), the lexicon term: each step also draws WordNet words and
  their teacher neighbours, each embedded as a phrase without context, and the span vectors' ranking of them is
  pulled towards the teacher's (:mod:`phrasezoo.objectives.lexicon_distillation`).

CCL finetuning (section 3.2) is in :mod:`.ccl` (used by topic mining and the CCL evaluation tasks).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import torch

from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.objectives.distributed import gather_rows, world_size
from phrasezoo.objectives.losses import info_nce
from phrasezoo.objectives.terms import TeacherTerms


def mask_tokens(
    sequences: list[list[int]],
    special: list[list[bool]],
    rng: random.Random,
    mask_id: int,
    vocab_size: int,
    probability: float = 0.15,
) -> tuple[list[list[int]], list[list[int]]]:
    """BERT's MLM corruption: each non-special token is picked with ``probability``; a picked token becomes the mask
    token (80%), a random token (10%) or stays (10%); labels are the original ids at picked positions, else -100."""
    inputs, labels = [], []
    for ids, is_special in zip(sequences, special):
        corrupted, target = list(ids), [-100] * len(ids)
        for position, token in enumerate(ids):
            if is_special[position] or rng.random() >= probability:
                continue
            target[position] = token
            roll = rng.random()
            if roll < 0.8:
                corrupted[position] = mask_id
            elif roll < 0.9:
                corrupted[position] = rng.randrange(vocab_size)
        inputs.append(corrupted)
        labels.append(target)
    return inputs, labels


def positive_candidates(keys: Sequence[str], sentence_ids: Sequence[int]) -> list[list[int]]:
    """For every mention, the indices of the other mentions of its phrase that are in a different sentence."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        by_key[key].append(index)
    return [[j for j in by_key[key] if sentence_ids[j] != sentence_ids[i]] for i, key in enumerate(keys)]


class UCTopicTask:
    """Batches and loss of UCTopic pretraining over a mention dataset (see the module docstring)."""

    averaged_prefixes = ("backbone.",)
    lora_modules_to_save = ["mlp"]

    def __init__(
        self,
        model: UCTopicModel,
        dataset,
        temperature: float = 0.05,
        keep_mention_probability: float = 0.5,
        mlm_weight: float = 0.0,
        mlm_probability: float = 0.15,
        max_seq_length: int | None = None,
        terms: TeacherTerms | None = None,
        facts: dict[str, Any] | None = None,
    ):
        if mlm_weight and model.lm_head is None:
            raise ValueError("mlm_weight > 0 needs an MLM head: set model.use_mlm_head: true in the recipe.")
        self.model = model
        self.mentions = list(zip(dataset["sentence"], zip(dataset["start"], dataset["end"])))
        self.keys: list[str] = list(dataset["key"])
        self.key_ids = {key: i for i, key in enumerate(dict.fromkeys(self.keys))}  # the same on every process
        self.candidates = positive_candidates(self.keys, list(dataset["sentence_id"]))
        self.anchors = [i for i, candidates in enumerate(self.candidates) if candidates]
        if not self.anchors:
            raise ValueError("No phrase occurs in two different sentences: UCTopic has no positive pair to train on.")
        self.temperature = temperature
        self.keep_mention_probability = keep_mention_probability
        self.mlm_weight = mlm_weight
        self.mlm_probability = mlm_probability
        self.max_seq_length = max_seq_length
        self.terms = terms or TeacherTerms()
        self._facts = facts or {}

    def num_examples(self) -> int:
        return len(self.anchors)

    def facts(self) -> dict[str, Any]:
        return {
            "training mentions (anchors)": len(self.anchors),
            "phrases": len(set(self.keys)),
            "temperature": self.temperature,
            "keep mention in positive (p)": self.keep_mention_probability,
            "MLM weight": self.mlm_weight,
            **self._facts,
            **self.terms.facts(),
        }

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        anchors = [self.anchors[i] for i in indices]
        positives = [rng.choice(self.candidates[a]) for a in anchors]
        keep = [rng.random() < self.keep_mention_probability for _ in positives]
        mentions = [self.mentions[i] for i in anchors + positives]
        flags = [True] * len(anchors) + [not k for k in keep]
        prepared = self.model.prepare_mentions(mentions, mask_mention=flags, max_seq_length=self.max_seq_length)
        features = self.model.collate(prepared)
        keys = [self.keys[i] for i in anchors]
        same_phrase = torch.tensor([[a == b for b in keys] for a in keys], dtype=torch.bool)
        phrase_ids = torch.tensor([self.key_ids[key] for key in keys], dtype=torch.long)
        batch = {"features": features, "n_anchors": len(anchors), "same_phrase": same_phrase, "phrase_ids": phrase_ids}
        if self.mlm_weight:
            plain = self.model.prepare_mentions(mentions, mask_mention=False, max_seq_length=self.max_seq_length)
            tokenizer = self.model.tokenizer
            specials = set(tokenizer.all_special_ids)
            sequences = [p.input_ids for p in plain]
            inputs, labels = mask_tokens(
                sequences, [[t in specials for t in s] for s in sequences], rng, tokenizer.mask_token_id,
                self.model.config.backbone_config.vocab_size, self.mlm_probability,
            )  # fmt: skip
            padded = self.model._collate(inputs, [(row, 0, 1) for row in range(len(inputs))])["input_ids"]
            label_tensor = torch.full_like(padded, -100)
            for row, row_labels in enumerate(labels):
                label_tensor[row, : len(row_labels)] = torch.tensor(row_labels)
            features["mlm_input_ids"] = padded
            features["mlm_labels"] = label_tensor
        lexicon = self.terms.sample_lexicon(rng)  # drawn last: the mention batch stays the one a run without it gets
        if lexicon is not None:
            ids, words = lexicon
            batch["lexicon_ids"] = ids
            batch["lexicon_features"] = self.model.collate(self.model.prepare_mentions(words, mask_mention=False))
        return batch

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        device = next(model.parameters()).device
        features = {k: v.to(device) for k, v in batch["features"].items()}
        out = model(**features)
        n = batch["n_anchors"]
        anchors, positives = out.embeddings[:n], out.embeddings[n:]
        # InfoNCE with in-batch negatives (the paper's eq. 2), in float32; other mentions of the same phrase are
        # not negatives. Several processes: over the global batch (phrasezoo.objectives.distributed)
        all_anchors, all_positives, same_phrase = anchors, positives, batch["same_phrase"].to(device)
        if world_size() > 1:
            all_anchors, all_positives = gather_rows(anchors), gather_rows(positives)
            phrase_ids = gather_rows(batch["phrase_ids"].to(device))
            same_phrase = phrase_ids[:, None] == phrase_ids[None, :]
        contrastive = info_nce(all_anchors.float(), all_positives.float(), self.temperature, same_phrase)
        loss = contrastive
        logs = {"info_nce": float(contrastive.detach())}
        with torch.no_grad():
            logs["pair_accuracy"] = float(
                ((anchors.float() @ positives.float().T).argmax(1) == torch.arange(n, device=device)).float().mean()
            )
        if self.mlm_weight:
            loss = loss + self.mlm_weight * out.loss
            logs["mlm"] = float(out.loss.detach())
        if self.terms.lexicon is not None:
            # the span vector (before the MLP head): what the model embeds with under mlp_only_train
            lexicon_out = model(**{k: v.to(device) for k, v in batch["lexicon_features"].items()})
            loss = self.terms.add_lexicon(loss, logs, lexicon_out.span_states, batch["lexicon_ids"])
        return loss, logs

    def prepare(self, model, accelerator) -> None:
        """Nothing to pretrain before the main loop."""
