"""Multi-facet codebook embeddings (Chang, Agrawal & McCallum, AAAI 2021): a text -> K cluster centres.

``CodebookSeq2Embeddings`` reads a word sequence ``w_1 ... w_n <eos>`` with a transformer encoder TE (word embeddings
initialised from word vectors), maps the ``<eos>`` state through K different linear layers into K decoder inputs,
lets a small transformer decoder TD mix them (and, for sentence models, attend to the encoder states), and projects
the K outputs into a *frozen* word-vector space: the codebook, or facets, of the text (paper eq. 3-4). Training
(eq. 1-2, :mod:`.nnsc`) makes non-negative sparse combinations of the facets reconstruct the words that co-occur
with the text and fail on a random other text's words.

Deviations from the official code, all deliberate (see the spec): attention masks with right padding and pooling at
the real ``<eos>`` (the official code attends to left padding); ``<pad>`` = 0 and ``<unk>``/``<eos>`` random rows
instead of uninitialised memory; a batched FISTA E-step by default (the RMSprop loop is kept as ``"rmsprop"``); no
auxiliary coefficient head. The inference API (``encode``, ``facets``, ``facet_words``, ``word_importance``,
``similarity``, ``sentence_embedding``, ``summarize``) lives in :mod:`.inference_codebook` and is mixed in here.

Self-contained (standard library, torch, numpy, transformers and sibling files only) so that an exported folder
loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import PreTrainedModel, PreTrainedTokenizerFast
from transformers.utils import ModelOutput

from .configuration_codebook import CodebookConfig
from .inference_codebook import CodebookInferenceMixin
from .nnsc import nnsc_loss
from .tokenization_codebook import build_word_tokenizer, vocabulary_with_specials

try:  # transformers v5: init functions that leave loaded weights alone
    from transformers import initialization as _init
except ImportError:  # pragma: no cover
    _init = nn.init


@dataclass
class CodebookOutput(ModelOutput):
    """Output of :meth:`CodebookSeq2Embeddings.forward`.

    Args:
        facets: the K codebook embeddings per text in the word-vector space, ``(batch, K, word_dim)``, not
            normalised (magnitudes matter for NNSC).
        last_hidden_state: encoder states TE, ``(batch, tokens, d_model)``; padding positions are meaningless.
        pooled: the encoder state at the real ``<eos>`` of each text, ``(batch, d_model)``.
        embeddings: mean of the encoder states over real tokens (``<eos>`` included), ``(batch, d_model)``: the
            paper's "Ours Emb" phrase representation, what ``encode`` returns (after normalisation).
        loss, loss_pos, loss_neg: eq. 2 and its two reconstruction errors, when targets are given.
    """

    facets: torch.Tensor | None = None
    last_hidden_state: torch.Tensor | None = None
    pooled: torch.Tensor | None = None
    embeddings: torch.Tensor | None = None
    loss: torch.Tensor | None = None
    loss_pos: torch.Tensor | None = None
    loss_neg: torch.Tensor | None = None


class LockedDropout(nn.Module):
    """Variational dropout: one mask per sequence shared by all its positions (the official ``dropouti``)."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        mask = x.new_empty(x.shape[0], 1, x.shape[2]).bernoulli_(1 - self.p) / (1 - self.p)
        return x * mask


class CodebookPreTrainedModel(PreTrainedModel):
    config_class = CodebookConfig
    base_model_prefix = "codebook"
    main_input_name = "input_ids"

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, CodebookSeq2Embeddings):
            # the official init of the K facet maps and the output layer (uniform, wider biases for the facet maps
            # so that the K decoder inputs differ from the start)
            _init.uniform_(module.facet_maps.weight, -0.1, 0.1)
            _init.uniform_(module.facet_maps.bias, -0.5, 0.5)
            _init.uniform_(module.output_projection.weight, -0.1, 0.1)
            _init.zeros_(module.output_projection.bias)


class CodebookSeq2Embeddings(CodebookInferenceMixin, CodebookPreTrainedModel):
    """Sequence to K codebook embeddings. Build with :meth:`from_word_vectors`; see the module docstring."""

    def __init__(self, config: CodebookConfig):
        super().__init__(config)
        d, e = config.d_model, config.word_dim
        self.word_embeddings = nn.Embedding(config.vocab_size, e, padding_idx=config.pad_token_id)
        self.input_dropout = LockedDropout(config.input_dropout)
        self.input_projection = nn.Linear(e, d) if e != d else nn.Identity()
        self.position_embeddings = nn.Embedding(config.max_seq_length, d)
        self.embedding_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.embedding_dropout = nn.Dropout(config.dropout)
        encoder_layer = nn.TransformerEncoderLayer(
            d, config.n_heads, config.ffn_dim, config.dropout, activation="gelu", batch_first=True,
            layer_norm_eps=config.layer_norm_eps,
        )  # fmt: skip
        self.encoder = nn.TransformerEncoder(encoder_layer, config.encoder_layers, enable_nested_tensor=False)
        self.facet_maps = nn.Linear(d, d * config.n_facets)  # the K linear layers L_k, stacked
        self.facet_dropout = nn.Dropout(config.positional_dropout)
        self.facet_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        if config.cross_attention:
            decoder_layer = nn.TransformerDecoderLayer(
                d, config.n_heads, config.ffn_dim, config.dropout, activation="gelu", batch_first=True,
                layer_norm_eps=config.layer_norm_eps,
            )  # fmt: skip
            self.decoder = nn.TransformerDecoder(decoder_layer, config.decoder_layers)
        else:
            decoder_layer = nn.TransformerEncoderLayer(
                d, config.n_heads, config.ffn_dim, config.dropout, activation="gelu", batch_first=True,
                layer_norm_eps=config.layer_norm_eps,
            )  # fmt: skip
            self.decoder = nn.TransformerEncoder(decoder_layer, config.decoder_layers, enable_nested_tensor=False)
        self.output_projection = nn.Linear(d, e)
        # frozen output space: the word vectors of the vocabulary (zero rows for the specials) and p(w)
        self.register_buffer("target_vectors", torch.zeros(config.vocab_size, e))
        self.register_buffer("word_probs", torch.full((config.vocab_size,), 1.0 / max(config.vocab_size, 1)))
        self._tokenizer = None
        self.post_init()

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def from_word_vectors(
        cls,
        vocab: Sequence[str],
        vectors: np.ndarray | torch.Tensor,
        word_probs: Sequence[float] | np.ndarray | None = None,
        word_ranks: Sequence[int] | np.ndarray | None = None,
        table_size: int | None = None,
        truncation_side: str | None = None,
        seed: int | None = None,
        **config_kwargs,
    ) -> CodebookSeq2Embeddings:
        """A fresh model over ``vocab`` whose inputs start from, and whose outputs live in, ``vectors``.

        ``vectors[i]`` is the word vector of ``vocab[i]`` (no specials in ``vocab``; they are added as ids 0-2).
        ``truncation_side`` (``"left"`` for phrase models: keep the last words) is stored in the config.
        Input embeddings: L2-normalised vectors x sqrt(word_dim) (the official init), trainable; ``<pad>`` = 0,
        ``<unk>``/``<eos>`` random at the same scale. Targets: the raw vectors, frozen (a buffer saved with the
        weights). p(w) for Prob_avg/SIF/summaries: ``word_probs`` if given, else the Zipf proxy
        ``1 / ((rank + 10) * ln(table_size))`` from ``word_ranks`` (frequency ranks in the source table, e.g. GloVe
        row numbers) or, without ranks, from the position in ``vocab`` (assumed frequency-ordered).
        The word tokenizer is attached (``model.tokenizer``); ``config_kwargs`` go to :class:`CodebookConfig`.
        """
        vocab = list(vocab)
        vectors = torch.as_tensor(np.asarray(vectors, dtype=np.float32))
        if vectors.dim() != 2 or vectors.shape[0] != len(vocab):
            raise ValueError(f"vectors must be (len(vocab), dim) = ({len(vocab)}, dim), got {tuple(vectors.shape)}.")
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocab has duplicate words.")
        if not torch.isfinite(vectors).all() or (vectors.norm(dim=1) == 0).any():
            raise ValueError("Every word vector must be finite and non-zero.")
        full_vocab = vocabulary_with_specials(vocab)
        if len(full_vocab) != len(vocab) + 3:
            raise ValueError("vocab must not contain the special tokens <pad>, <unk>, <eos>.")
        config_kwargs.setdefault("word_dim", int(vectors.shape[1]))
        if truncation_side is not None:
            config_kwargs["truncation_side"] = truncation_side
        if config_kwargs["word_dim"] != vectors.shape[1]:
            raise ValueError(f"word_dim={config_kwargs['word_dim']} but the vectors have {vectors.shape[1]} dims.")
        config = CodebookConfig(vocab_size=len(full_vocab), **config_kwargs)
        if seed is not None:
            torch.manual_seed(seed)
        model = cls(config)
        dim = vectors.shape[1]
        with torch.no_grad():
            specials = torch.randn(2, dim)
            specials = F.normalize(specials, dim=1) * math.sqrt(dim)
            inputs = torch.cat([torch.zeros(1, dim), specials, F.normalize(vectors, dim=1) * math.sqrt(dim)])
            model.word_embeddings.weight.copy_(inputs)
            model.target_vectors.copy_(torch.cat([torch.zeros(3, dim), vectors]))
            model.word_probs.copy_(_word_probabilities(len(vocab), word_probs, word_ranks, table_size))
        model.set_tokenizer(
            build_word_tokenizer(full_vocab, config.lowercase, config.max_seq_length, config.truncation_side)
        )
        return model

    def get_input_embeddings(self) -> nn.Module:
        return self.word_embeddings

    def set_input_embeddings(self, value: nn.Module) -> None:
        self.word_embeddings = value

    # ------------------------------------------------------------------------------------------------- tokenizer
    @property
    def tokenizer(self):
        """The word tokenizer: the one set, else ``tokenizer.json`` of the model's own folder (``name_or_path``),
        else one built from ``config.vocabulary`` (models built from a config alone)."""
        if self._tokenizer is None:
            source = self.name_or_path
            local = bool(source) and os.path.isdir(source)
            if (local and os.path.isfile(os.path.join(source, "tokenizer.json"))) or (
                source and not local and not self.config.vocabulary
            ):
                # a plain fast tokenizer (a folder or a Hub id): loading it by class skips AutoTokenizer's read of
                # config.json, whose auto_map would make transformers ask about custom code
                self._tokenizer = PreTrainedTokenizerFast.from_pretrained(source)
            elif self.config.vocabulary:
                vocab = vocabulary_with_specials(self.config.vocabulary)
                self._tokenizer = build_word_tokenizer(
                    vocab, self.config.lowercase, self.config.max_seq_length, self.config.truncation_side
                )
            else:
                raise ValueError(
                    "This CodebookSeq2Embeddings has no tokenizer: build it with from_word_vectors, pass one with "
                    "model.set_tokenizer(tokenizer), or load the model from a folder that contains tokenizer.json."
                )
        return self._tokenizer

    def set_tokenizer(self, tokenizer) -> None:
        if tokenizer is not None and len(tokenizer) != self.config.vocab_size:
            raise ValueError(
                f"The tokenizer has {len(tokenizer)} tokens but the model's vocabulary has {self.config.vocab_size}."
            )
        self._tokenizer = tokenizer

    def target_word_index(self) -> dict[str, int]:
        """Word -> row of the frozen target matrix (= its token id), specials excluded."""
        vocab = self.tokenizer.get_vocab()
        return {word: i for word, i in vocab.items() if i >= 3}

    def vocabulary(self) -> list[str]:
        """The words in id order (the specials first)."""
        vocab = self.tokenizer.get_vocab()
        words = [""] * len(vocab)
        for word, i in vocab.items():
            words[i] = word
        return words

    # --------------------------------------------------------------------------------------------------- forward
    def encode_tokens(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Encoder states TE ``(batch, tokens, d_model)``; padding masked out of attention."""
        if input_ids.shape[1] > self.config.max_seq_length:
            raise ValueError(
                f"input_ids have {input_ids.shape[1]} positions but max_seq_length is {self.config.max_seq_length}."
            )
        x = self.input_dropout(self.word_embeddings(input_ids))
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.input_projection(x) + self.position_embeddings(positions)[None]
        x = self.embedding_dropout(self.embedding_norm(x))
        return self.encoder(x, src_key_padding_mask=attention_mask == 0)

    def decode_facets(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(facets (B, K, word_dim), pooled <eos> state (B, d_model))`` from the encoder states."""
        last = (attention_mask.sum(1) - 1).clamp(min=0)
        pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        slots = self.facet_maps(pooled).view(hidden.shape[0], self.config.n_facets, self.config.d_model)
        slots = self.facet_norm(self.facet_dropout(slots))
        if self.config.cross_attention:
            out = self.decoder(slots, hidden, memory_key_padding_mask=attention_mask == 0)
        else:
            out = self.decoder(slots)
        return self.output_projection(out), pooled

    def targets_from_ids(self, target_ids: torch.Tensor) -> torch.Tensor:
        """Unit-norm target word vectors W(N_t) for a padded id matrix ``(B, N)`` -> ``(B, N, word_dim)``."""
        return F.normalize(self.target_vectors[target_ids], dim=-1)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        target_ids: torch.Tensor | None = None,
        target_mask: torch.Tensor | None = None,
        negative_ids: torch.Tensor | None = None,
        negative_mask: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> CodebookOutput:
        """Facets and encoder states; with ``target_ids``/``target_mask`` (rows of the target matrix, padded) also
        the NNSC loss of eq. 2. Negatives default to the batch's targets rotated by a random shift."""
        if attention_mask is None:
            attention_mask = (input_ids != self.config.pad_token_id).long()
        hidden = self.encode_tokens(input_ids, attention_mask)
        facets, pooled = self.decode_facets(hidden, attention_mask)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        embeddings = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        loss = loss_pos = loss_neg = None
        if target_ids is not None:
            if target_mask is None:
                target_mask = target_ids != self.config.pad_token_id
            negatives = self.targets_from_ids(negative_ids) if negative_ids is not None else None
            loss, loss_pos, loss_neg = nnsc_loss(
                facets, self.targets_from_ids(target_ids), target_mask, negatives, negative_mask,
                **self.nnsc_options(training=self.training),
            )  # fmt: skip
        return CodebookOutput(
            facets=facets, last_hidden_state=hidden, pooled=pooled, embeddings=embeddings, loss=loss,
            loss_pos=loss_pos, loss_neg=loss_neg,
        )  # fmt: skip

    def nnsc_options(self, training: bool = False, solver: str | None = None) -> dict:
        """Keyword arguments of :func:`.nnsc.solve` / ``nnsc_loss`` from the config (lam, solver and its settings)."""
        config = self.config
        solver = solver or config.nnsc_solver
        options = {"lam": config.nnsc_lambda, "solver": solver}
        if solver == "pgd":
            options.update(max_iter=config.nnsc_max_iter, tol=config.nnsc_tol)
        else:
            steps = config.rmsprop_train_steps if training else config.rmsprop_test_steps
            options.update(steps=steps, lr=config.rmsprop_lr)
        return options


def _word_probabilities(n_words: int, word_probs, word_ranks, table_size) -> torch.Tensor:
    """p(w) for ``<pad>``, ``<unk>``, ``<eos>`` (1: weight ~0 under SIF) and the words (see from_word_vectors)."""
    if word_probs is not None:
        probs = np.asarray(word_probs, dtype=np.float64)
        if probs.shape != (n_words,) or not np.isfinite(probs).all() or (probs <= 0).any() or (probs > 1).any():
            raise ValueError(f"word_probs must be {n_words} probabilities in (0, 1].")
    else:
        if word_ranks is None:
            ranks = np.arange(n_words, dtype=np.float64)
        else:
            ranks = np.asarray(word_ranks, dtype=np.float64)
            if ranks.shape != (n_words,) or (ranks < 0).any():
                raise ValueError(f"word_ranks must be {n_words} non-negative ranks.")
        size = table_size or int(ranks.max()) + 1
        probs = 1.0 / ((ranks + 10.0) * math.log(max(size, 3)))
    return torch.as_tensor(np.concatenate([np.ones(3), probs]), dtype=torch.float32)


CodebookConfig.register_for_auto_class()
CodebookSeq2Embeddings.register_for_auto_class("AutoModel")
