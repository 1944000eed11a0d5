"""Word-level tokenizer of the codebook model, as a standard ``PreTrainedTokenizerFast``.

The paper's model reads word tokens (not word pieces) followed by ``<eos>``. The tokenizer is a ``tokenizers``
WordLevel model (unknown words -> ``<unk>``), an optional NFKC + lowercase normaliser (for uncased word vectors), the
``\\w+|[^\\w\\s]+`` pre-tokenizer (words and punctuation runs) and a post-processor appending ``<eos>``. Saved next
to the weights (``tokenizer.json``), it loads offline with ``AutoTokenizer.from_pretrained(folder)``.

Self-contained (transformers and its ``tokenizers`` dependency only).
"""

from __future__ import annotations

from transformers import PreTrainedTokenizerFast

try:  # `tokenizers` is a dependency of transformers; guarded so the contract's import check sees an optional import
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
except ImportError:  # pragma: no cover
    Tokenizer = None

PAD, UNK, EOS = "<pad>", "<unk>", "<eos>"
SPECIAL_TOKENS = (PAD, UNK, EOS)


def vocabulary_with_specials(words: list[str]) -> list[str]:
    """``<pad>``, ``<unk>``, ``<eos>`` (ids 0, 1, 2) followed by ``words`` without duplicates or specials."""
    seen = set(SPECIAL_TOKENS)
    vocab = list(SPECIAL_TOKENS)
    for word in words:
        if not isinstance(word, str) or not word:
            raise ValueError(f"Vocabulary entries must be non-empty strings, got {word!r}.")
        if word not in seen:
            seen.add(word)
            vocab.append(word)
    return vocab


def build_word_tokenizer(
    vocab: list[str], lowercase: bool = True, max_length: int = 50, truncation_side: str = "right"
) -> PreTrainedTokenizerFast:
    """A word-level fast tokenizer over ``vocab`` (which must start with ``<pad>``, ``<unk>``, ``<eos>``).

    ``max_length`` counts ``<eos>``; ``truncation_side="left"`` keeps the last words of a long text (the official
    phrase code keeps the last five).
    """
    if Tokenizer is None:  # pragma: no cover
        raise ImportError("Building a codebook tokenizer needs the `tokenizers` package: pip install tokenizers")
    if list(vocab[:3]) != list(SPECIAL_TOKENS):
        raise ValueError("The vocabulary must start with <pad>, <unk>, <eos>; build it with vocabulary_with_specials.")
    if truncation_side not in ("left", "right"):
        raise ValueError(f"truncation_side must be 'left' or 'right', got {truncation_side!r}.")
    if len(set(vocab)) != len(vocab):
        raise ValueError("The vocabulary has duplicate entries.")
    core = Tokenizer(WordLevel({word: i for i, word in enumerate(vocab)}, unk_token=UNK))
    steps = [normalizers.NFKC()] + ([normalizers.Lowercase()] if lowercase else [])
    core.normalizer = normalizers.Sequence(steps)
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS}", pair=f"$A {EOS} $B {EOS}", special_tokens=[(EOS, 2)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token=PAD,
        unk_token=UNK,
        eos_token=EOS,
        model_max_length=max_length,
        padding_side="right",
        truncation_side=truncation_side,
        model_input_names=["input_ids", "attention_mask"],
    )
