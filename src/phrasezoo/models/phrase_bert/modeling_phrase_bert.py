"""Phrase-BERT: phrase embeddings from BERT fine-tuned with two contrastive objectives (Wang et al., EMNLP 2021).

The model is deliberately plain: a pretrained transformer whose final-layer token states are averaged (masked mean
pooling, special tokens included as in Sentence-BERT). What makes it Phrase-BERT is its training (see
``phrasezoo.methods.phrase_bert``): a triplet loss with Euclidean distance on (phrase, lexically diverse paraphrase,
paraphrase of a corrupted phrase) and on (phrase, a context where the phrase is masked, a random context). The same
``encode`` serves words, phrases and sentences, which is what the phrase-based topic model (PNTM) relies on: its
documents, topics and vocabulary live in one space.

This file is self-contained (standard library, torch, numpy, transformers and its sibling configuration file only)
so that an exported folder loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.
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
from transformers.utils import logging as hf_logging

from .configuration_phrase_bert import PhraseBertConfig

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None


@dataclass
class PhraseBertOutput(ModelOutput):
    """Output of :meth:`PhraseBertModel.forward`.

    Args:
        embeddings: L2-normalised mean-pooled vectors, ``(batch, hidden)`` (what ``encode`` returns).
        pooled_embeddings: mean-pooled vectors before normalisation, ``(batch, hidden)`` (what the paper's triplet
            loss compares with Euclidean distance).
        last_hidden_state: token states of the final layer, ``(batch, tokens, hidden)``.
    """

    embeddings: torch.Tensor | None = None
    pooled_embeddings: torch.Tensor | None = None
    last_hidden_state: torch.Tensor | None = None


def mean_pooling(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the token states where ``mask`` is 1."""
    mask = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class PhraseBertPreTrainedModel(PreTrainedModel):
    config_class = PhraseBertConfig
    base_model_prefix = "phrase_bert"
    supports_gradient_checkpointing = True


class PhraseBertModel(PhraseBertPreTrainedModel):
    """Phrase-BERT encoder: ``encode`` embeds words, phrases and sentences into one space."""

    def __init__(self, config: PhraseBertConfig):
        super().__init__(config)
        try:
            self.backbone = AutoModel.from_config(config.backbone_config, add_pooling_layer=False)
        except TypeError:  # backbones without a pooler option
            self.backbone = AutoModel.from_config(config.backbone_config)
        self._tokenizer = None
        self.post_init()

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def from_backbone(cls, backbone: str, **config_kwargs) -> PhraseBertModel:
        """A Phrase-BERT model holding the pretrained weights of ``backbone`` (path or Hub id), tokenizer attached.

        ``max_seq_length`` is capped at the backbone's position limit.
        """
        backbone_config = AutoConfig.from_pretrained(backbone)
        limit = getattr(backbone_config, "max_position_embeddings", None)
        if limit and config_kwargs.get("max_seq_length", 256) > limit:
            config_kwargs["max_seq_length"] = limit
        model = cls(PhraseBertConfig(backbone_config=backbone_config, **config_kwargs))
        pretrained = _pretrained_backbone(backbone)
        missing, _ = model.backbone.load_state_dict(pretrained.state_dict(), strict=False)
        if missing:
            raise ValueError(f"Backbone {backbone} lacks weights for {missing[:5]}...")
        model.set_tokenizer(AutoTokenizer.from_pretrained(backbone))
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
                    "This PhraseBertModel has no tokenizer: pass one with model.set_tokenizer(tokenizer), or load "
                    "the model from a folder that contains tokenizer files."
                )
            # the backbone's config names the tokenizer type; without it AutoTokenizer would read this folder's
            # config.json, see its auto_map and ask interactively whether to run custom code
            self._tokenizer = AutoTokenizer.from_pretrained(
                source, config=self.config.backbone_config, trust_remote_code=False
            )
        return self._tokenizer

    def set_tokenizer(self, tokenizer) -> None:
        self._tokenizer = tokenizer

    @property
    def mask_token(self) -> str:
        """The tokenizer's mask token (``[MASK]`` for BERT), which replaces the phrase in training contexts."""
        token = self.tokenizer.mask_token
        if token is None:
            raise ValueError("The tokenizer has no mask token; Phrase-BERT's context objective needs one.")
        return token

    def tokenize(self, texts: list[str], truncate: bool = True) -> dict[str, torch.Tensor]:
        """Padded tokenizer tensors for ``texts`` (truncated at ``config.max_seq_length``, or raising)."""
        texts = _check_texts(texts)
        if not truncate:
            _raise_if_truncated(self.tokenizer, texts, self.config.max_seq_length)
        encoding = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.config.max_seq_length, return_tensors="pt"
        )
        return {key: encoding[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoding}

    # --------------------------------------------------------------------------------------------------- forward
    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> PhraseBertOutput:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        backbone_inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            backbone_inputs["token_type_ids"] = token_type_ids
        hidden = self.backbone(**backbone_inputs).last_hidden_state
        pooled = mean_pooling(hidden, attention_mask)
        return PhraseBertOutput(
            embeddings=F.normalize(pooled, dim=-1), pooled_embeddings=pooled, last_hidden_state=hidden
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
        """Embed words, phrases or sentences. Returns ``(n, hidden)`` (or ``(hidden,)`` for a single string).

        Inputs are sorted by token length and batched (``batch_size``), so padding stays small. Texts longer than
        ``config.max_seq_length`` tokens are truncated; ``truncate=False`` raises instead. ``normalize=False``
        returns the raw mean-pooled vectors (the space of the paper's Euclidean triplet loss). Empty lists, empty
        strings, non-strings, invalid Unicode, texts without a token and a ``batch_size`` below 1 raise
        ``ValueError`` naming the first bad text or argument. ``show_progress_bar=None`` shows one for more than 10
        batches.
        """
        single = isinstance(texts, str)
        texts = _check_texts([texts] if single else texts)
        batch_size = _check_batch_size(batch_size)
        if not truncate:
            _raise_if_truncated(self.tokenizer, texts, self.config.max_seq_length)
        order = _length_order(self.tokenizer, texts, self.config.max_seq_length)
        device = torch.device(device) if device is not None else self.device
        if device != self.device:
            self.to(device)
        was_training = self.training
        self.eval()
        chunks = []
        batches = range(0, len(texts), batch_size)
        show = show_progress_bar if show_progress_bar is not None else len(batches) > 10
        with torch.inference_mode():
            for start in _progress(batches, show, "Encoding"):
                batch = [texts[i] for i in order[start : start + batch_size]]
                features = {k: v.to(device) for k, v in self.tokenize(batch).items()}
                output = self(**features)
                vectors = output.embeddings if normalize else output.pooled_embeddings
                chunks.append(vectors.float().cpu())
        if was_training:
            self.train()
        embeddings = torch.empty((len(texts), chunks[0].shape[1]), dtype=torch.float32)
        embeddings[torch.as_tensor(order)] = torch.cat(chunks)
        if single:
            embeddings = embeddings[0]
        return embeddings.numpy() if convert_to_numpy else embeddings

    def encode_tokens(self, texts: list[str], batch_size: int = 32, device: str | torch.device | None = None) -> list:
        """Contextual token vectors of the final layer, one forward pass per text.

        Returns, per text, a dict with ``embeddings`` ``(n_tokens, hidden)`` and ``offsets`` ``(n_tokens, 2)``
        (character spans in the text), special tokens excluded. Used to pool arbitrary spans of a passage.
        """
        texts = _check_texts(texts)
        batch_size = _check_batch_size(batch_size)
        device = torch.device(device) if device is not None else self.device
        results = []
        was_training = self.training
        self.eval()
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                batch = texts[start : start + batch_size]
                encoding = self.tokenizer(
                    batch, padding=True, truncation=True, max_length=self.config.max_seq_length,
                    return_tensors="pt", return_offsets_mapping=True, return_special_tokens_mask=True,
                )  # fmt: skip
                inputs = {
                    k: encoding[k].to(device)
                    for k in ("input_ids", "attention_mask", "token_type_ids")
                    if k in encoding
                }
                hidden = self.backbone(**inputs).last_hidden_state.float().cpu()
                for i in range(len(batch)):
                    keep = (encoding["attention_mask"][i] == 1) & (encoding["special_tokens_mask"][i] == 0)
                    results.append(
                        {"embeddings": hidden[i][keep].numpy(), "offsets": encoding["offset_mapping"][i][keep].numpy()}
                    )
        if was_training:
            self.train()
        return results

    def similarity(self, a: str | list[str], b: str | list[str]) -> np.ndarray:
        """Cosine similarity matrix between two lists of texts."""
        ea = self.encode([a] if isinstance(a, str) else a)
        eb = self.encode([b] if isinstance(b, str) else b)
        return ea @ eb.T


# ------------------------------------------------------------------------------------------------------- helpers
def _check_texts(texts) -> list[str]:
    """The texts as a list, or ``ValueError`` naming the first bad one: a non-list, an empty list, a non-string, an
    empty or whitespace-only string, or a string that is not valid Unicode."""
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise ValueError(f"Expected a list of strings, got {type(texts).__name__}.")
    if len(texts) == 0:
        raise ValueError("Expected at least one text, got an empty list.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"Text {i} is a {type(text).__name__}, not a string: {text!r}.")
        if not text.strip():
            raise ValueError(f"Text {i} is empty or only whitespace; every text needs at least one character.")
        _check_unicode(text, f"Text {i}")
    return list(texts)


def _check_unicode(text: str, what: str) -> None:
    """``ValueError`` for a string that is not valid Unicode (an unpaired surrogate, e.g. from bytes decoded with
    ``errors="surrogateescape"``): tokenizers cannot read it and would fail with an unrelated ``TypeError``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{what} is not valid Unicode: character {err.start} is an unpaired surrogate ({text[err.start]!r}). "
            "Decode the source with errors='replace' or fix its encoding."
        ) from None


def _check_batch_size(batch_size) -> int:
    """``batch_size`` as an int, or ``ValueError`` when it is not a positive integer (0 or a negative size would
    silently encode nothing)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    return int(batch_size)


def _pretrained_backbone(backbone: str) -> PreTrainedModel:
    """The pretrained encoder of ``backbone`` (path or Hub id) without its pooler, loaded quietly: the checkpoint's
    pooler is unused on purpose, so its load report would only be noise."""
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        try:
            return AutoModel.from_pretrained(backbone, add_pooling_layer=False)
        except TypeError:  # backbones without a pooler option
            return AutoModel.from_pretrained(backbone)
    finally:
        hf_logging.set_verbosity(verbosity)


def _length_order(tokenizer, texts: list[str], max_length: int) -> list[int]:
    """Indices of ``texts`` sorted by token count (longest first), so that batches need little padding.

    A text without a single token (only characters the tokenizer drops: zero-width, control or lone combining
    characters) is a ``ValueError``: it would get the same meaningless vector as every other such text."""
    lengths = [
        len(ids)
        for ids in tokenizer(texts, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
    ]
    empty = [i for i, n in enumerate(lengths) if n == 0]
    if empty:
        raise ValueError(
            f"Text {empty[0]} ({texts[empty[0]][:40]!r}) has no token: the tokenizer drops all of its characters "
            f"(zero-width, control or lone combining characters); {len(empty)} text(s) like this."
        )
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


PhraseBertConfig.register_for_auto_class()
PhraseBertModel.register_for_auto_class("AutoModel")
