"""Configuration of Phrase-BERT (Wang, Thompson & Iyyer, EMNLP 2021): a backbone with mean pooling.

Self-contained: imports only transformers, because `save_pretrained` copies this file into the exported folder.
"""

from __future__ import annotations

from transformers import PretrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING


class PhraseBertConfig(PretrainedConfig):
    r"""Configuration of :class:`PhraseBertModel`.

    Args:
        backbone_config: config (or dict) of the pretrained encoder (BERT, MPNet, ... any `AutoModel`).
        max_seq_length: token limit of the encoder (special tokens included). Longer inputs are truncated by
            ``encode`` (or rejected with ``truncate=False``). 256 covers the paper's 120-word contexts.
    """

    model_type = "phrasezoo-phrase-bert"

    def __init__(
        self,
        backbone_config: dict | PretrainedConfig | None = None,
        max_seq_length: int = 256,
        **kwargs,
    ):
        if backbone_config is None:
            backbone_config = CONFIG_MAPPING["bert"]()
        elif isinstance(backbone_config, dict):
            backbone_config = dict(backbone_config)
            backbone_config = CONFIG_MAPPING[backbone_config.pop("model_type")](**backbone_config)
        self.backbone_config = backbone_config
        self.max_seq_length = max_seq_length
        super().__init__(**kwargs)

    @property
    def embedding_dim(self) -> int:
        """Size of the vectors ``encode`` returns."""
        return self.backbone_config.hidden_size
