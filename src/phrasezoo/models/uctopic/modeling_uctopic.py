"""UCTopic: Unsupervised Contrastive Learning for Phrase Representations and Topic Mining (Li et al., ACL 2022).

A phrase *mention* is a sentence and the character span of the phrase in it: ``("He lived in the United States.",
(16, 29))``. The encoder reads the whole sentence, so the same words get different vectors in different contexts.
Two ways to read the span vector from the backbone (``config.span_representation``):

* ``"entity"`` (the paper, LUKE backbones): the span is one entity input of LUKE, the ``[MASK]`` entity whose
  position ids are the span's token positions; LUKE's final state of that entity is the span vector;
* ``"mean"`` (any other encoder, e.g. the embedded MiniLM): the mean of the span's final token states from one
  forward pass of the sentence.

Both are followed by the paper's head, a linear layer with tanh (``mlp``), and L2 normalisation. Pretraining
(contrastive, mention masked in the anchor) and cluster-assisted contrastive finetuning live in phrasezoo; this file
only holds what users of an exported folder need: the model, its input preparation and ``encode``.

This file is self-contained (standard library, torch, numpy, transformers and its sibling configuration file only)
so that an exported folder loads with ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.
"""

from __future__ import annotations

import logging
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel
from transformers.utils import ModelOutput
from transformers.utils import logging as hf_logging

from .configuration_uctopic import UCTopicConfig

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

logger = logging.getLogger(__name__)

#: A mention: ``(sentence, (char_start, char_end))``; a plain string is a phrase without context (whole text).
Mention = tuple[str, tuple[int, int]]


@dataclass
class UCTopicOutput(ModelOutput):
    """Output of :meth:`UCTopicModel.forward`.

    Args:
        loss: masked-language-model loss when ``mlm_labels`` were given (the contrastive loss is computed by the
            training code from ``embeddings``).
        embeddings: L2-normalised phrase embeddings, ``(n_spans, hidden)``.
        phrase_embeddings: output of the MLP head before normalisation (the span vector in eval mode when
            ``config.mlp_only_train``).
        span_states: the backbone's span vector before the head (LUKE entity state or mean of span tokens).
        last_hidden_state: token states of the backbone, ``(batch, length, hidden)``.
    """

    loss: torch.Tensor | None = None
    embeddings: torch.Tensor | None = None
    phrase_embeddings: torch.Tensor | None = None
    span_states: torch.Tensor | None = None
    last_hidden_state: torch.Tensor | None = None


@dataclass
class PreparedMention:
    """One mention as model input: token ids (special tokens included) and the span's token positions.

    ``span_start``/``span_end`` are token positions in ``input_ids`` (end exclusive); ``truncated`` says whether the
    sentence was cut to a window around the span.
    """

    input_ids: list[int]
    span_start: int
    span_end: int
    truncated: bool = False


class UCTopicMLP(nn.Module):
    """The paper's head on the span vector: ``tanh(W h + b)``, same width as the backbone."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(states))


class UCTopicLMHead(nn.Module):
    """Masked-language-model head (BERT/RoBERTa layout: dense, GELU, LayerNorm, decoder with bias)."""

    def __init__(self, hidden_size: int, vocab_size: int, layer_norm_eps: float = 1e-12):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.layer_norm = nn.LayerNorm(hidden_size, eps=layer_norm_eps)
        self.decoder = nn.Linear(hidden_size, vocab_size)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.layer_norm(F.gelu(self.dense(states))))


# ------------------------------------------------------------------------------------------------------- the model
class UCTopicPreTrainedModel(PreTrainedModel):
    config_class = UCTopicConfig
    base_model_prefix = "uctopic"
    supports_gradient_checkpointing = True

    def _init_weights(self, module):
        super()._init_weights(module)


class UCTopicModel(UCTopicPreTrainedModel):
    """UCTopic phrase encoder. ``encode([(sentence, (start, end)), ...])`` embeds phrase mentions in context."""

    def __init__(self, config: UCTopicConfig):
        super().__init__(config)
        try:
            self.backbone = AutoModel.from_config(config.backbone_config, add_pooling_layer=False)
        except TypeError:  # backbones without a pooler option
            self.backbone = AutoModel.from_config(config.backbone_config)
        hidden = config.backbone_config.hidden_size
        self.mlp = UCTopicMLP(hidden)
        self.lm_head = None
        if config.use_mlm_head:
            eps = getattr(config.backbone_config, "layer_norm_eps", 1e-12)
            self.lm_head = UCTopicLMHead(hidden, config.backbone_config.vocab_size, eps)
        self._tokenizer = None
        self.post_init()

    # -------------------------------------------------------------------------------------------------- building
    @classmethod
    def from_backbone(cls, backbone: str, shrink_entity_vocab: bool = True, **config_kwargs) -> UCTopicModel:
        """A fresh UCTopic model whose encoder holds the pretrained weights of ``backbone`` (path or Hub id).

        With a LUKE backbone (e.g. ``studio-ousia/luke-base``) this is the paper's model: the id of the ``[MASK]``
        entity is read from the tokenizer's entity vocabulary, and ``shrink_entity_vocab`` keeps only the rows of the
        padding and ``[MASK]`` entities of LUKE's 500k-entity table (UCTopic never feeds another entity), which
        saves ~128M parameters and gives the same vectors. The MLP head starts untrained; with
        ``use_mlm_head=True`` the backbone checkpoint's own MLM head is copied when it has one.
        """
        backbone_config = AutoConfig.from_pretrained(backbone)
        tokenizer = AutoTokenizer.from_pretrained(backbone)
        state = _pretrained_backbone(backbone).state_dict()
        is_luke = backbone_config.model_type == "luke"
        if is_luke and "mask_entity_id" not in config_kwargs:
            entity_vocab = getattr(tokenizer, "entity_vocab", None) or {}
            config_kwargs["mask_entity_id"] = int(entity_vocab.get("[MASK]", UCTopicConfig().mask_entity_id))
        if is_luke and shrink_entity_vocab:
            key = "entity_embeddings.entity_embeddings.weight"
            keep = sorted({0, config_kwargs["mask_entity_id"]})
            state[key] = state[key][keep].clone()
            backbone_config.entity_vocab_size = len(keep)
            config_kwargs["mask_entity_id"] = keep.index(config_kwargs["mask_entity_id"])
        model = cls(UCTopicConfig(backbone_config=backbone_config, **config_kwargs))
        missing, _unexpected = model.backbone.load_state_dict(state, strict=False)
        if missing:
            raise ValueError(f"Backbone {backbone} lacks weights for {missing[:5]}...")
        if model.lm_head is not None:
            model._load_mlm_head(backbone)
        model.set_tokenizer(tokenizer)
        return model

    def _load_mlm_head(self, backbone: str) -> None:
        """Copy the backbone checkpoint's MLM head (BERT ``cls.predictions.*`` or RoBERTa/LUKE ``lm_head.*``)."""
        # lazy: the auto classes are read only when a model is built from a backbone
        from transformers import AutoModelForMaskedLM

        try:
            state = AutoModelForMaskedLM.from_pretrained(backbone).state_dict()
        except (OSError, ValueError, KeyError) as err:
            logger.warning("No MLM head in %s (%s): the MLM head starts untrained.", backbone, err)
            return
        layouts = {
            "cls.predictions.": ("transform.dense", "transform.LayerNorm", "decoder", "bias"),
            "lm_head.": ("dense", "layer_norm", "decoder", "bias"),
        }
        for prefix, (dense, norm, decoder, bias) in layouts.items():
            if f"{prefix}{dense}.weight" not in state:
                continue
            decoder_weight = state.get(f"{prefix}{decoder}.weight", self.get_input_embeddings().weight.detach())
            decoder_bias = state.get(f"{prefix}{bias}", state.get(f"{prefix}{decoder}.bias"))
            with torch.no_grad():
                self.lm_head.dense.weight.copy_(state[f"{prefix}{dense}.weight"])
                self.lm_head.dense.bias.copy_(state[f"{prefix}{dense}.bias"])
                self.lm_head.layer_norm.weight.copy_(state[f"{prefix}{norm}.weight"])
                self.lm_head.layer_norm.bias.copy_(state[f"{prefix}{norm}.bias"])
                self.lm_head.decoder.weight.copy_(decoder_weight)
                if decoder_bias is not None:
                    self.lm_head.decoder.bias.copy_(decoder_bias)
            return
        logger.warning("The MLM head of %s has an unknown layout: the MLM head starts untrained.", backbone)

    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.get_input_embeddings
    def get_input_embeddings(self) -> nn.Module:
        return self.backbone.get_input_embeddings()

    @property
    def uses_entity_input(self) -> bool:
        """True for the paper's LUKE variant (the span is an entity input), False for token mean pooling."""
        return self.config.span_representation == "entity"

    # ------------------------------------------------------------------------------------------------- tokenizer
    # Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.tokenizer with PhraseBert->UCTopic
    @property
    def tokenizer(self):
        """The tokenizer, loaded lazily from the model's own folder (``name_or_path``) when none was set."""
        if self._tokenizer is None:
            source = self.name_or_path
            if not source:
                raise ValueError(
                    "This UCTopicModel has no tokenizer: pass one with model.set_tokenizer(tokenizer), or load the "
                    "model from a folder that contains tokenizer files."
                )
            # the backbone's config names the tokenizer type; without it AutoTokenizer would read this folder's
            # config.json, see its auto_map and ask interactively whether to run custom code
            self._tokenizer = AutoTokenizer.from_pretrained(
                source, config=self.config.backbone_config, trust_remote_code=False
            )
        return self._tokenizer

    def set_tokenizer(self, tokenizer) -> None:
        if not getattr(tokenizer, "is_fast", True):
            raise ValueError("UCTopic needs a fast tokenizer (character offsets of tokens).")
        self._tokenizer = tokenizer

    # ---------------------------------------------------------------------------------------------------- inputs
    def prepare_mentions(
        self,
        mentions,
        mask_mention: bool | Sequence[bool] = False,
        truncate: bool = True,
        max_seq_length: int | None = None,
    ) -> list[PreparedMention]:
        """Check mentions and turn them into token ids with the span's token positions.

        ``config.span_tokenization`` says how (see :meth:`_sentence_tokens` and :meth:`_segment_tokens`). A
        sentence longer than ``config.max_seq_length`` tokens is cut to a window of that many tokens centred on the
        span (a span longer than the window keeps its first tokens); ``truncate=False`` raises instead.
        ``mask_mention`` (one flag, or one per mention) replaces the span's tokens with the mask token, as in
        pretraining (the paper masks the mention so that the model learns from its context). ``max_seq_length``
        overrides the config's limit (shorter windows make training cheaper).
        """
        items = _check_mentions(mentions)
        flags = [bool(mask_mention)] * len(items) if isinstance(mask_mention, bool) else list(mask_mention)
        if len(flags) != len(items):
            raise ValueError(f"mask_mention has {len(flags)} flags for {len(items)} mentions.")
        tokenizer = self.tokenizer
        if any(flags) and tokenizer.mask_token_id is None:
            raise ValueError("The tokenizer has no mask token, so mentions cannot be masked.")
        if self.config.span_tokenization == "segments":
            tokenized = self._segment_tokens(items)
        else:
            tokenized = self._sentence_tokens(items)
        limit = min(max_seq_length or self.config.max_seq_length, self.config.max_seq_length)
        prepared = []
        for index, ((prefix, content_ids, suffix, first, last), masked) in enumerate(zip(tokenized, flags)):
            budget = limit - len(prefix) - len(suffix)
            window_start, window_end = 0, len(content_ids)
            if len(content_ids) > budget:
                if not truncate:
                    raise ValueError(
                        f"Mention {index}: the sentence has {len(content_ids) + len(prefix) + len(suffix)} tokens, "
                        f"more than max_seq_length={limit} (special tokens included). Shorten it, or call "
                        "encode(..., truncate=True) to keep a window of tokens around the span."
                    )
                window_start, window_end = _window(first, last, len(content_ids), budget)
            span_start = len(prefix) + first - window_start
            span_end = len(prefix) + min(last, window_end) - window_start
            input_ids = list(prefix) + content_ids[window_start:window_end] + list(suffix)
            if masked:
                input_ids[span_start:span_end] = [tokenizer.mask_token_id] * (span_end - span_start)
            truncated = window_end - window_start < len(content_ids)
            prepared.append(PreparedMention(input_ids, span_start, span_end, truncated))
        return prepared

    def _sentence_tokens(self, items: list[tuple[str, int, int]]) -> list[tuple[list, list, list, int, int]]:
        """``(prefix, content ids, suffix, first, last)`` per mention, the span being content tokens
        ``[first, last)``: each sentence is tokenized once, whole, and the span's tokens are those that overlap its
        characters (``span_tokenization="sentence"``)."""
        sentences = list(dict.fromkeys(sentence for sentence, _, _ in items))
        encoding = self.tokenizer(
            sentences, return_offsets_mapping=True, return_special_tokens_mask=True, verbose=False
        )  # fmt: skip
        row_of = {sentence: row for row, sentence in enumerate(sentences)}
        tokenized = []
        for index, (sentence, start, end) in enumerate(items):
            row = row_of[sentence]
            ids = encoding["input_ids"][row]
            special = encoding["special_tokens_mask"][row]
            offsets = encoding["offset_mapping"][row]
            content = [j for j, s in enumerate(special) if not s]
            if not content:
                raise ValueError(f"Mention {index}: the sentence {sentence[:60]!r} has no tokens.")
            covered = [
                k
                for k, j in enumerate(content)
                if offsets[j][0] < end and offsets[j][1] > start and offsets[j][1] > offsets[j][0]
            ]
            if not covered:
                raise ValueError(_no_span_token(index, sentence, start, end))
            prefix, suffix = ids[: content[0]], ids[content[-1] + 1 :]
            tokenized.append((prefix, [ids[j] for j in content], suffix, covered[0], covered[-1] + 1))
        return tokenized

    def _segment_tokens(self, items: list[tuple[str, int, int]]) -> list[tuple[list, list, list, int, int]]:
        """As :meth:`_sentence_tokens`, the way the authors' code tokenizes a mention (``span_tokenization=
        "segments"``, LUKE's ``entity_spans`` with ``add_prefix_space=True``): the sentence is cut at the span's
        start and end (a cut after a space moves before it, so the space starts the next piece), and the piece
        before the span, the span and the piece after it are tokenized apart, each given a leading space when it
        does not start with whitespace. A span next to punctuation ("(Paris)") thus reads " (", " Paris", " )"."""
        pieces = []
        for sentence, start, end in items:
            cut_start, cut_end = _segment_cut(sentence, start), _segment_cut(sentence, end)
            for piece in (sentence[:cut_start], sentence[cut_start:cut_end], sentence[cut_end:]):
                pieces.append(piece if not piece or piece[0].isspace() else " " + piece)
        ids = self.tokenizer(pieces, add_special_tokens=False, verbose=False)["input_ids"]
        marked = self.tokenizer.build_inputs_with_special_tokens([-1])
        prefix, suffix = marked[: marked.index(-1)], marked[marked.index(-1) + 1 :]
        tokenized = []
        for index, (sentence, start, end) in enumerate(items):
            before, span, after = (list(x) for x in ids[3 * index : 3 * index + 3])
            if not span:
                raise ValueError(_no_span_token(index, sentence, start, end))
            tokenized.append((prefix, before + span + after, suffix, len(before), len(before) + len(span)))
        return tokenized

    def collate(self, prepared: Sequence[PreparedMention]) -> dict[str, torch.Tensor]:
        """Padded model inputs for prepared mentions, one sequence per mention (see :meth:`tokenize_mentions`)."""
        sequences = [p.input_ids for p in prepared]
        spans = [(row, p.span_start, p.span_end) for row, p in enumerate(prepared)]
        return self._collate(sequences, spans)

    def tokenize_mentions(
        self,
        mentions,
        mask_mention: bool | Sequence[bool] = False,
        truncate: bool = True,
        max_seq_length: int | None = None,
    ) -> dict[str, torch.Tensor]:
        """Model inputs for a list of mentions: ``input_ids``, ``attention_mask`` and the span, given as
        ``span_mask`` (``"mean"``: 1 on the span's tokens) or as LUKE's ``entity_ids`` / ``entity_position_ids`` /
        ``entity_attention_mask`` (``"entity"``: the ``[MASK]`` entity on the span's token positions, -1 padded)."""
        return self.collate(self.prepare_mentions(mentions, mask_mention, truncate, max_seq_length))

    def _collate(self, sequences: list[list[int]], spans: list[tuple[int, int, int]]) -> dict[str, torch.Tensor]:
        """Pad ``sequences``; ``spans`` are ``(row, token_start, token_end)`` and may share rows (``"mean"`` only)."""
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        length = max(len(s) for s in sequences)
        input_ids = torch.full((len(sequences), length), pad, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), length), dtype=torch.long)
        for row, ids in enumerate(sequences):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            attention_mask[row, : len(ids)] = 1
        features = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.uses_entity_input:
            if [row for row, _, _ in spans] != list(range(len(sequences))):
                raise ValueError("LUKE entity inputs take exactly one span per sequence.")
            width = self.config.max_mention_length
            positions = torch.full((len(spans), 1, width), -1, dtype=torch.long)
            for row, start, end in spans:
                span = torch.arange(start, min(end, start + width))
                positions[row, 0, : len(span)] = span
            features["entity_ids"] = torch.full((len(spans), 1), self.config.mask_entity_id, dtype=torch.long)
            features["entity_position_ids"] = positions
            features["entity_attention_mask"] = torch.ones((len(spans), 1), dtype=torch.long)
        else:
            span_mask = torch.zeros((len(spans), length), dtype=torch.float32)
            for i, (_, start, end) in enumerate(spans):
                span_mask[i, start:end] = 1.0
            features["span_mask"] = span_mask
            features["span_rows"] = torch.tensor([row for row, _, _ in spans], dtype=torch.long)
        return features

    # --------------------------------------------------------------------------------------------------- forward
    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        span_mask: torch.Tensor | None = None,
        span_rows: torch.Tensor | None = None,
        entity_ids: torch.Tensor | None = None,
        entity_position_ids: torch.Tensor | None = None,
        entity_attention_mask: torch.Tensor | None = None,
        mlm_input_ids: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs,
    ) -> UCTopicOutput:
        """Embed the spans of a batch (inputs from :meth:`tokenize_mentions`).

        ``"mean"``: ``span_mask (n_spans, length)`` marks each span's tokens in row ``span_rows[i]`` of the batch
        (default: span ``i`` in row ``i``), so several spans of one sentence share a forward pass. ``"entity"``: one
        LUKE ``[MASK]`` entity per row. ``mlm_input_ids``/``mlm_labels`` (-100 = no label) add the MLM loss, computed
        on a separate pass of the word tokens only, as in the paper's code.
        """
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        if self.uses_entity_input:
            if entity_ids is None or entity_position_ids is None:
                raise ValueError("This UCTopic model reads spans as LUKE entities: pass entity_ids and "
                                 "entity_position_ids (see tokenize_mentions).")  # fmt: skip
            if entity_attention_mask is None:
                entity_attention_mask = torch.ones_like(entity_ids)
            out = self.backbone(
                **inputs,
                entity_ids=entity_ids,
                entity_position_ids=entity_position_ids,
                entity_attention_mask=entity_attention_mask,
            )
            hidden = out.last_hidden_state
            span_states = out.entity_last_hidden_state[:, 0]
        else:
            if span_mask is None:
                raise ValueError("This UCTopic model mean-pools span tokens: pass span_mask (see tokenize_mentions).")
            hidden = self.backbone(**inputs).last_hidden_state
            rows = span_rows if span_rows is not None else torch.arange(span_mask.shape[0], device=hidden.device)
            weights = span_mask.to(hidden.dtype).unsqueeze(-1)
            span_states = (hidden[rows] * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        # SimCSE's mlp_only_train: in eval mode the span vector itself is the embedding
        phrase = span_states if self.config.mlp_only_train and not self.training else self.mlp(span_states)
        loss = None
        if mlm_labels is not None:
            loss = self._mlm_loss(mlm_input_ids if mlm_input_ids is not None else input_ids, attention_mask, mlm_labels)
        return UCTopicOutput(
            loss=loss,
            embeddings=F.normalize(phrase, dim=-1),
            phrase_embeddings=phrase,
            span_states=span_states,
            last_hidden_state=hidden,
        )

    def _mlm_loss(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if self.lm_head is None:
            raise ValueError("This UCTopic model has no MLM head: build it with use_mlm_head=True.")
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        selected = labels != -100
        if not selected.any():
            return hidden.sum() * 0.0
        logits = self.lm_head(hidden[selected])
        return F.cross_entropy(logits.float(), labels[selected])

    # ------------------------------------------------------------------------------------------------- inference
    def encode(
        self,
        mentions,
        batch_size: int = 64,
        normalize: bool = True,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        device: str | torch.device | None = None,
        truncate: bool = True,
        mask_mention: bool = False,
    ) -> np.ndarray | torch.Tensor:
        """Embed phrase mentions: ``[(sentence, (char_start, char_end)), ...]`` -> ``(n, hidden)``.

        A plain string is a phrase without context (its whole text is the span); a single mention or string gives
        a ``(hidden,)`` vector. Sentences are tokenized once and, for mean pooling, every mention of the same
        sentence shares one forward pass; passes are sorted by length and batched (``batch_size`` sequences).
        ``normalize=False`` returns the MLP output before L2 normalisation. Sentences longer than
        ``config.max_seq_length`` tokens are cut to a window around the span (``truncate=False`` raises instead).
        Bad input (empty list, non-strings, empty text, invalid Unicode, spans outside the sentence or empty, text
        without a token, a ``batch_size`` below 1) raises ``ValueError`` naming the mention or argument.
        ``show_progress_bar=None`` shows one for more than 10 batches.
        """
        single = _is_single(mentions)
        prepared = self.prepare_mentions([mentions] if single else mentions, mask_mention, truncate)
        batch_size = _check_batch_size(batch_size)
        device = torch.device(device) if device is not None else self.device
        if device != self.device:
            self.to(device)
        groups = self._sequence_groups(prepared)
        batches = range(0, len(groups), batch_size)
        show = show_progress_bar if show_progress_bar is not None else len(batches) > 10
        out = torch.empty((len(prepared), self.config.embedding_dim), dtype=torch.float32)
        was_training = self.training
        self.eval()
        with torch.inference_mode():
            for start in _progress(batches, show, "Encoding mentions"):
                batch = groups[start : start + batch_size]
                sequences = [ids for ids, _ in batch]
                spans = [(row, s, e) for row, (_, members) in enumerate(batch) for _, s, e in members]
                owners = [i for _, members in batch for i, _, _ in members]
                features = {k: v.to(device) for k, v in self._collate(sequences, spans).items()}
                output = self(**features)
                vectors = output.embeddings if normalize else output.phrase_embeddings
                out[torch.as_tensor(owners)] = vectors.float().cpu()
        if was_training:
            self.train()
        if single:
            out = out[0]
        return out.numpy() if convert_to_numpy else out

    def encode_mentions(self, mentions: Sequence[Mention], **kwargs) -> np.ndarray | torch.Tensor:
        """Embed ``(sentence, (char_start, char_end))`` mentions (same options as :meth:`encode`)."""
        return self.encode(list(mentions), **kwargs)

    def _sequence_groups(self, prepared: list[PreparedMention]) -> list[tuple[list[int], list[tuple[int, int, int]]]]:
        """Forward passes to run, longest first: ``(input_ids, [(mention index, span_start, span_end), ...])``.

        Mean pooling runs each distinct token sequence once for all its spans; LUKE needs one pass per mention
        because the span is an input of the pass.
        """
        groups: dict = {}
        for index, p in enumerate(prepared):
            key = tuple(p.input_ids) if not self.uses_entity_input else index
            groups.setdefault(key, (p.input_ids, []))[1].append((index, p.span_start, p.span_end))
        return sorted(groups.values(), key=lambda group: -len(group[0]))

    # Adapted from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.encode_tokens (the backbone gets input ids and attention mask only, no token_type_ids)
    def encode_tokens(self, texts: list[str], batch_size: int = 32, device: str | torch.device | None = None) -> list:
        """Contextual token vectors of the backbone (no entity input), one forward pass per text.

        Returns, per text, a dict with ``embeddings`` ``(n_tokens, hidden)`` and ``offsets`` ``(n_tokens, 2)``
        (character spans in the text), special tokens excluded; texts are truncated to ``config.max_seq_length``.
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
                inputs = {k: encoding[k].to(device) for k in ("input_ids", "attention_mask")}
                hidden = self.backbone(**inputs).last_hidden_state.float().cpu()
                for i in range(len(batch)):
                    keep = (encoding["attention_mask"][i] == 1) & (encoding["special_tokens_mask"][i] == 0)
                    results.append(
                        {"embeddings": hidden[i][keep].numpy(), "offsets": encoding["offset_mapping"][i][keep].numpy()}
                    )
        if was_training:
            self.train()
        return results

    def similarity(self, a, b) -> np.ndarray:
        """Cosine similarity matrix between two lists of mentions (or phrases)."""
        ea = self.encode([a] if _is_single(a) else a)
        eb = self.encode([b] if _is_single(b) else b)
        return ea @ eb.T


# ------------------------------------------------------------------------------------------------------- helpers
def _is_single(mentions) -> bool:
    """A lone string, or a lone ``(sentence, (start, end))`` pair (not a list of mentions)."""
    if isinstance(mentions, str):
        return True
    return (
        isinstance(mentions, tuple)
        and len(mentions) == 2
        and isinstance(mentions[0], str)
        and isinstance(mentions[1], (tuple, list))
    )


def _check_mentions(mentions) -> list[tuple[str, int, int]]:
    """Validate mentions; returns ``(sentence, start, end)`` triples (a plain string spans its stripped text)."""
    if isinstance(mentions, str) or not isinstance(mentions, (list, tuple)):
        raise ValueError(
            f"Expected a list of mentions ((sentence, (start, end)) pairs or strings), got {type(mentions).__name__}."
        )
    if len(mentions) == 0:
        raise ValueError("Expected at least one mention, got an empty list.")
    items = []
    for i, mention in enumerate(mentions):
        if isinstance(mention, str):
            if not mention.strip():
                raise ValueError(f"Text {i} is empty or only whitespace; every text needs at least one character.")
            _check_unicode(mention, f"Text {i}")
            start = len(mention) - len(mention.lstrip())
            items.append((mention, start, len(mention.rstrip())))
            continue
        if not isinstance(mention, (tuple, list)) or len(mention) != 2:
            raise ValueError(
                f"Mention {i} must be a string or a (sentence, (start, end)) pair, got {type(mention).__name__}: "
                f"{str(mention)[:80]!r}."
            )
        sentence, span = mention
        if not isinstance(sentence, str):
            raise ValueError(f"Mention {i}: the sentence is a {type(sentence).__name__}, not a string: {sentence!r}.")
        if not sentence.strip():
            raise ValueError(f"Mention {i}: the sentence is empty or only whitespace.")
        _check_unicode(sentence, f"Mention {i}: the sentence")
        try:
            start, end = (operator.index(x) for x in span)
        except (TypeError, ValueError):
            raise ValueError(
                f"Mention {i}: the span must be a (start, end) pair of integer character offsets, got {span!r}."
            ) from None
        if start < 0 or end > len(sentence):
            raise ValueError(
                f"Mention {i}: the span ({start}, {end}) is outside the sentence (valid offsets: 0..{len(sentence)})."
            )
        if start >= end:
            raise ValueError(f"Mention {i}: empty span ({start}, {end}); the end must be after the start.")
        if not sentence[start:end].strip():
            raise ValueError(f"Mention {i}: empty span ({start}, {end}) covers only whitespace.")
        items.append((sentence, start, end))
    return items


def _no_span_token(index: int, sentence: str, start: int, end: int) -> str:
    return (
        f"Mention {index}: the span ({start}, {end}) = {sentence[start:end]!r} covers no token of the sentence (only "
        "characters the tokenizer drops)."
    )


def _segment_cut(sentence: str, position: int) -> int:
    """Where LUKE's tokenizer cuts a sentence for a span boundary at ``position``: one character earlier when a space
    precedes it (the space belongs to the word after it in byte-level BPE)."""
    return position - 1 if position > 0 and sentence[position - 1] == " " else position


def _window(first: int, last: int, n_tokens: int, budget: int) -> tuple[int, int]:
    """``[start, end)`` of ``budget`` tokens out of ``n_tokens``, centred on the span ``[first, last)``.

    A span longer than the budget keeps its first ``budget`` tokens.
    """
    span = last - first
    if span >= budget:
        return first, first + budget
    start = first - (budget - span) // 2
    start = max(0, min(start, n_tokens - budget))
    return start, start + budget


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


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._progress
def _progress(iterable, show: bool, desc: str):
    if show and tqdm is not None and not os.environ.get("PHRASEZOO_NO_PROGRESS"):
        return tqdm(iterable, desc=desc)
    return iterable


UCTopicConfig.register_for_auto_class()
UCTopicModel.register_for_auto_class("AutoModel")
