"""SLICE: span-aggregatable contextual token embeddings (Orbach, Haikin, David & Faizakof, 2024).

A SLICE model is a pretrained encoder, fully fine-tuned, with no head. Its final-layer token vectors are trained so
that the mean of the vectors of ANY word span of a passage, taken from one forward pass of the whole passage,
matches the mean vector of a query encoded on its own. Training (``phrasezoo.methods.slice``) maximises the best
span similarity in a passage that contains a paraphrase of the query against the best span of a passage that does
not (the paper's loss, :func:`span_pooling.slice_loss`). At inference the spans are aggregated at query time from
per-word prefix sums, which makes phrase mining in long texts one forward pass per passage instead of one per span.

This file is self-contained (standard library, torch, numpy, transformers and sibling files only) so that an
exported folder loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel
from transformers.utils import ModelOutput

from .configuration_slice import SliceConfig
from .span_pooling import (
    PassageBatch,
    best_span_similarity,
    masked_mean,
    passage_batch,
    slice_loss,
    span_similarities,
    word_prefix_sums,
)

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

__all__ = [
    "SliceModel",
    "SliceOutput",
    "PassageBatch",
    "best_span_similarity",
    "passage_batch",
    "slice_loss",
    "span_similarities",
    "word_prefix_sums",
]


@dataclass
class SliceOutput(ModelOutput):
    """Output of :meth:`SliceModel.forward`.

    Args:
        token_embeddings: final-layer token vectors ``(batch, tokens, hidden)``; spans are pooled from these.
        query_embedding: mean of the content-token vectors ``(batch, hidden)`` (special tokens and padding
            excluded), not normalised: what a text is as a query (``encode`` normalises it).
        content_mask: ``(batch, tokens)`` bool, the tokens that entered ``query_embedding``.
    """

    token_embeddings: torch.Tensor | None = None
    query_embedding: torch.Tensor | None = None
    content_mask: torch.Tensor | None = None


class SlicePreTrainedModel(PreTrainedModel):
    config_class = SliceConfig
    base_model_prefix = "slice"
    supports_gradient_checkpointing = True


class SliceModel(SlicePreTrainedModel):
    """SLICE encoder: ``encode`` for queries, token vectors whose span means are comparable with them."""

    def __init__(self, config: SliceConfig):
        super().__init__(config)
        try:
            self.backbone = AutoModel.from_config(config.backbone_config, add_pooling_layer=False)
        except TypeError:  # backbones without a pooler option
            self.backbone = AutoModel.from_config(config.backbone_config)
        self._tokenizer = None
        self.post_init()

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def from_backbone(cls, backbone: str, tokenizer=None, **config_kwargs) -> SliceModel:
        """A SLICE model holding the pretrained weights of ``backbone`` (path or Hub id), tokenizer attached.

        Before any SLICE training this is the plain backbone with SLICE pooling (the "base model" baseline).
        ``max_seq_length`` is capped at the backbone's position limit.
        """
        backbone_config = AutoConfig.from_pretrained(backbone)
        limit = getattr(backbone_config, "max_position_embeddings", None)
        if limit and config_kwargs.get("max_seq_length", 128) > limit:
            config_kwargs["max_seq_length"] = limit
        model = cls(SliceConfig(backbone_config=backbone_config, **config_kwargs))
        try:
            pretrained = AutoModel.from_pretrained(backbone, add_pooling_layer=False)
        except TypeError:
            pretrained = AutoModel.from_pretrained(backbone)
        missing, _ = model.backbone.load_state_dict(pretrained.state_dict(), strict=False)
        if missing:
            raise ValueError(f"Backbone {backbone} lacks weights for {missing[:5]}...")
        model.set_tokenizer(tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(backbone))
        return model

    def get_input_embeddings(self) -> nn.Module:
        return self.backbone.get_input_embeddings()

    # ------------------------------------------------------------------------------------------------- tokenizer
    @property
    def tokenizer(self):
        """The tokenizer, loaded lazily from the model's own folder (``name_or_path``) when none was set."""
        if self._tokenizer is None:
            source = self.name_or_path
            if not source:
                raise ValueError(
                    "This SliceModel has no tokenizer: pass one with model.set_tokenizer(tokenizer), or load the "
                    "model from a folder that contains tokenizer files."
                )
            # the backbone's config names the tokenizer type; without it AutoTokenizer would read this folder's
            # config.json, see its auto_map and ask whether to run custom code
            self._tokenizer = AutoTokenizer.from_pretrained(
                source, config=self.config.backbone_config, trust_remote_code=False
            )
        return self._tokenizer

    def set_tokenizer(self, tokenizer) -> None:
        """Attach a (fast) tokenizer; records its special-token ids in the config when none are recorded yet."""
        if not getattr(tokenizer, "is_fast", True):
            raise ValueError("SLICE needs a fast tokenizer (character offsets); load it with use_fast=True.")
        self._tokenizer = tokenizer
        if not self.config.special_token_ids:
            ids = {getattr(tokenizer, f"{name}_token_id", None) for name in ("cls", "sep", "pad", "bos", "eos")}
            self.config.special_token_ids = sorted(int(i) for i in ids if i is not None)

    def tokenize(self, texts: list[str], truncate: bool = True, max_length: int | None = None) -> dict:
        """Padded tokenizer tensors for ``texts`` (truncated at ``max_length`` or ``config.max_seq_length``)."""
        texts = _check_texts(texts)
        max_length = max_length or self.config.max_seq_length
        if not truncate:
            _raise_if_truncated(self.tokenizer, texts, max_length)
        encoding = self.tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        return {key: encoding[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoding}

    def passage_batch(self, passages: list[str], span_words: int | None = None, max_length: int | None = None):
        """:func:`span_pooling.passage_batch` with this model's tokenizer, limits and span unit."""
        return passage_batch(
            self.tokenizer, passages, max_length or self.config.max_seq_length, span_words, self.config.span_unit
        )

    # --------------------------------------------------------------------------------------------------- forward
    def content_mask(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Tokens that are text (not CLS/SEP/BOS/EOS/padding): what queries and spans pool."""
        mask = attention_mask.bool()
        special = self.config.special_token_ids
        if special:
            ids = torch.as_tensor(special, device=input_ids.device)
            return mask & ~torch.isin(input_ids, ids)
        # no ids recorded: drop the first and the last attended token (BERT-like [CLS] ... [SEP])
        positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        last = mask.long().sum(1, keepdim=True) - 1
        return mask & (positions > 0) & (positions < last)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        content_mask: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> SliceOutput:
        """Token vectors of one pass and the query vector (mean over content tokens, or over ``content_mask``)."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        hidden = self.backbone(**inputs).last_hidden_state
        if content_mask is None:
            content_mask = self.content_mask(input_ids, attention_mask)
        return SliceOutput(
            token_embeddings=hidden, query_embedding=masked_mean(hidden, content_mask), content_mask=content_mask
        )

    # ------------------------------------------------------------------------------------------------- inference
    def encode(
        self,
        texts: str | list[str],
        batch_size: int = 128,
        normalize: bool = True,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        device: str | torch.device | None = None,
        truncate: bool = True,
    ) -> np.ndarray | torch.Tensor:
        """Embed queries (or any text) as the mean of their content-token vectors, the pooling used in training.

        Returns ``(n, hidden)`` (``(hidden,)`` for a single string). Inputs are sorted by token length and batched
        (``batch_size``). Texts longer than ``config.max_seq_length`` tokens are truncated; ``truncate=False``
        raises instead. Empty lists, empty strings and non-strings raise ``ValueError``. ``show_progress_bar=None``
        shows one for more than 10 batches.
        """
        single = isinstance(texts, str)
        texts = _check_texts([texts] if single else texts)
        if not truncate:
            _raise_if_truncated(self.tokenizer, texts, self.config.max_seq_length)
        order = _length_order(self.tokenizer, texts, self.config.max_seq_length)
        device = self._move_to(device)
        chunks = []
        batches = range(0, len(texts), batch_size)
        show = show_progress_bar if show_progress_bar is not None else len(batches) > 10
        with _eval_mode(self), torch.inference_mode():
            for start in _progress(batches, show, "Encoding"):
                batch = [texts[i] for i in order[start : start + batch_size]]
                features = {k: v.to(device) for k, v in self.tokenize(batch).items()}
                vectors = self(**features).query_embedding.float()
                if normalize:
                    vectors = F.normalize(vectors, dim=-1)
                chunks.append(vectors.cpu())
        embeddings = torch.empty((len(texts), chunks[0].shape[1]), dtype=torch.float32)
        embeddings[torch.as_tensor(order)] = torch.cat(chunks)
        if single:
            embeddings = embeddings[0]
        return embeddings.numpy() if convert_to_numpy else embeddings

    def _move_to(self, device) -> torch.device:
        device = torch.device(device) if device is not None else self.device
        if device != self.device:
            self.to(device)
        return device

    def training_loss(self, cos_true: torch.Tensor, cos_false: torch.Tensor) -> torch.Tensor:
        """The paper's loss with this model's lambda (``config.similarity_scale``)."""
        return slice_loss(cos_true, cos_false, self.config.similarity_scale)


# ------------------------------------------------------------------------------------------------------- helpers
class _eval_mode:
    """Context manager: eval mode inside, the previous mode restored after."""

    def __init__(self, model: nn.Module):
        self.model, self.was_training = model, model.training

    def __enter__(self):
        self.model.eval()

    def __exit__(self, *exc):
        if self.was_training:
            self.model.train()


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise ValueError(f"Expected a list of strings, got {type(texts).__name__}.")
    if len(texts) == 0:
        raise ValueError("Expected at least one text, got an empty list.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"Text {i} is a {type(text).__name__}, not a string: {text!r}.")
        if not text.strip():
            raise ValueError(f"Text {i} is empty or only whitespace; every text needs at least one character.")
    return list(texts)


def _length_order(tokenizer, texts: list[str], max_length: int) -> list[int]:
    """Indices of ``texts`` sorted by token count (longest first), so that batches need little padding."""
    lengths = [
        len(ids)
        for ids in tokenizer(texts, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
    ]
    return sorted(range(len(texts)), key=lambda i: -lengths[i])


def _raise_if_truncated(tokenizer, texts: list[str], max_length: int) -> None:
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]]
    too_long = [i for i, n in enumerate(lengths) if n > max_length]
    if too_long:
        raise ValueError(
            f"{len(too_long)} text(s) exceed max_seq_length={max_length} tokens (first: index {too_long[0]}, "
            f"{lengths[too_long[0]]} tokens). Shorten them or call encode(..., truncate=True) to truncate."
        )


def _progress(iterable, show: bool, desc: str):
    if show and tqdm is not None and not os.environ.get("PHRASEZOO_NO_PROGRESS"):
        return tqdm(iterable, desc=desc)
    return iterable


SliceConfig.register_for_auto_class()
SliceModel.register_for_auto_class("AutoModel")
