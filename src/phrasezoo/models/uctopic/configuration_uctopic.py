"""Configuration of UCTopic (Li et al., 2022): a context-aware phrase encoder for phrase mentions in sentences.

Self-contained: imports only the standard library and transformers, because `save_pretrained` copies this file
into the exported folder.
"""

from __future__ import annotations

from transformers import PretrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

#: How the span vector is read from the backbone.
SPAN_REPRESENTATIONS = ("entity", "mean")
#: How a mention's sentence becomes tokens.
SPAN_TOKENIZATIONS = ("sentence", "segments")


class UCTopicConfig(PretrainedConfig):
    r"""Configuration of :class:`UCTopicModel`.

    Args:
        backbone_config: config (or dict) of the pretrained encoder. A LUKE config gives the paper's model; any
            other ``AutoModel`` encoder (BERT, MiniLM, MPNet, ...) gives the token-pooling variant.
        span_representation: ``"entity"`` (LUKE only): the phrase is one entity input of LUKE, the ``[MASK]`` entity
            placed on the span's token positions, and its final entity state is the span vector (the paper);
            ``"mean"``: the mean of the span's final token states from one pass of the sentence. Default: ``"entity"``
            for a LUKE backbone, ``"mean"`` otherwise.
        mask_entity_id: id of the ``[MASK]`` entity in the backbone's entity vocabulary (``"entity"`` only).
        max_mention_length: most span tokens given to LUKE's entity position ids (LUKE's tokenizer uses 30); longer
            spans keep their first tokens (``"entity"`` only; ``"mean"`` pools every span token).
        max_seq_length: token limit per sentence, special tokens included. Longer sentences are cut to a window of
            this many tokens around the span (see ``UCTopicModel.encode``).
        span_tokenization: ``"sentence"`` (default): the sentence is tokenized whole and the span's tokens are those
            that overlap its characters; ``"segments"``: the text before the span, the span and the text after it
            are tokenized apart, each with a leading space when it has none, which is what the authors' code does
            (``LukeTokenizer(text, entity_spans=[span], add_prefix_space=True)``) and what their published
            checkpoint was trained with (``phrasezoo convert uctopic`` sets it).
        use_mlm_head: add a masked-language-model head for the optional MLM loss of pretraining (the paper trains
            with it). It is not used to embed phrases.
        mlp_only_train: use the MLP head in training only; in eval mode the span vector itself is the embedding
            (SimCSE's ``mlp_only_train``). Default ``False``: the paper's head is used at inference too. The
            contrastive loss spreads the head's outputs over the sphere; the span vector under it keeps more of the
            type structure that clustering needs (a recipe chooses this on dev data).
    """

    model_type = "phrasezoo-uctopic"

    def __init__(
        self,
        backbone_config: dict | PretrainedConfig | None = None,
        span_representation: str | None = None,
        mask_entity_id: int = 2,
        max_mention_length: int = 30,
        max_seq_length: int = 256,
        span_tokenization: str = "sentence",
        use_mlm_head: bool = False,
        mlp_only_train: bool = False,
        **kwargs,
    ):
        if backbone_config is None:
            backbone_config = CONFIG_MAPPING["bert"]()
        elif isinstance(backbone_config, dict):
            backbone_config = dict(backbone_config)
            backbone_config = CONFIG_MAPPING[backbone_config.pop("model_type")](**backbone_config)
        self.backbone_config = backbone_config
        is_luke = backbone_config.model_type == "luke"
        if span_representation is None:
            span_representation = "entity" if is_luke else "mean"
        for name, value, choices in (
            ("span_representation", span_representation, SPAN_REPRESENTATIONS),
            ("span_tokenization", span_tokenization, SPAN_TOKENIZATIONS),
        ):
            if value not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {value!r}.")
        if span_representation == "entity" and not is_luke:
            raise ValueError(
                f"span_representation='entity' needs a LUKE backbone (entity inputs); got "
                f"'{backbone_config.model_type}'. Use span_representation='mean' for other encoders."
            )
        if max_seq_length < 3:
            raise ValueError(
                f"max_seq_length must leave room for a token besides the special tokens: {max_seq_length}."
            )
        self.span_representation = span_representation
        self.span_tokenization = span_tokenization
        self.mask_entity_id = mask_entity_id
        self.max_mention_length = max_mention_length
        self.max_seq_length = max_seq_length
        self.use_mlm_head = use_mlm_head
        self.mlp_only_train = bool(mlp_only_train)
        super().__init__(**kwargs)

    @property
    def embedding_dim(self) -> int:
        """Size of the vectors ``encode`` returns (the MLP keeps the backbone's width)."""
        return self.backbone_config.hidden_size
