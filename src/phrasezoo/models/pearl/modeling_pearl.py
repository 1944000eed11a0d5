"""PEARL: Phrase Embeddings by Augmented Representation Learning (Chen, Varoquaux, Suchanek; 2024).

A phrase is embedded twice and the two vectors are concatenated:

* the **phrase encoder**: a pretrained transformer (E5/MiniLM/BERT/...) with masked mean pooling;
* the **character encoder**, after LOVE (Chen et al., 2022): every word of the phrase is read as its characters
  followed by its word pieces, through one transformer layer whose attention mixes content self-attention with
  position-only attention; positions are sum-pooled into an L2-normalised word vector (pretrained to mimic word
  vectors), the word vectors are mean-pooled into a phrase vector and a fully connected layer reduces its size.

A linear **phrase-type head** over the concatenation predicts one of 95 types (lexical class x entity type).

This file is self-contained (standard library, torch, numpy, transformers and its sibling configuration file only)
so that an exported folder loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.
"""

from __future__ import annotations

import math
import os
import re
import zlib
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel
from transformers.utils import ModelOutput
from transformers.utils import logging as hf_logging

from .configuration_pearl import PearlConfig

try:  # transformers >= 5: init functions that leave loaded weights alone
    from transformers import initialization as _init
except ImportError:  # pragma: no cover - transformers 4.x
    _init = nn.init

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None


@dataclass
class PearlOutput(ModelOutput):
    """Output of :meth:`PearlModel.forward`.

    Args:
        loss: type cross-entropy when ``type_labels`` were given.
        embeddings: L2-normalised phrase embeddings (concatenation of both encoders), ``(batch, embedding_dim)``.
        joint_embeddings: the concatenation before the final normalisation (each part normalised and weighted).
        phrase_embeddings: mean-pooled phrase-encoder vectors before normalisation, ``(batch, hidden)``.
        char_embeddings: projected character-encoder vectors before normalisation, ``(batch, char_proj_dim)``.
        type_logits: phrase-type scores, ``(batch, num_types)`` (``None`` for a model without the type head).
        last_hidden_state: token states of the phrase encoder.
    """

    loss: torch.Tensor | None = None
    embeddings: torch.Tensor | None = None
    joint_embeddings: torch.Tensor | None = None
    phrase_embeddings: torch.Tensor | None = None
    char_embeddings: torch.Tensor | None = None
    type_logits: torch.Tensor | None = None
    last_hidden_state: torch.Tensor | None = None


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.mean_pooling
def mean_pooling(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the token states where ``mask`` is 1."""
    mask = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


# --------------------------------------------------------------------------------------------- character encoder
class MixedAttention(nn.Module):
    """LOVE's positional attention module: a per-head learned mix of content and position-only attention.

    Content attention scores tokens by what they are; positional attention scores them only by where they are,
    which lets the layer model character order (swaps, insertions) independently of identity.
    """

    def __init__(self, config: PearlConfig):
        super().__init__()
        hidden, heads = config.char_hidden_size, config.char_num_heads
        if hidden % heads:
            raise ValueError(f"char_hidden_size ({hidden}) must be divisible by char_num_heads ({heads}).")
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.position_qk = nn.Linear(hidden, 2 * hidden)
        self.gate = nn.Parameter(torch.zeros(heads))  # sigmoid(0) = an even mix at initialisation
        self.out = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(config.char_dropout)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x (n, L, H)`` token states, ``positions (L, H)`` position embeddings, ``mask (n, L)`` valid tokens."""
        n, length, hidden = x.shape
        q, k, v = self.qkv(x).view(n, length, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        # position-only scores are the same for every word: computed once, (heads, L, L)
        qp, kp = self.position_qk(positions).view(length, 2, self.heads, self.head_dim).permute(1, 2, 0, 3)
        position_scores = qp @ kp.transpose(-1, -2) / math.sqrt(self.head_dim)
        blocked = ~mask[:, None, None, :]
        position = position_scores.unsqueeze(0).masked_fill(blocked, float("-inf")).softmax(-1)
        dropout = self.dropout.p if self.training else 0.0
        content_out = F.scaled_dot_product_attention(q, k, v, attn_mask=~blocked, dropout_p=dropout)
        position_out = self.dropout(position) @ v
        gate = torch.sigmoid(self.gate).view(1, -1, 1, 1)
        out = gate * content_out + (1 - gate) * position_out  # = (g A_content + (1 - g) A_position) V
        return self.out(out.transpose(1, 2).reshape(n, length, hidden))


class CharacterEncoder(nn.Module):
    """Word vectors from characters + word pieces (LOVE), pooled into one phrase vector.

    Words are the whitespace-delimited words of a phrase. Inputs are flat over the words of a batch:
    ``char_ids (N, C)`` and ``piece_ids (N, P)`` for ``N`` words (id 0 is padding; piece ids are the tokenizer's ids
    shifted by one) and ``word_phrase (N,)``, the phrase each word belongs to. Words are encoded in chunks sorted by
    length, each chunk padded only to its own longest word. Positions of the pieces start at
    ``char_max_word_chars`` whatever the padding, so a word's vector never depends on the batch it is in.
    """

    chunk_size = 512

    def __init__(self, config: PearlConfig):
        super().__init__()
        hidden = config.char_hidden_size
        self.max_chars = config.char_max_word_chars
        self.char_embeddings = nn.Embedding(len(config.char_vocab) + 2, hidden, padding_idx=0)
        self.piece_embeddings = nn.Embedding(config.backbone_config.vocab_size + 1, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(config.char_max_word_chars + config.char_max_pieces, hidden)
        self.segment_embeddings = nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden)
        self.attention = MixedAttention(config)
        self.attention_norm = nn.LayerNorm(hidden)
        self.feed_forward = nn.Sequential(
            nn.Linear(hidden, config.char_intermediate_size),
            nn.GELU(),
            nn.Linear(config.char_intermediate_size, hidden),
        )
        self.output_norm = nn.LayerNorm(hidden)
        self.dropout = nn.Dropout(config.char_dropout)
        self.word_projection = nn.Linear(hidden, config.char_word_dim)
        self.phrase_projection = nn.Linear(config.char_word_dim, config.char_proj_dim)

    def encode_words(self, char_ids: torch.Tensor, piece_ids: torch.Tensor) -> torch.Tensor:
        """L2-normalised word vectors ``(N, char_word_dim)`` for ``N`` words (``char_ids (N, C)``, ``piece_ids (N, P)``)."""
        n, n_chars = char_ids.shape
        n_pieces = piece_ids.shape[1]
        device = char_ids.device
        positions = torch.cat(
            [torch.arange(n_chars, device=device), self.max_chars + torch.arange(n_pieces, device=device)]
        )
        segments = torch.cat(
            [
                torch.zeros(n_chars, dtype=torch.long, device=device),
                torch.ones(n_pieces, dtype=torch.long, device=device),
            ]
        )
        x = torch.cat([self.char_embeddings(char_ids), self.piece_embeddings(piece_ids)], dim=1)
        position_states = self.position_embeddings(positions)
        x = self.dropout(self.embedding_norm(x + position_states + self.segment_embeddings(segments)))
        mask = torch.cat([char_ids, piece_ids], dim=1) != 0
        x = self.attention_norm(x + self.dropout(self.attention(x, position_states, mask)))
        x = self.output_norm(x + self.dropout(self.feed_forward(x)))
        pooled = (x * mask.unsqueeze(-1).to(x.dtype)).sum(1)  # LOVE's sum pooling
        return F.normalize(self.word_projection(pooled), dim=-1)

    def forward(
        self, char_ids: torch.Tensor, piece_ids: torch.Tensor, word_phrase: torch.Tensor, n_phrases: int
    ) -> torch.Tensor:
        """Projected phrase vectors ``(n_phrases, char_proj_dim)``: mean of each phrase's word vectors, then the FC."""
        dim, dtype = self.word_projection.out_features, self.word_projection.weight.dtype
        word_vectors = torch.zeros((char_ids.shape[0], dim), dtype=dtype, device=char_ids.device)
        char_lengths = (char_ids != 0).sum(1)
        piece_lengths = (piece_ids != 0).sum(1)
        order = torch.argsort(char_lengths * (piece_ids.shape[1] + 1) + piece_lengths)
        for start in range(0, order.numel(), self.chunk_size):
            chunk = order[start : start + self.chunk_size]
            n_chars = max(1, int(char_lengths[chunk].max()))
            n_pieces = max(1, int(piece_lengths[chunk].max()))
            vectors = self.encode_words(char_ids[chunk, :n_chars], piece_ids[chunk, :n_pieces])
            word_vectors = word_vectors.index_copy(0, chunk, vectors)
        sums = torch.zeros((n_phrases, dim), dtype=dtype, device=char_ids.device).index_add(
            0, word_phrase, word_vectors
        )
        counts = torch.bincount(word_phrase, minlength=n_phrases).clamp(min=1).to(dtype).unsqueeze(-1)
        return self.phrase_projection(sums / counts)


# ------------------------------------------------------------------------------------------------------- the model
class PearlPreTrainedModel(PreTrainedModel):
    config_class = PearlConfig
    base_model_prefix = "pearl"
    supports_gradient_checkpointing = True

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, MixedAttention):
            _init.zeros_(module.gate)


class PearlModel(PearlPreTrainedModel):
    """PEARL phrase encoder. ``encode`` embeds phrases, ``predict_type`` names their phrase type."""

    def __init__(self, config: PearlConfig):
        super().__init__(config)
        try:
            self.backbone = AutoModel.from_config(config.backbone_config, add_pooling_layer=False)
        except TypeError:  # backbones without a pooler option
            self.backbone = AutoModel.from_config(config.backbone_config)
        self.char_encoder = CharacterEncoder(config) if config.use_char_encoder else None
        # no type labels, no head: the published checkpoints of the paper's authors do not include theirs
        self.type_head = nn.Linear(config.joint_dim, len(config.type_labels)) if config.type_labels else None
        if config.lexical_dim:
            self.register_buffer("lexical_idf", torch.ones(config.lexical_dim))
        self._tokenizer = None
        self.post_init()

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def from_backbone(cls, backbone: str, **config_kwargs) -> PearlModel:
        """A fresh PEARL model whose phrase encoder holds the pretrained weights of ``backbone`` (path or Hub id).

        The character encoder and the type head start untrained; the tokenizer of ``backbone`` is attached.
        """
        backbone_config = AutoConfig.from_pretrained(backbone)
        model = cls(PearlConfig(backbone_config=backbone_config, **config_kwargs))
        pretrained = _pretrained_backbone(backbone)
        missing, unexpected = model.backbone.load_state_dict(pretrained.state_dict(), strict=False)
        if missing:
            raise ValueError(f"Backbone {backbone} lacks weights for {missing[:5]}...")
        model.set_tokenizer(AutoTokenizer.from_pretrained(backbone))
        return model

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.get_input_embeddings
    def get_input_embeddings(self) -> nn.Module:
        return self.backbone.get_input_embeddings()

    # ------------------------------------------------------------------------------------------------- tokenizer
    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.tokenizer with PhraseBert->Pearl
    @property
    def tokenizer(self):
        """The tokenizer, loaded lazily from the model's own folder (``name_or_path``) when none was set."""
        if self._tokenizer is None:
            source = self.name_or_path
            if not source:
                raise ValueError(
                    "This PearlModel has no tokenizer: pass one with model.set_tokenizer(tokenizer), or load the "
                    "model from a folder that contains tokenizer files."
                )
            # the backbone's config names the tokenizer type; without it AutoTokenizer would read this folder's
            # config.json, see its auto_map and ask interactively whether to run custom code
            self._tokenizer = AutoTokenizer.from_pretrained(
                source, config=self.config.backbone_config, trust_remote_code=False
            )
        return self._tokenizer

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.set_tokenizer
    def set_tokenizer(self, tokenizer) -> None:
        self._tokenizer = tokenizer

    # ---------------------------------------------------------------------------------------------------- inputs
    def tokenize(self, texts: list[str], truncate: bool = True) -> dict[str, torch.Tensor]:
        """Tokenizer output plus the character encoder's ``char_ids`` / ``piece_ids`` for a list of phrases."""
        texts = _check_texts(texts)
        encoding = self.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=self.config.max_seq_length,
            return_tensors="pt",
            return_offsets_mapping=self.config.use_char_encoder,
            return_overflowing_tokens=False,
        )
        if not truncate:
            _raise_if_truncated(self.tokenizer, texts, self.config.max_seq_length)
        features = {key: encoding[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in encoding}
        if self.config.use_char_encoder:
            features.update(self._char_features(encoding, texts))
        if self.config.lexical_dim:
            features["lexical"] = self.lexical_vectors(texts)
        return features

    # ------------------------------------------------------------------------------------------ lexical channel
    def lexical_vectors(self, texts: list[str]) -> torch.Tensor:
        """The lexical channel of ``texts``: hashed character n-gram TF-IDF vectors, L2-normalised, ``(n, lexical_dim)``."""
        cfg = self.config
        if not cfg.lexical_dim:
            raise ValueError("This model has no lexical channel (config.lexical_dim is 0); see set_lexical_channel.")
        rows, columns, values = _hashed_ngrams(texts, cfg.lexical_dim, *cfg.lexical_ngram_range)
        dense = torch.zeros((len(texts), cfg.lexical_dim), dtype=torch.float32)
        if rows:
            idf = self.lexical_idf.detach().float().cpu()
            index = (torch.tensor(rows), torch.tensor(columns))
            dense.index_put_(index, torch.tensor(values, dtype=torch.float32) * idf[index[1]], accumulate=True)
        return F.normalize(dense, dim=-1).to(self.lexical_idf.device)

    @torch.no_grad()
    def set_lexical_channel(self, corpus: list[str], dim: int = 2048, weight: float = 0.7,
                            ngram_range: tuple[int, int] = (2, 4)) -> None:  # fmt: skip
        """Add (or refit) the lexical channel: IDF of the hashed n-gram buckets over ``corpus`` (smoothed, as
        scikit-learn's ``TfidfVectorizer``), ``dim`` buckets, concatenated with weight ``weight`` (see the config)."""
        corpus = _check_texts(corpus)
        if dim < 1 or weight < 0:
            raise ValueError(f"dim must be >= 1 and weight >= 0, got {dim} and {weight}.")
        rows, columns, _ = _hashed_ngrams(corpus, dim, *ngram_range)
        seen = np.zeros(dim, dtype=np.int64)
        pairs = np.unique(np.stack([np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)]), axis=1)
        np.add.at(seen, pairs[1], 1)
        idf = np.log((1 + len(corpus)) / (1 + seen)) + 1.0
        self.config.lexical_dim, self.config.lexical_weight = int(dim), float(weight)
        self.config.lexical_ngram_range = [int(ngram_range[0]), int(ngram_range[1])]
        device = self.device
        self.register_buffer("lexical_idf", torch.tensor(idf, dtype=torch.float32, device=device))

    def _char_features(self, encoding, texts: list[str]) -> dict[str, torch.Tensor]:
        """Flat character-encoder inputs: whitespace words of every text, their characters and word pieces.

        A token continues the current word when it starts where the previous token ended (no whitespace between),
        so "New-York" and "(film)" are one word each, with all their pieces.
        """
        cfg = self.config
        char_index = self._char_index()
        offsets, ids = encoding["offset_mapping"], encoding["input_ids"]
        offsets = offsets.tolist() if isinstance(offsets, torch.Tensor) else offsets
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else ids
        words: list[tuple[str, list[int]]] = []
        word_phrase: list[int] = []
        for i, text in enumerate(texts):
            word_ids = encoding.word_ids(i)
            current = None  # [start, end, pieces]
            count = 0
            for position, word_id in enumerate(word_ids):
                if word_id is None:
                    continue
                start, end = offsets[i][position]
                if current is not None and start == current[1]:
                    current[1] = end
                    current[2].append(ids[i][position])
                    continue
                if current is not None:
                    words.append((text[current[0] : current[1]], current[2]))
                    word_phrase.append(i)
                    count += 1
                current = [start, end, [ids[i][position]]] if count < cfg.char_max_words else None
                if current is None:
                    break
            if current is not None:
                words.append((text[current[0] : current[1]], current[2]))
                word_phrase.append(i)
        n_chars = max(1, min(cfg.char_max_word_chars, max((len(w) for w, _ in words), default=1)))
        n_pieces = max(1, min(cfg.char_max_pieces, max((len(p) for _, p in words), default=1)))
        char_ids = np.zeros((len(words), n_chars), dtype=np.int64)
        piece_ids = np.zeros((len(words), n_pieces), dtype=np.int64)
        lowercase = cfg.char_lowercase
        for j, (word, pieces) in enumerate(words):
            chars = [char_index.get(c, 1) for c in (word.lower() if lowercase else word)[:n_chars]]
            char_ids[j, : len(chars)] = chars
            pieces = pieces[:n_pieces]
            piece_ids[j, : len(pieces)] = np.asarray(pieces) + 1
        return {
            "char_ids": torch.from_numpy(char_ids),
            "piece_ids": torch.from_numpy(piece_ids),
            "word_phrase": torch.tensor(word_phrase, dtype=torch.long),
        }

    def _char_index(self) -> dict[str, int]:
        if getattr(self, "_char_index_cache", None) is None:
            self._char_index_cache = {c: i + 2 for i, c in enumerate(self.config.char_vocab)}
        return self._char_index_cache

    def word_features(self, words: list[str]) -> dict[str, torch.Tensor]:
        """``char_ids (N, C)`` and ``piece_ids (N, P)`` of single words, for pretraining the character encoder."""
        if any(not w or any(c.isspace() for c in w) for w in words):
            raise ValueError("word_features takes single words without whitespace.")
        feats = self._char_features(
            self.tokenizer(
                list(words), add_special_tokens=False, return_offsets_mapping=True, truncation=True, max_length=32
            ),
            list(words),
        )
        return {"char_ids": feats["char_ids"], "piece_ids": feats["piece_ids"]}

    # --------------------------------------------------------------------------------------------------- forward
    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        char_ids: torch.Tensor | None = None,
        piece_ids: torch.Tensor | None = None,
        word_phrase: torch.Tensor | None = None,
        lexical: torch.Tensor | None = None,
        type_labels: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> PearlOutput:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        backbone_inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            backbone_inputs["token_type_ids"] = token_type_ids
        hidden = self.backbone(**backbone_inputs).last_hidden_state
        phrase = mean_pooling(hidden, attention_mask)
        parts = [F.normalize(phrase, dim=-1)]
        char = None
        if self.char_encoder is not None:
            if char_ids is None or piece_ids is None or word_phrase is None:
                raise ValueError(
                    "This PEARL model has a character encoder: pass char_ids, piece_ids and word_phrase (see tokenize)."
                )
            char = self.char_encoder(char_ids, piece_ids, word_phrase, input_ids.shape[0])
            parts.append(self.config.char_weight * F.normalize(char, dim=-1))
        joint = torch.cat(parts, dim=-1)
        type_logits = self.type_head(joint) if self.type_head is not None else None
        if self.config.lexical_dim:
            if lexical is None:
                raise ValueError("This PEARL model has a lexical channel: pass lexical (see tokenize).")
            joint = torch.cat([joint, self.config.lexical_weight * lexical.to(joint.dtype)], dim=-1)
        loss = None
        if type_labels is not None:
            if type_logits is None:
                raise ValueError("This PEARL model has no phrase-type head (config.type_labels is empty).")
            loss = F.cross_entropy(type_logits, type_labels)
        return PearlOutput(
            loss=loss,
            embeddings=F.normalize(joint, dim=-1),
            joint_embeddings=joint,
            phrase_embeddings=phrase,
            char_embeddings=char,
            type_logits=type_logits,
            last_hidden_state=hidden,
        )

    # ------------------------------------------------------------------------------------------------- inference
    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.encode with PhraseBert->Pearl, pooled_embeddings->joint_embeddings
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
        """Embed phrases. Returns ``(n, embedding_dim)`` (or ``(embedding_dim,)`` for a single string).

        Inputs are sorted by token length and batched (``batch_size``), so padding stays small. Texts longer than
        ``config.max_seq_length`` tokens are truncated; ``truncate=False`` raises instead. ``normalize=False``
        returns the concatenation before the final L2 normalisation (same cosine geometry). Empty lists, empty
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
                vectors = output.embeddings if normalize else output.joint_embeddings
                chunks.append(vectors.float().cpu())
        if was_training:
            self.train()
        embeddings = torch.empty((len(texts), chunks[0].shape[1]), dtype=torch.float32)
        embeddings[torch.as_tensor(order)] = torch.cat(chunks)
        if single:
            embeddings = embeddings[0]
        return embeddings.numpy() if convert_to_numpy else embeddings

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.encode_tokens
    def encode_tokens(self, texts: list[str], batch_size: int = 32, device: str | torch.device | None = None) -> list:
        """Contextual token vectors of the phrase encoder, one forward pass per text.

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

    def predict_type(self, texts: str | list[str], top_k: int = 1, batch_size: int = 128) -> list:
        """Phrase types with probabilities, e.g. ``[[("NP-ORG", 0.91)], ...]`` (``top_k`` per phrase, at most the
        number of types). Bad input raises ``ValueError`` as in :meth:`encode`, and so does a model without the
        type head (a converted release of the authors: they did not publish theirs)."""
        if self.type_head is None:
            raise ValueError(
                "This PEARL model has no phrase-type head (config.type_labels is empty): the authors' published "
                "checkpoints do not include theirs. encode() works; train a head with phrasezoo to predict types."
            )
        single = isinstance(texts, str)
        texts = _check_texts([texts] if single else texts)
        batch_size = _check_batch_size(batch_size)
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}.")
        top_k = min(int(top_k), len(self.config.type_labels))
        order = _length_order(self.tokenizer, texts, self.config.max_seq_length)
        predictions: list = [None] * len(texts)
        was_training = self.training
        self.eval()
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                rows = order[start : start + batch_size]
                features = {k: v.to(self.device) for k, v in self.tokenize([texts[i] for i in rows]).items()}
                probs = self(**features).type_logits.float().softmax(-1)
                values, indices = probs.topk(top_k, dim=-1)
                for row, vals, idxs in zip(rows, values.tolist(), indices.tolist()):
                    predictions[row] = [(self.config.type_labels[j], v) for j, v in zip(idxs, vals)]
        if was_training:
            self.train()
        return predictions[0] if single else predictions

    def similarity(self, a: str | list[str], b: str | list[str]) -> np.ndarray:
        """Cosine similarity matrix between two lists of phrases."""
        ea = self.encode([a] if isinstance(a, str) else a)
        eb = self.encode([b] if isinstance(b, str) else b)
        return ea @ eb.T


# ------------------------------------------------------------------------------------------------------- helpers
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


_WHITESPACE = re.compile(r"\s\s+")


def char_wb_ngrams(text: str, low: int, high: int) -> list[str]:
    """Character n-grams inside word boundaries, as scikit-learn's ``analyzer="char_wb"`` (lower-cased): every
    whitespace word padded with one space on each side; a word shorter than n gives itself once."""
    grams = []
    for word in _WHITESPACE.sub(" ", text.lower()).split():
        padded = f" {word} "
        for n in range(low, high + 1):
            offset = 0
            grams.append(padded[offset : offset + n])
            while offset + n < len(padded):
                offset += 1
                grams.append(padded[offset : offset + n])
            if offset == 0:
                break
    return grams


def _hashed_ngrams(texts: list[str], dim: int, low: int, high: int) -> tuple[list[int], list[int], list[float]]:
    """Signed feature hashing (CRC-32: the same in every process) of each text's n-grams, sublinear tf:
    ``(row, bucket, sign * (1 + log count))`` triples (a bucket may repeat within a row; callers sum)."""
    rows, columns, values = [], [], []
    for i, text in enumerate(texts):
        counts: dict[str, int] = {}
        for gram in char_wb_ngrams(text[:1000], low, high):
            counts[gram] = counts.get(gram, 0) + 1
        for gram, count in counts.items():
            h = zlib.crc32(gram.encode("utf-8"))
            rows.append(i)
            columns.append(h % dim)
            values.append((1.0 + math.log(count)) * (1.0 if (h >> 31) & 1 else -1.0))
    return rows, columns, values


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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._pretrained_backbone
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


PearlConfig.register_for_auto_class()
PearlModel.register_for_auto_class("AutoModel")
