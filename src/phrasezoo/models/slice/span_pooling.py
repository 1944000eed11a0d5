"""Span pooling for SLICE: words of a passage, windows, and the best span of every passage from one forward pass.

One implementation serves training (differentiable, batched) and inference:

* :func:`passage_batch` tokenizes passages once, groups word pieces into words (whitespace-separated words by
  default, so a span never cuts a word), and lays the passages out as rows of model input; passages longer than the
  model takes are split into overlapping windows so that every span of up to ``span_words`` words lies wholly inside
  one window, and each span is *owned* by exactly one window (no duplicates).
* :func:`word_prefix_sums` sums the token vectors of each word and takes prefix sums over words, so the sum of any
  span is one subtraction.
* :func:`span_similarities` / :func:`best_span_similarity` gather all spans of ``min_words..max_words`` words at once
  (no Python loop over spans) and compare them with the query by cosine; the max is hard (sub-gradient reaches the
  query and the argmax span only, as in the paper's loss).

Self-contained (standard library, numpy and torch only) because ``save_pretrained`` copies it with the model code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

WORD = re.compile(r"\S+")


# ------------------------------------------------------------------------------------------ differentiable core
def word_prefix_sums(
    token_embeddings: torch.Tensor, word_index: torch.Tensor, n_words: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Prefix sums over words of the summed token vectors of each word.

    Args:
        token_embeddings: ``(B, T, d)`` token vectors of one forward pass.
        word_index: ``(B, T)`` long, the word (0-based, row-local) each token belongs to; ``-1`` for tokens that
            belong to no word (special tokens, padding).
        n_words: number of word slots ``W`` (default: the largest index + 1).

    Returns:
        ``prefix`` ``(B, W + 1, d)`` with ``prefix[:, j] = sum of the token vectors of words < j`` and
        ``prefix_counts`` ``(B, W + 1)`` the matching token counts. Differentiable w.r.t. ``token_embeddings``.
    """
    if token_embeddings.dim() != 3 or word_index.shape != token_embeddings.shape[:2]:
        raise ValueError(
            f"Expected token_embeddings (B, T, d) and word_index (B, T); got {tuple(token_embeddings.shape)} and "
            f"{tuple(word_index.shape)}."
        )
    batch, _, dim = token_embeddings.shape
    if n_words is None:
        n_words = max(int(word_index.max().item()) + 1, 1) if word_index.numel() else 1
    valid = word_index >= 0
    index = word_index.clamp(min=0).long()
    source = token_embeddings * valid.unsqueeze(-1).to(token_embeddings.dtype)
    sums = token_embeddings.new_zeros((batch, n_words, dim)).scatter_add(
        1, index.unsqueeze(-1).expand(-1, -1, dim), source
    )
    counts = token_embeddings.new_zeros((batch, n_words)).scatter_add(1, index, valid.to(token_embeddings.dtype))
    zero = token_embeddings.new_zeros((batch, 1, dim))
    prefix = torch.cat([zero, sums.cumsum(1)], dim=1)
    prefix_counts = torch.cat([zero[..., 0], counts.cumsum(1)], dim=1)
    return prefix, prefix_counts


def span_sums(
    token_embeddings: torch.Tensor,
    word_index: torch.Tensor,
    word_mask: torch.Tensor | None = None,
    min_words: int = 1,
    max_words: int = 20,
    start_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Summed token vectors of every span of ``min_words..max_words`` words, gathered at once from prefix sums.

    Args:
        token_embeddings, word_index: as in :func:`word_prefix_sums`.
        word_mask: ``(B, W)`` bool, the words that exist in each row (default: those with an index in
            ``word_index``). Words are contiguous from 0; a span must end at or before the row's word count.
        min_words, max_words: span lengths considered (inclusive).
        start_mask: ``(B, W)`` bool, words at which spans may start (windows use it so that each span is scored in
            exactly one window); default all.

    Returns:
        ``sums`` ``(B, W, L, d)`` (``sums[b, i, k]`` = sum over the span of ``min_words + k`` words starting at
        word ``i``), token ``counts`` ``(B, W, L)`` (divide for the mean) and ``valid`` ``(B, W, L)``: the span
        exists, has tokens and may start there. Differentiable.
    """
    _check_lengths(min_words, max_words)
    n_words = word_mask.shape[1] if word_mask is not None else None
    prefix, prefix_counts = word_prefix_sums(token_embeddings, word_index, n_words)
    batch, slots, dim = prefix.shape[0], prefix.shape[1] - 1, prefix.shape[2]
    device = prefix.device
    starts = torch.arange(slots, device=device).unsqueeze(1)  # (W, 1)
    lengths = torch.arange(min_words, max_words + 1, device=device).unsqueeze(0)  # (1, L)
    ends = starts + lengths  # (W, L)
    if word_mask is None:
        row_words = torch.where(word_index >= 0, word_index + 1, torch.zeros_like(word_index)).amax(dim=1)
    else:
        row_words = word_mask.sum(dim=1)
    valid = ends.unsqueeze(0) <= row_words.view(batch, 1, 1)  # (B, W, L)
    flat_end = ends.clamp(max=slots).reshape(-1)
    flat_start = starts.expand_as(ends).reshape(-1)
    sums = (prefix[:, flat_end] - prefix[:, flat_start]).view(batch, slots, -1, dim)
    counts = (prefix_counts[:, flat_end] - prefix_counts[:, flat_start]).view(batch, slots, -1)
    valid = valid & (counts > 0.5)
    if start_mask is not None:
        valid = valid & start_mask.bool().unsqueeze(-1)
    return sums, counts, valid


def span_similarities(
    query: torch.Tensor,
    token_embeddings: torch.Tensor,
    word_index: torch.Tensor,
    word_mask: torch.Tensor | None = None,
    min_words: int = 1,
    max_words: int = 20,
    start_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosine between each row's query ``(B, d)`` and every span of ``min_words..max_words`` words of the row.

    Other arguments as in :func:`span_sums`. Returns ``cos`` ``(B, W, L)`` with ``cos[b, i, k]`` = cosine of the
    span of ``min_words + k`` words starting at word ``i`` (``-inf`` where the span does not exist or has no
    tokens), and the boolean ``valid`` mask of the same shape. The mean and the sum of a span have the same cosine,
    so no division by the token count is needed. Differentiable.
    """
    if query.dim() != 2 or query.shape[0] != token_embeddings.shape[0]:
        raise ValueError(f"Expected query (B, d) with B={token_embeddings.shape[0]}, got {tuple(query.shape)}.")
    sums, _, valid = span_sums(token_embeddings, word_index, word_mask, min_words, max_words, start_mask)
    batch, slots, n_lengths, dim = sums.shape
    unit_query = F.normalize(query, dim=-1)
    cos = (F.normalize(sums.view(batch, -1, dim), dim=-1) @ unit_query.unsqueeze(-1)).view(batch, slots, n_lengths)
    return cos.masked_fill(~valid, float("-inf")), valid


def best_span_similarity(
    query: torch.Tensor,
    token_embeddings: torch.Tensor,
    word_index: torch.Tensor,
    word_mask: torch.Tensor | None = None,
    min_words: int = 1,
    max_words: int = 20,
    start_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Best cosine over all spans of each row, and that span as word indices ``[start, end)`` (end exclusive).

    Arguments as in :func:`span_similarities`. Hard max: the gradient reaches the query and the argmax span only.
    Rows without any valid span get ``-inf`` and the span ``(-1, -1)``.
    """
    cos, valid = span_similarities(query, token_embeddings, word_index, word_mask, min_words, max_words, start_mask)
    batch, slots, n_lengths = cos.shape
    best, flat = cos.view(batch, -1).max(dim=1)
    start = torch.div(flat, n_lengths, rounding_mode="floor")
    end = start + min_words + flat % n_lengths
    span = torch.stack([start, end], dim=1)
    span = torch.where(valid.view(batch, -1).any(dim=1, keepdim=True), span, torch.full_like(span, -1))
    return best, span


def slice_loss(cos_true: torch.Tensor, cos_false: torch.Tensor, scale: float = 30.0) -> torch.Tensor:
    """The paper's loss, mean over the batch: -l*s_t + log(exp(l*s_t) + exp(l*s_f)), s = (1 + cos) / 2, l = ``scale``.

    Equal to ``softplus(scale / 2 * (cos_false - cos_true))``.
    """
    sim_true, sim_false = (1 + cos_true) / 2, (1 + cos_false) / 2
    return F.softplus(scale * (sim_false - sim_true)).mean()


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Average of the token vectors where ``mask`` is true (zero vector when a row has none)."""
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)


def _check_lengths(min_words: int, max_words: int) -> None:
    for name, value in (("min_words", min_words), ("max_words", max_words)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}.")
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}.")
    if min_words < 1:
        raise ValueError(f"min_words must be at least 1, got {min_words}.")
    if min_words > max_words:
        raise ValueError(f"min_words ({min_words}) must not exceed max_words ({max_words}).")


# --------------------------------------------------------------------------------------------------- tokenizing
@dataclass
class PassageBatch:
    """Passages laid out as rows (windows) of model input, with each token's word.

    Tensors (``R`` rows, ``T`` tokens, ``W`` word slots): ``input_ids``, ``attention_mask``, ``token_type_ids``
    (``None`` if the tokenizer has none), ``word_index`` (row-local word of each token, -1 for special tokens and
    padding), ``word_mask`` (words present in the row), ``start_mask`` (words at which this row owns spans),
    ``row_passage`` (passage of each row) and ``row_first_word`` (passage-level index of the row's first word).
    ``word_chars[p]`` is the ``(n_words, 2)`` character span of every word of passage ``p``; ``token_offsets``
    ``(R, T, 2)`` the character span of every token in its passage (``(0, 0)`` for special tokens and padding).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    token_type_ids: torch.Tensor | None
    word_index: torch.Tensor
    word_mask: torch.Tensor
    start_mask: torch.Tensor
    row_passage: torch.Tensor
    row_first_word: torch.Tensor
    word_chars: list[np.ndarray] = field(default_factory=list)
    token_offsets: torch.Tensor | None = None

    def model_inputs(self, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
        """The tensors ``SliceModel.forward`` takes, moved to ``device``."""
        inputs = {"input_ids": self.input_ids, "attention_mask": self.attention_mask}
        if self.token_type_ids is not None:
            inputs["token_type_ids"] = self.token_type_ids
        return {k: v.to(device) for k, v in inputs.items()} if device is not None else inputs

    def select(self, rows) -> PassageBatch:
        """A batch of some rows only (for mini-batching), trimmed to their longest row and word count."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        attention = self.attention_mask[rows]
        n_tokens = max(int(attention.sum(1).max().item()), 1)
        word_mask = self.word_mask[rows]
        n_slots = max(int(word_mask.sum(1).max().item()), 1)
        return PassageBatch(
            input_ids=self.input_ids[rows, :n_tokens],
            attention_mask=attention[:, :n_tokens],
            token_type_ids=None if self.token_type_ids is None else self.token_type_ids[rows, :n_tokens],
            word_index=self.word_index[rows, :n_tokens],
            word_mask=word_mask[:, :n_slots],
            start_mask=self.start_mask[rows, :n_slots],
            row_passage=self.row_passage[rows],
            row_first_word=self.row_first_word[rows],
            word_chars=self.word_chars,
            token_offsets=None if self.token_offsets is None else self.token_offsets[rows, :n_tokens],
        )

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def text_words(text: str, offsets: list[tuple[int, int]], unit: str = "word") -> tuple[np.ndarray, np.ndarray]:
    """Words of ``text`` and the word of each token.

    ``unit="word"``: whitespace-separated words (a token belongs to the word containing its first character);
    ``unit="token"``: every word piece is its own unit. Returns ``(word_chars (n_words, 2), token_word (n_tokens,))``
    with ``-1`` for tokens outside any word (empty offsets).
    """
    if unit == "token":
        chars = np.asarray([o for o in offsets if o[1] > o[0]], dtype=np.int64).reshape(-1, 2)
        token_word = np.full(len(offsets), -1, dtype=np.int64)
        token_word[[i for i, o in enumerate(offsets) if o[1] > o[0]]] = np.arange(len(chars))
        return chars, token_word
    if unit != "word":
        raise ValueError(f"span unit must be 'word' or 'token', got {unit!r}.")
    chars = np.asarray([m.span() for m in WORD.finditer(text)], dtype=np.int64).reshape(-1, 2)
    off = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    if len(chars) == 0 or len(off) == 0:
        return chars, np.full(len(off), -1, dtype=np.int64)
    idx = np.searchsorted(chars[:, 0], off[:, 0], side="right") - 1
    inside = (idx >= 0) & (off[:, 0] < chars[np.clip(idx, 0, None), 1]) & (off[:, 1] > off[:, 0])
    return chars, np.where(inside, idx, -1)


def plan_windows(word_tokens: np.ndarray, capacity: int, span_words: int | None) -> list[tuple[int, int, int]]:
    """Windows over the words of one passage: ``(first_word, end_word, owned_end)``.

    Each window holds as many whole words as fit in ``capacity`` tokens. With ``span_words`` set, consecutive windows
    overlap by ``span_words - 1`` words and window ``w`` owns the spans that start in ``[first_w, first_{w+1})``,
    so every span of at most ``span_words`` words is scored in exactly one window that contains it whole (a window
    smaller than ``span_words`` words, possible only with extremely long words, loses its longest spans). With
    ``span_words=None`` the passage is truncated to one window. A single word longer than ``capacity`` is cut.
    """
    n = len(word_tokens)
    if n == 0:
        return [(0, 0, 0)]
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end, used = start, 0
        while end < n and used + word_tokens[end] <= capacity:
            used += int(word_tokens[end])
            end += 1
        if end == start:  # one word longer than a whole window: keep its first pieces
            end = start + 1
        windows.append((start, end))
        if end >= n or span_words is None:
            break
        start = max(end - (span_words - 1), start + 1)
    owned = [windows[i + 1][0] for i in range(len(windows) - 1)] + [windows[-1][1]]
    return [(a, b, c) for (a, b), c in zip(windows, owned)]


def special_token_layout(tokenizer) -> tuple[list[int], list[int]]:
    """Ids the tokenizer puts before and after the content of a single text (e.g. ``[CLS]`` and ``[SEP]``)."""
    probe = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    for i in range(len(full) - len(probe) + 1):
        if full[i : i + len(probe)] == probe:
            return list(full[:i]), list(full[i + len(probe) :])
    raise ValueError("Could not locate the content inside the tokenizer's special-token template.")


def passage_batch(
    tokenizer,
    passages: list[str],
    max_length: int,
    span_words: int | None = None,
    unit: str = "word",
) -> PassageBatch:
    """Tokenize ``passages`` once and lay them out as model rows with word boundaries.

    Args:
        tokenizer: a fast tokenizer (character offsets are needed).
        passages: the texts.
        max_length: tokens per row, special tokens included.
        span_words: ``None`` truncates each passage to one row at a word boundary (training); an integer splits long
            passages into windows overlapping by ``span_words - 1`` words, so that every span of up to that many
            words lies in (and is owned by) exactly one row (inference).
        unit: ``"word"`` (whitespace words, all pieces pooled) or ``"token"`` (word pieces).
    """
    if not isinstance(passages, (list, tuple)) or not passages:
        raise ValueError("Expected a non-empty list of passage strings.")
    before, after = special_token_layout(tokenizer)
    capacity = max_length - len(before) - len(after)
    if capacity < 1:
        raise ValueError(f"max_length={max_length} leaves no room for content after the special tokens.")
    # verbose=False: passages longer than the model takes are windowed below, not fed whole (no length warning)
    encoding = tokenizer(list(passages), add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    rows: list[tuple] = []  # ids, token words, passage, first word, n words, owned starts, token offsets
    word_chars = []
    for p, text in enumerate(passages):
        ids, offsets = encoding["input_ids"][p], [tuple(o) for o in encoding["offset_mapping"][p]]
        chars, token_word = text_words(text, offsets, unit)
        word_chars.append(chars)
        keep = token_word >= 0
        ids_kept, words_kept = np.asarray(ids, dtype=np.int64)[keep], token_word[keep]
        offsets_kept = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)[keep]
        word_tokens = np.bincount(words_kept, minlength=len(chars)) if len(chars) else np.zeros(0, np.int64)
        token_start = np.concatenate([[0], np.cumsum(word_tokens)]).astype(np.int64)
        for first, end, owned in plan_windows(word_tokens, capacity, span_words):
            lo, hi = token_start[first], min(token_start[end], token_start[first] + capacity)
            piece_ids = ids_kept[lo:hi].tolist()
            piece_words = (words_kept[lo:hi] - first).tolist()
            rows.append((piece_ids, piece_words, p, first, end - first, owned - first, offsets_kept[lo:hi]))
    n_tokens = max(len(r[0]) for r in rows) + len(before) + len(after)
    n_slots = max(max(r[4] for r in rows), 1)
    count = len(rows)
    input_ids = torch.full((count, n_tokens), pad_id, dtype=torch.long)
    attention = torch.zeros((count, n_tokens), dtype=torch.long)
    word_index = torch.full((count, n_tokens), -1, dtype=torch.long)
    word_mask = torch.zeros((count, n_slots), dtype=torch.bool)
    start_mask = torch.zeros((count, n_slots), dtype=torch.bool)
    token_offsets = torch.zeros((count, n_tokens, 2), dtype=torch.long)
    for r, (piece_ids, piece_words, _, _, n_words, owned, piece_offsets) in enumerate(rows):
        sequence = before + piece_ids + after
        input_ids[r, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        attention[r, : len(sequence)] = 1
        if piece_words:
            word_index[r, len(before) : len(before) + len(piece_words)] = torch.tensor(piece_words)
            token_offsets[r, len(before) : len(before) + len(piece_words)] = torch.from_numpy(piece_offsets)
        word_mask[r, :n_words] = True
        start_mask[r, : min(owned, n_words)] = True
    token_types = torch.zeros_like(input_ids) if "token_type_ids" in tokenizer.model_input_names else None
    return PassageBatch(
        input_ids=input_ids,
        attention_mask=attention,
        token_type_ids=token_types,
        word_index=word_index,
        word_mask=word_mask,
        start_mask=start_mask,
        row_passage=torch.tensor([r[2] for r in rows], dtype=torch.long),
        row_first_word=torch.tensor([r[3] for r in rows], dtype=torch.long),
        word_chars=word_chars,
        token_offsets=token_offsets,
    )
