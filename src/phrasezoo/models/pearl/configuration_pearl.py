"""Configuration of PEARL (Chen et al., 2024): phrase encoder + LOVE-style character encoder + phrase-type head.

Self-contained: imports only the standard library and transformers, because `save_pretrained` copies this file
into the exported folder.
"""

from __future__ import annotations

import string

from transformers import PretrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

PHRASE_CLASSES = ("NP", "VP", "PP", "ADVP", "ADJP")
ENTITY_TYPES = (
    "CARDINAL", "DATE", "PERSON", "NORP", "GPE", "LAW", "PERCENT", "ORDINAL", "MONEY", "WORK_OF_ART", "FAC",
    "TIME", "QUANTITY", "PRODUCT", "LANGUAGE", "ORG", "LOC", "EVENT", "OTHER",
)  # fmt: skip
#: The paper's 95 phrase types: 5 lexical classes x (18 OntoNotes entity types + OTHER), e.g. ``NP-ORG``.
DEFAULT_TYPE_LABELS = tuple(f"{cls}-{ent}" for cls in PHRASE_CLASSES for ent in ENTITY_TYPES)
#: Characters the character encoder knows; anything else maps to the unknown-character id.
DEFAULT_CHAR_VOCAB = (
    string.ascii_letters + string.digits + string.punctuation + "àáâäãåçèéêëìíîïñòóôöõøùúûüýÿæœß–—’“”…°"
)


class PearlConfig(PretrainedConfig):
    r"""Configuration of :class:`PearlModel`.

    Args:
        backbone_config: config (or dict) of the pretrained phrase encoder (BERT, MPNet, ... any `AutoModel`).
        max_seq_length: token limit of the phrase encoder; longer inputs are truncated (see ``PearlModel.encode``).
        use_char_encoder: include the character encoder (the paper's model); ``False`` gives the "- Character
            Encoder" ablation.
        char_vocab: characters of the character encoder, saved with the model so that the folder is complete.
        char_lowercase: case-fold words before the character encoder. On by default: the word vectors it learns to
            mimic (GloVe) and the uncased backbones are lowercase, and with case the character space splits
            "Famotidine" from "famotidine" before anything else.
        char_hidden_size, char_num_heads, char_intermediate_size: width of the one mixed-attention layer.
        char_max_word_chars, char_max_pieces, char_max_words: input limits per word / per phrase.
        char_word_dim: size of the word vectors the character encoder produces; it is pretrained to mimic word
            vectors of this size (GloVe 50-d for the embedded default), as LOVE does.
        char_proj_dim: size of the fully connected projection of the pooled character vector ("reduce its
            dimension" in the paper).
        char_weight: weight of the character part in the concatenated embedding. Both parts are L2-normalised
            before concatenation, so cosine(a, b) = (cos_phrase + w^2 cos_char) / (1 + w^2).
        char_dropout: dropout inside the character encoder.
        type_labels: names of the phrase-type classes of the type head (95 by default). An empty list gives a
            model without the head: the authors' published checkpoints (``phrasezoo convert pearl``) ship none.
        lexical_dim: size of the optional lexical channel (0, the default: none). When set, ``encode`` concatenates
            a hashed character n-gram vector (``char_wb`` n-grams of ``lexical_ngram_range``, lower-cased, signed
            feature hashing into ``lexical_dim`` buckets, sublinear tf x IDF from a corpus, L2-normalised) weighted by
            ``lexical_weight``, so a plain cosine (faiss, splink, any user code) sees spelling as a TF-IDF matcher
            does: cosine(a, b) = (cos_phrase + w_char^2 cos_char + w_lex^2 cos_lex) / (1 + w_char^2 + w_lex^2). The
            IDF is a buffer of the weights (``PearlModel.set_lexical_channel`` fits it). The type head ignores it.
        lexical_weight: weight of the lexical channel in the concatenation.
        lexical_ngram_range: smallest and largest n-gram length of the lexical channel.
    """

    model_type = "phrasezoo-pearl"

    def __init__(
        self,
        backbone_config: dict | PretrainedConfig | None = None,
        max_seq_length: int = 256,
        use_char_encoder: bool = True,
        char_vocab: str = DEFAULT_CHAR_VOCAB,
        char_lowercase: bool = True,
        char_hidden_size: int = 128,
        char_num_heads: int = 4,
        char_intermediate_size: int = 256,
        char_max_word_chars: int = 20,
        char_max_pieces: int = 6,
        char_max_words: int = 16,
        char_word_dim: int = 50,
        char_proj_dim: int = 32,
        char_weight: float = 0.5,
        char_dropout: float = 0.1,
        type_labels: list[str] | tuple[str, ...] | None = None,
        lexical_dim: int = 0,
        lexical_weight: float = 0.0,
        lexical_ngram_range: list[int] | tuple[int, int] = (2, 4),
        **kwargs,
    ):
        if backbone_config is None:
            backbone_config = CONFIG_MAPPING["bert"]()
        elif isinstance(backbone_config, dict):
            backbone_config = dict(backbone_config)
            backbone_config = CONFIG_MAPPING[backbone_config.pop("model_type")](**backbone_config)
        self.backbone_config = backbone_config
        self.max_seq_length = max_seq_length
        self.use_char_encoder = use_char_encoder
        self.char_vocab = char_vocab
        self.char_lowercase = char_lowercase
        self.char_hidden_size = char_hidden_size
        self.char_num_heads = char_num_heads
        self.char_intermediate_size = char_intermediate_size
        self.char_max_word_chars = char_max_word_chars
        self.char_max_pieces = char_max_pieces
        self.char_max_words = char_max_words
        self.char_word_dim = char_word_dim
        self.char_proj_dim = char_proj_dim
        self.char_weight = char_weight
        self.char_dropout = char_dropout
        self.type_labels = list(type_labels) if type_labels is not None else list(DEFAULT_TYPE_LABELS)
        if lexical_dim < 0 or lexical_weight < 0:
            raise ValueError(f"lexical_dim and lexical_weight must be >= 0, got {lexical_dim} and {lexical_weight}.")
        if len(lexical_ngram_range) != 2 or not 1 <= lexical_ngram_range[0] <= lexical_ngram_range[1]:
            raise ValueError(f"lexical_ngram_range must be (min, max) with 1 <= min <= max, got {lexical_ngram_range}.")
        self.lexical_dim = int(lexical_dim)
        self.lexical_weight = float(lexical_weight)
        self.lexical_ngram_range = [int(n) for n in lexical_ngram_range]
        super().__init__(**kwargs)

    @property
    def phrase_dim(self) -> int:
        return self.backbone_config.hidden_size

    @property
    def joint_dim(self) -> int:
        """Size of the phrase + character concatenation (what the type head reads)."""
        return self.phrase_dim + (self.char_proj_dim if self.use_char_encoder else 0)

    @property
    def embedding_dim(self) -> int:
        """Size of the vectors ``encode`` returns (the joint vector plus the lexical channel, if any)."""
        return self.joint_dim + self.lexical_dim
