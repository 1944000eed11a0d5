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
from .span_index import SpanIndex, SpanMatch
from .span_pooling import (
    PassageBatch,
    best_span_similarity,
    masked_mean,
    passage_batch,
    slice_loss,
    span_similarities,
    span_sums,
    word_prefix_sums,
)

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

__all__ = [
    "SliceModel",
    "SliceOutput",
    "SpanEmbeddings",
    "SpanIndex",
    "SpanMatch",
    "PassageBatch",
    "best_span_similarity",
    "passage_batch",
    "slice_loss",
    "span_similarities",
    "span_sums",
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


@dataclass
class SpanEmbeddings:
    """All spans of one text from one pass: ``vectors`` ``(n, d)``, ``char_spans`` and ``word_spans`` ``(n, 2)``
    (end exclusive), and the span ``texts``; ordered by start word, then length."""

    vectors: np.ndarray
    char_spans: np.ndarray
    word_spans: np.ndarray
    texts: list[str]


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertPreTrainedModel with PhraseBert->Slice, phrase_bert->slice
class SlicePreTrainedModel(PreTrainedModel):
    config_class = SliceConfig
    base_model_prefix = "slice"
    supports_gradient_checkpointing = True


class SliceModel(SlicePreTrainedModel):
    """SLICE encoder: ``encode`` for queries, token vectors whose span means are comparable with them."""

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.__init__ with PhraseBert->Slice
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

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.get_input_embeddings
    def get_input_embeddings(self) -> nn.Module:
        return self.backbone.get_input_embeddings()

    # ------------------------------------------------------------------------------------------------- tokenizer
    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.tokenizer with PhraseBert->Slice
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
        raises instead. Empty lists, empty strings, non-strings, invalid Unicode, texts without a token and a
        ``batch_size`` below 1 raise ``ValueError`` naming the first bad text or argument. ``show_progress_bar=None``
        shows one for more than 10 batches.
        """
        single = isinstance(texts, str)
        texts = _check_texts([texts] if single else texts)
        batch_size = _check_batch_size(batch_size)
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

    def encode_tokens(self, texts: list[str], batch_size: int = 32, device: str | torch.device | None = None) -> list:
        """Contextual token vectors of the final layer, one forward pass per text (per window for long texts).

        Returns, per text, a dict with ``embeddings`` ``(n_tokens, hidden)``, ``offsets`` ``(n_tokens, 2)``
        (character spans in the text) and ``word_ids`` ``(n_tokens,)`` (index of the whitespace word, or of the word
        piece with ``span_unit="token"``); special tokens excluded. Texts longer than ``config.max_seq_length`` are
        read in overlapping windows and each word's tokens are taken from the one window that owns spans starting
        at that word; a span crossing from one window's words into the next then pools tokens of two passes
        (``span_embeddings``, ``find_spans`` and the span index always score a span inside one window).
        """
        texts = _check_texts(texts)
        batch = self.passage_batch(texts, span_words=self.config.max_span_words)
        parts: list[list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in texts]
        for rows, sub, output in self._run_rows(batch, batch_size, device, show=False, desc="Encoding tokens"):
            hidden = output.token_embeddings.float().cpu()
            for i, row in enumerate(rows.tolist()):
                owned = int(sub.start_mask[i].sum())
                keep = (sub.word_index[i] >= 0) & (sub.word_index[i] < owned)
                word_ids = (sub.word_index[i][keep] + sub.row_first_word[i]).numpy()
                offsets = sub.token_offsets[i][keep].numpy()
                parts[int(sub.row_passage[i])].append((row, hidden[i][keep].numpy(), offsets, word_ids))
        results = []
        dim = self.config.embedding_dim
        for pieces in parts:
            pieces.sort(key=lambda piece: piece[0])
            results.append(
                {
                    "embeddings": np.concatenate([p[1] for p in pieces]) if pieces else np.zeros((0, dim), np.float32),
                    "offsets": np.concatenate([p[2] for p in pieces]) if pieces else np.zeros((0, 2), np.int64),
                    "word_ids": np.concatenate([p[3] for p in pieces]) if pieces else np.zeros(0, np.int64),
                }
            )
        return results

    def span_embeddings(
        self,
        text: str,
        min_words: int | None = None,
        max_words: int | None = None,
        normalize: bool = True,
        batch_size: int = 32,
        device: str | torch.device | None = None,
    ) -> SpanEmbeddings:
        """Every span of ``min_words..max_words`` words of ``text`` (defaults from the config), from one pass.

        Vectors are the mean of the span's token vectors (unit length with ``normalize``), comparable with
        ``encode`` of a query; long texts are windowed so that each span comes from one window.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"span_embeddings needs one non-empty string, got {text!r}.")
        _check_unicode(text, "The text")
        min_words, max_words = self._span_lengths(min_words, max_words)
        batch = self.passage_batch([text], span_words=max_words)
        chars = batch.word_chars[0]
        found: list[tuple[int, int, np.ndarray]] = []
        for _, sub, output in self._run_rows(batch, batch_size, device, show=False, desc="Spans"):
            sums, counts, valid = span_sums(
                output.token_embeddings.float(), sub.word_index, sub.word_mask, min_words, max_words, sub.start_mask
            )
            means = (sums / counts.clamp(min=1).unsqueeze(-1)).cpu()
            for i, start, k in valid.nonzero().tolist():
                word_start = int(sub.row_first_word[i]) + start
                found.append((word_start, word_start + min_words + k, means[i, start, k].numpy()))
        found.sort(key=lambda f: (f[0], f[1]))
        if not found:
            raise ValueError(f"{text!r} has no span of {min_words}..{max_words} words with tokens.")
        vectors = np.stack([f[2] for f in found]).astype(np.float32)
        if normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        words = np.asarray([(f[0], f[1]) for f in found], dtype=np.int64)
        char_spans = np.stack([chars[words[:, 0], 0], chars[words[:, 1] - 1, 1]], axis=1)
        return SpanEmbeddings(vectors, char_spans, words, [text[a:b] for a, b in char_spans])

    def build_index(
        self,
        passages: list[str],
        max_words: int | None = None,
        batch_size: int = 32,
        show_progress_bar: bool | None = None,
        device: str | torch.device | None = None,
        dtype: str = "float32",
    ) -> SpanIndex:
        """A :class:`SpanIndex` of ``passages``: per-word vectors and span norms, never one vector per span.

        ``max_words`` (default ``config.max_span_words``) is the longest span the index can score; long passages are
        windowed so that every such span lies inside one window. ``dtype="float16"`` halves the word vectors.
        """
        passages = _check_texts(passages)
        _, max_words = self._span_lengths(1, max_words)
        if dtype not in ("float32", "float16"):
            raise ValueError(f"dtype must be 'float32' or 'float16', got {dtype!r}.")
        batch = self.passage_batch(passages, span_words=max_words)
        n_rows, dim = len(batch), self.config.embedding_dim
        per_row: list = [None] * n_rows
        show = show_progress_bar if show_progress_bar is not None else n_rows > 10 * batch_size
        for rows, sub, output in self._run_rows(batch, batch_size, device, show=show, desc="Indexing"):
            hidden = output.token_embeddings.float()
            slots = sub.word_mask.shape[1]
            prefix, prefix_counts = word_prefix_sums(hidden, sub.word_index, slots)
            word_sums = (prefix[:, 1:] - prefix[:, :-1]).cpu()
            word_counts = (prefix_counts[:, 1:] - prefix_counts[:, :-1]).cpu()
            norms = torch.zeros((len(rows), slots, max_words))
            group = max(1, min(max_words, 2**24 // max(1, len(rows) * slots * dim)))  # bounds the (B, W, L, d) gather
            for low in range(1, max_words + 1, group):
                high = min(low + group - 1, max_words)
                sums, _, valid = span_sums(hidden, sub.word_index, sub.word_mask, low, high, sub.start_mask)
                norms[:, :, low - 1 : high] = (sums.norm(dim=-1) * valid).cpu()
            for i, row in enumerate(rows.tolist()):
                n = int(sub.word_mask[i].sum())
                owned = int(sub.start_mask[i].sum())
                per_row[row] = (word_sums[i, :n].numpy(), word_counts[i, :n].numpy(), norms[i, :n].numpy(), owned)
        counts = np.asarray([len(r[1]) for r in per_row], dtype=np.int64)
        word_vectors = np.concatenate([r[0] for r in per_row]).reshape(-1, dim)
        word_counts = np.concatenate([r[1] for r in per_row]).astype(np.int32)
        row_passage = batch.row_passage.numpy()
        passage_sums = np.zeros((len(passages), dim), dtype=np.float64)
        passage_tokens = np.zeros(len(passages), dtype=np.float64)
        for r, (vectors, tokens, _, owned) in enumerate(per_row):
            passage_sums[row_passage[r]] += vectors[:owned].sum(0)
            passage_tokens[row_passage[r]] += tokens[:owned].sum()
        passage_vectors = passage_sums / np.maximum(np.linalg.norm(passage_sums, axis=1, keepdims=True), 1e-12)
        arrays = {
            "word_vectors": word_vectors.astype(dtype),
            "word_counts": word_counts,
            "span_norms": np.concatenate([r[2] for r in per_row]).reshape(-1, max_words).astype(np.float32),
            "row_passage": row_passage.astype(np.int64),
            "row_slot_start": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            "row_first_word": batch.row_first_word.numpy().astype(np.int64),
            "word_chars": np.concatenate(batch.word_chars).reshape(-1, 2).astype(np.int64),
            "passage_word_start": np.concatenate([[0], np.cumsum([len(c) for c in batch.word_chars])]).astype(np.int64),
            "passage_vectors": passage_vectors.astype(np.float32),
        }
        meta = {"model": self.name_or_path or "", "span_unit": self.config.span_unit, "dtype": dtype}
        return SpanIndex(passages, arrays, max_words, meta, encoder=self.encode)

    def find_spans(
        self,
        query: str,
        passages: list[str],
        top_k: int = 5,
        min_words: int | None = None,
        max_words: int | None = None,
        threshold: float | None = None,
        nms: bool = True,
        batch_size: int = 32,
    ) -> list[SpanMatch]:
        """The ``top_k`` spans of ``passages`` most similar to ``query`` (one pass per passage window).

        Returns :class:`SpanMatch` records (passage index, character offsets, text, cosine, score01), best first.
        ``threshold`` keeps spans with cosine >= it; ``nms`` drops spans overlapping a better one in the same
        passage. Span lengths default to ``config.min_span_words..config.max_span_words``.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"find_spans needs a non-empty query string, got {query!r}.")
        passages = _check_passages(passages)
        min_words, max_words = self._span_lengths(min_words, max_words)
        vector = _encode_queries(self, [query], batch_size)[0]  # before the index: a bad query fails fast
        index = self.build_index(passages, max_words=max_words, batch_size=batch_size)
        return index.search(vector, top_k=top_k, threshold=threshold, min_words=min_words, nms=nms)

    def score_passages(
        self,
        queries: str | list[str],
        passages: list[str],
        mode: str = "span",
        min_words: int | None = None,
        max_words: int | None = None,
        batch_size: int = 32,
    ) -> np.ndarray:
        """``(n_queries, n_passages)`` cosines: best span (``mode="span"``) or whole passage (``"passage"``).

        ``"passage"`` compares the query with the mean of all the passage's content-token vectors from the same
        pass(es), the paper's "full context" setup; ``"span"`` is SLICE's single-pass best span.
        """
        if mode not in ("span", "passage"):
            raise ValueError(f"mode must be 'span' or 'passage', got {mode!r}.")
        passages = _check_passages(passages)
        min_words, max_words = self._span_lengths(min_words, max_words)
        vectors = _encode_queries(self, [queries] if isinstance(queries, str) else queries, batch_size)
        index = self.build_index(passages, max_words=max_words, batch_size=batch_size)
        if mode == "passage":
            return vectors @ index.passage_vectors.T
        return index.passage_scores(vectors, min_words=min_words, max_words=max_words)

    # ------------------------------------------------------------------------------------------------ plumbing
    def _span_lengths(self, min_words: int | None, max_words: int | None) -> tuple[int, int]:
        min_words = self.config.min_span_words if min_words is None else min_words
        max_words = self.config.max_span_words if max_words is None else max_words
        for name, value in (("min_words", min_words), ("max_words", max_words)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"{name} must be an integer, got {value!r}.")
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}.")
        if min_words < 1 or min_words > max_words:
            raise ValueError(f"Need 1 <= min_words <= max_words, got min_words={min_words}, max_words={max_words}.")
        return int(min_words), int(max_words)

    def _run_rows(self, batch: PassageBatch, batch_size: int, device, show: bool, desc: str):
        """Forward the rows of ``batch`` in length-sorted mini-batches; yields ``(row ids, sub-batch, output)``."""
        batch_size = _check_batch_size(batch_size)
        device = self._move_to(device)
        lengths = batch.attention_mask.sum(1)
        order = torch.argsort(lengths, descending=True, stable=True).tolist()
        # length-sorted batches, cut where a row is under 3/4 of its batch's longest: padding stays small
        groups: list[list[int]] = []
        for row in order:
            if not groups or len(groups[-1]) >= batch_size or lengths[row] < 0.75 * lengths[groups[-1][0]]:
                groups.append([])
            groups[-1].append(row)
        with _eval_mode(self), torch.inference_mode():
            for group in _progress(groups, show, desc):
                rows = torch.as_tensor(group, dtype=torch.long)
                sub = batch.select(rows)
                output = self(**sub.model_inputs(device))  # word tensors of ``sub`` stay on the CPU
                output.token_embeddings = output.token_embeddings.float().cpu()
                yield rows, sub, output

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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._check_texts
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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._check_unicode
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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._check_batch_size
def _check_batch_size(batch_size) -> int:
    """``batch_size`` as an int, or ``ValueError`` when it is not a positive integer (0 or a negative size would
    silently encode nothing)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    return int(batch_size)


def _encode_queries(model: SliceModel, queries, batch_size: int) -> np.ndarray:
    """``model.encode(queries)``, with its errors marked as being about the queries (not the passages)."""
    try:
        return model.encode(queries, batch_size=batch_size)
    except ValueError as error:
        raise ValueError(f"Bad query: {error}") from None


def _check_passages(passages) -> list[str]:
    if isinstance(passages, str):
        raise ValueError("passages must be a list of strings; wrap a single passage as [passage].")
    try:
        return _check_texts(passages)
    except ValueError as error:
        raise ValueError(f"Bad passages: {error}") from None


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._length_order
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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._raise_if_truncated
def _raise_if_truncated(tokenizer, texts: list[str], max_length: int) -> None:
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]]
    too_long = [i for i, n in enumerate(lengths) if n > max_length]
    if too_long:
        raise ValueError(
            f"{len(too_long)} text(s) exceed max_seq_length={max_length} tokens (first: index {too_long[0]}, "
            f"{lengths[too_long[0]]} tokens). Shorten them or call encode(..., truncate=True) to truncate."
        )


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._progress
def _progress(iterable, show: bool, desc: str):
    if show and tqdm is not None and not os.environ.get("PHRASEZOO_NO_PROGRESS"):
        return tqdm(iterable, desc=desc)
    return iterable


SliceConfig.register_for_auto_class()
SliceModel.register_for_auto_class("AutoModel")
