"""Multi-facet codebook embeddings (Chang, Agrawal & McCallum, AAAI 2021) in the zoo: the registry entry.

No pretrained encoder: a recipe builds the model from its training data's vocabulary and a word-vector table
(``from_config``), trains it with the NNSC loss (``task.py``, data in ``data.py``) and is evaluated with the
``facets_sentence`` / ``facets_phrase`` task groups. The model is :mod:`phrasezoo.models.codebook`.
"""

from __future__ import annotations

from phrasezoo.models.codebook.configuration_codebook import CodebookConfig
from phrasezoo.models.codebook.modeling_codebook import CodebookSeq2Embeddings
from phrasezoo.zoo.registry import Method, OutputKind, signature_args

from .assembly import build_task, from_config
from .data import build_codebook_data

#: Words of the tiny contract-test model (the config builds its word tokenizer from them; real models get theirs from
#: the training data). "word" is the contract's over-long input.
TINY_VOCABULARY = [
    "the",
    "a",
    "an",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "it",
    "word",
    "man",
    "men",
    "woman",
    "lifting",
    "weights",
    "garage",
    "civil",
    "order",
    "real",
    "property",
    "law",
    "hot",
    "dog",
    "sms",
    "messages",
    "used",
    "some",
    "countries",
    "reminders",
    "hospital",
    "appointments",
    ".",
    ",",
]
TINY_CONFIG = {"vocabulary": TINY_VOCABULARY, "d_model": 16, "n_heads": 2, "ffn_dim": 32, "encoder_layers": 1,
               "decoder_layers": 1, "n_facets": 3, "max_seq_length": 8}  # fmt: skip


def check_recipe(recipe) -> None:
    """Sentence and phrase recipes need model settings that fit their data (raise ``ValueError`` otherwise)."""
    if recipe.data.get("lowercase", True) != recipe.model.get("lowercase", True):
        raise ValueError(f"{recipe.name}: data.lowercase and model.lowercase must agree (cased or uncased vectors).")
    kind = recipe.data.get("kind", "sentence")
    limit = recipe.model.get("max_seq_length", 50)
    if kind == "phrase":
        words = recipe.data.get("max_phrase_words", 5)
        if limit < words + 1:
            raise ValueError(f"{recipe.name}: model.max_seq_length {limit} < data.max_phrase_words {words} + <eos>.")
        if recipe.model.get("cross_attention", True):
            raise ValueError(f"{recipe.name}: phrase models have no cross-attention (model.cross_attention: false).")
    else:
        words = recipe.data.get("max_sentence_words", 49)
        if limit < words + 1:
            raise ValueError(f"{recipe.name}: model.max_seq_length {limit} < data.max_sentence_words {words} + <eos>.")


METHOD = Method(
    name="codebook",
    description="Multi-facet codebook embeddings: a text -> K cluster centres in a frozen word-vector space, "
    "trained with the NNSC loss (Chang et al., AAAI 2021)",
    config_class=CodebookConfig,
    model_class=CodebookSeq2Embeddings,
    model_files=(
        "phrasezoo.models.codebook.configuration_codebook",
        "phrasezoo.models.codebook.modeling_codebook",
        "phrasezoo.models.codebook.inference_codebook",
        "phrasezoo.models.codebook.nnsc",
        "phrasezoo.models.codebook.tokenization_codebook",
    ),
    output_kind=OutputKind.FACETS,
    from_config=from_config,
    build_task=build_task,
    args={
        "model": signature_args(
            CodebookConfig.__init__,
            # set from the data and vectors: the vocabulary, its size and dimension, the specials' ids, and which
            # end of a long text is cut (phrase models keep their last words)
            exclude=(
                "vocab_size",
                "word_dim",
                "pad_token_id",
                "unk_token_id",
                "eos_token_id",
                "vocabulary",
                "truncation_side",
            ),  # fmt: skip
        ),
        "data": signature_args(build_codebook_data, exclude=("cache", "progress")),
        "task": {},
    },
    check_recipe=check_recipe,
    tiny_config=TINY_CONFIG,
    tiny_variants={"phrase": {**TINY_CONFIG, "cross_attention": False, "truncation_side": "left"}},
    tiny_tokenizer=None,
    sample_inputs=[
        "civil order",
        "real property",
        "A man is lifting weights in a garage .",
        "hot dog",
        "SMS messages are used in some countries as reminders of hospital appointments .",
    ],
    bad_inputs=[([], "empty list"), ([""], "empty"), (["ok", 3], "not a string"), ("   ", "empty")],
    paper_rows={},
)
