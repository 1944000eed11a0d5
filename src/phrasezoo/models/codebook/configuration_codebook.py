"""Configuration of the multi-facet codebook model (Chang, Agrawal & McCallum, AAAI 2021).

Self-contained: imports only transformers, because `save_pretrained` copies this file into the exported folder.
"""

from __future__ import annotations

from transformers import PretrainedConfig


class CodebookConfig(PretrainedConfig):
    r"""Configuration of :class:`CodebookSeq2Embeddings`: a word-level transformer encoder-decoder from a word
    sequence to K codebook embeddings (facets) in a frozen word-vector space.

    There is no pretrained backbone: the model is built from this config plus a word-vector table
    (:meth:`CodebookSeq2Embeddings.from_word_vectors`), which initialises the input embeddings and fills the frozen
    target matrix. Defaults are the CPU recipe ``codebook-sentence-mini`` (GloVe 6B 50-d targets).

    Args:
        vocab_size: word types, the three specials included (``<pad>`` 0, ``<unk>`` 1, ``<eos>`` 2).
        word_dim: dimension |E| of the word vectors (input embeddings and the output/target space).
        d_model: transformer width; a linear map joins it to ``word_dim`` on the way in and out when they differ.
        n_heads, ffn_dim: attention heads and feed-forward width of every transformer layer.
        encoder_layers, decoder_layers: depth of the encoder TE and the decoder TD.
        n_facets: K, the number of codebook embeddings per text.
        cross_attention: decoder slots attend to the encoder states (the paper's sentence models) or only to each
            other (its phrase models).
        dropout: dropout inside the transformer layers (0.1 sentences, 0.5 phrases in the paper).
        input_dropout: locked (variational) dropout on the input word embeddings, one mask per sequence.
        positional_dropout: dropout on the K decoder inputs ``L_k(e_<eos>)`` (the official code's ``dropoutp``).
        max_seq_length: tokens per text, ``<eos>`` included (50 sentences, 6 phrases). Longer texts are truncated
            on the tokenizer's ``truncation_side`` (``"left"`` keeps the last words, as the official phrase code).
        nnsc_lambda: lam of the paper's eq. 1 (sparsity weight). 0.4 equals the official code's 0.2 on half the
            squared error.
        nnsc_solver: ``"pgd"`` (batched FISTA, default) or ``"rmsprop"`` (the official loop).
        nnsc_max_iter, nnsc_tol: FISTA iteration cap and projected-gradient tolerance (100 and 1e-3 land within
            ~1e-6 of the optimum on training-shaped batches, where the official loop stays 3-5% above it; see
            ``benchmarks/speed_codebook_nnsc.py``).
        rmsprop_lr, rmsprop_train_steps, rmsprop_test_steps: the official loop's settings (0.05, 60, 1,000).
        nnsc_guard: the official code's guard on the negative term (see ``nnsc.nnsc_loss``).
        lowercase: the tokenizer lowercases (uncased target vectors, e.g. GloVe 6B).
        sif_alpha: alpha of the SIF word weight alpha / (alpha + p(w)) (1e-4 in the paper).
        truncation_side: which end of an over-long text the tokenizer drops (``"left"`` keeps the last words).
        vocabulary: words (no specials) of a model built from this config alone, e.g. a test's tiny model: the
            model then builds its word tokenizer from it and ``vocab_size`` follows. Models built by
            ``from_word_vectors`` leave it ``None``; their vocabulary lives in ``tokenizer.json``.
    """

    model_type = "phrasezoo_codebook"

    def __init__(
        self,
        vocab_size: int = 3,
        word_dim: int = 50,
        d_model: int = 100,
        n_heads: int = 4,
        ffn_dim: int = 400,
        encoder_layers: int = 3,
        decoder_layers: int = 2,
        n_facets: int = 10,
        cross_attention: bool = True,
        dropout: float = 0.1,
        input_dropout: float = 0.1,
        positional_dropout: float = 0.1,
        max_seq_length: int = 50,
        nnsc_lambda: float = 0.4,
        nnsc_solver: str = "pgd",
        nnsc_max_iter: int = 100,
        nnsc_tol: float = 1e-3,
        rmsprop_lr: float = 0.05,
        rmsprop_train_steps: int = 60,
        rmsprop_test_steps: int = 1000,
        nnsc_guard: bool = True,
        lowercase: bool = True,
        sif_alpha: float = 1e-4,
        truncation_side: str = "right",
        vocabulary: list[str] | None = None,
        layer_norm_eps: float = 1e-12,
        initializer_range: float = 0.02,
        pad_token_id: int = 0,
        unk_token_id: int = 1,
        eos_token_id: int = 2,
        **kwargs,
    ):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}).")
        if n_facets < 1:
            raise ValueError(f"n_facets must be at least 1, got {n_facets}.")
        if max_seq_length < 2:
            raise ValueError(f"max_seq_length must leave room for a word and <eos>, got {max_seq_length}.")
        if truncation_side not in ("left", "right"):
            raise ValueError(f"truncation_side must be 'left' or 'right', got {truncation_side!r}.")
        if vocabulary is not None:
            vocabulary = list(vocabulary)
            vocab_size = len(vocabulary) + 3
        if nnsc_solver not in ("pgd", "rmsprop"):
            raise ValueError(f"nnsc_solver must be 'pgd' or 'rmsprop', got {nnsc_solver!r}.")
        self.vocab_size = vocab_size
        self.word_dim = word_dim
        self.d_model = d_model
        self.n_heads = n_heads
        self.ffn_dim = ffn_dim
        self.encoder_layers = encoder_layers
        self.decoder_layers = decoder_layers
        self.n_facets = n_facets
        self.cross_attention = cross_attention
        self.dropout = dropout
        self.input_dropout = input_dropout
        self.positional_dropout = positional_dropout
        self.max_seq_length = max_seq_length
        self.nnsc_lambda = nnsc_lambda
        self.nnsc_solver = nnsc_solver
        self.nnsc_max_iter = nnsc_max_iter
        self.nnsc_tol = nnsc_tol
        self.rmsprop_lr = rmsprop_lr
        self.rmsprop_train_steps = rmsprop_train_steps
        self.rmsprop_test_steps = rmsprop_test_steps
        self.nnsc_guard = nnsc_guard
        self.lowercase = lowercase
        self.sif_alpha = sif_alpha
        self.truncation_side = truncation_side
        self.vocabulary = vocabulary
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range
        super().__init__(pad_token_id=pad_token_id, eos_token_id=eos_token_id, **kwargs)
        self.unk_token_id = unk_token_id

    @property
    def embedding_dim(self) -> int:
        """Size of the vectors ``encode`` returns (mean of the encoder states)."""
        return self.d_model
