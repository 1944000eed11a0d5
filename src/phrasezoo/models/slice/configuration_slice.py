"""Configuration of SLICE (Orbach et al., 2024): span-aggregatable contextual token embeddings.

Self-contained: imports only transformers, because `save_pretrained` copies this file into the exported folder.
"""

from __future__ import annotations

from transformers import PretrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

SPAN_UNITS = ("word", "token")


class SliceConfig(PretrainedConfig):
    r"""Configuration of :class:`SliceModel`.

    A SLICE model is a fully fine-tuned encoder without any head: its final-layer token vectors are trained so that
    the mean of the vectors of any word span of a passage (from ONE forward pass of the passage) matches the mean
    vector of a query encoded on its own.

    Args:
        backbone_config: config (or dict) of the pretrained encoder (BERT, MPNet, ... any `AutoModel`).
        max_seq_length: token limit of one passage window (special tokens included). Longer passages are split into
            overlapping windows by the span API so that every span of up to ``max_span_words`` words lies wholly
            inside one window; ``encode`` truncates (or rejects with ``truncate=False``) at this limit.
        query_max_length: token limit of queries in training (the recipes' data loaders use it; MS MARCO queries and
            our synthetic ones are short).
        max_span_words: longest span considered at inference (the paper evaluates with MAX_SIZE = 20).
        min_span_words: shortest span considered at inference (the paper's a = 1).
        train_max_span_words: longest span in the training loss (the paper's b = 10, from MS MARCO query lengths).
        span_unit: ``"word"`` (default): a span unit is a whitespace-separated word of the text and all of its word
            pieces are pooled together, so spans never cut a word and their character offsets are clean (the
            project's STS-B-Context task uses the same words). ``"token"``: every word piece is a unit.
            Special tokens ([CLS], [SEP], padding) never enter a span or a query pool (symmetry of the two sides).
        similarity_scale: lambda of the paper's loss, applied to the similarity mapped to [0, 1], s = (1 + cos) / 2,
            so the effective cosine scale is ``similarity_scale / 2``.
        special_token_ids: ids of the tokens excluded from pooling (CLS/SEP/BOS/EOS/PAD); filled from the tokenizer
            by ``from_backbone`` / ``set_tokenizer``. When empty, the first and last attended token are excluded.
    """

    model_type = "phrasezoo_slice"

    def __init__(
        self,
        backbone_config: dict | PretrainedConfig | None = None,
        max_seq_length: int = 128,
        query_max_length: int = 32,
        max_span_words: int = 20,
        min_span_words: int = 1,
        train_max_span_words: int = 10,
        span_unit: str = "word",
        similarity_scale: float = 30.0,
        special_token_ids: list[int] | None = None,
        **kwargs,
    ):
        if backbone_config is None:
            backbone_config = CONFIG_MAPPING["bert"]()
        elif isinstance(backbone_config, dict):
            backbone_config = dict(backbone_config)
            backbone_config = CONFIG_MAPPING[backbone_config.pop("model_type")](**backbone_config)
        if span_unit not in SPAN_UNITS:
            raise ValueError(f"span_unit must be one of {SPAN_UNITS}, got {span_unit!r}.")
        if not 1 <= min_span_words <= max_span_words:
            raise ValueError(
                f"Need 1 <= min_span_words <= max_span_words, got min_span_words={min_span_words}, "
                f"max_span_words={max_span_words}."
            )
        if train_max_span_words < 1:
            raise ValueError(f"train_max_span_words must be >= 1, got {train_max_span_words}.")
        self.backbone_config = backbone_config
        self.max_seq_length = max_seq_length
        self.query_max_length = query_max_length
        self.max_span_words = max_span_words
        self.min_span_words = min_span_words
        self.train_max_span_words = train_max_span_words
        self.span_unit = span_unit
        self.similarity_scale = similarity_scale
        self.special_token_ids = list(special_token_ids) if special_token_ids else []
        super().__init__(**kwargs)

    @property
    def embedding_dim(self) -> int:
        """Size of the vectors ``encode`` returns (the backbone's hidden size)."""
        return self.backbone_config.hidden_size
