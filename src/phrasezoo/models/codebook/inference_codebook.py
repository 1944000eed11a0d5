"""Inference API of the codebook model (spec section 5), mixed into ``CodebookSeq2Embeddings``.

* ``encode``: one vector per text, the mean of the encoder states over its real tokens (``<eos>`` included): the
  paper's "Ours Emb", its best phrase scorer (Table 4).
* ``facets`` / ``facet_words``: the K codebook embeddings and their nearest vocabulary words (Table 1).
* ``word_importance``: the paper's eq. 6 attention ``a_q = sum_k max(0, cos(w_q, f_k))`` per word.
* ``similarity``: cosine of ``encode`` ("emb") or SC, the negated symmetric NNSC reconstruction distance (eq. 5).
* ``sentence_embedding`` / ``fit_sif_pc``: Avg, Prob_avg and SIF word-vector averages with and without the learned
  weights of eq. 6 ("Our a" in Table 2), plus a non-learned centroid control.
* ``summarize``: greedy extractive summary maximising eq. 7 (facet coverage of the document's words).

Self-contained (standard library, torch, numpy and sibling files only).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .nnsc import reconstruction_error, solve

try:  # progress bars are optional
    from tqdm.auto import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
WEIGHTINGS = ("avg", "prob_avg", "sif")


class CodebookInferenceMixin:
    """Methods on top of ``forward``; expects ``self.config``, ``self.tokenizer``, ``self.target_vectors``,
    ``self.word_probs`` and ``self.nnsc_options`` from the model class."""

    # ------------------------------------------------------------------------------------------- tokenization
    def tokenize(self, texts: list[str], truncate: bool = True) -> dict[str, torch.Tensor]:
        """Padded ``input_ids``/``attention_mask`` (``<eos>`` appended), truncated at ``config.max_seq_length``
        tokens on the tokenizer's truncation side, or raising with ``truncate=False``."""
        texts = check_texts(texts)
        limit = self.config.max_seq_length
        if not truncate:
            lengths = [len(ids) for ids in self.tokenizer(texts)["input_ids"]]
            too_long = [i for i, n in enumerate(lengths) if n > limit]
            if too_long:
                raise ValueError(
                    f"{len(too_long)} text(s) exceed max_seq_length={limit} tokens with <eos> (first: index "
                    f"{too_long[0]}, {lengths[too_long[0]]} tokens). Shorten them or pass truncate=True."
                )
        encoding = self.tokenizer(texts, padding=True, truncation=True, max_length=limit, return_tensors="pt")
        return {"input_ids": encoding["input_ids"], "attention_mask": encoding["attention_mask"]}

    # Adapted from phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel.encode (its batching loop, for any output of the model: pick)
    def _run(
        self,
        texts: list[str],
        pick: Callable,
        batch_size: int,
        show_progress_bar: bool | None,
        device,
        truncate: bool = True,
        desc: str = "Encoding",
    ) -> torch.Tensor:
        """``pick(output)`` for every text, batched by token length, in input order, as a float32 CPU tensor."""
        batch_size = _check_batch_size(batch_size)
        texts = check_texts(texts)
        if not truncate:
            self.tokenize(texts, truncate=False)
        lengths = [
            len(ids)
            for ids in self.tokenizer(texts, truncation=True, max_length=self.config.max_seq_length)["input_ids"]
        ]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        device = torch.device(device) if device is not None else self.device
        if device != self.device:
            self.to(device)
        was_training = self.training
        self.eval()
        chunks = []
        batches = range(0, len(texts), batch_size)
        show = show_progress_bar if show_progress_bar is not None else len(batches) > 10
        try:
            with torch.inference_mode():
                for start in _progress(batches, show, desc):
                    batch = [texts[i] for i in order[start : start + batch_size]]
                    features = {k: v.to(device) for k, v in self.tokenize(batch).items()}
                    chunks.append(pick(self(**features)).float().cpu())
        finally:
            if was_training:
                self.train()
        result = torch.empty((len(texts), *chunks[0].shape[1:]), dtype=torch.float32)
        result[torch.as_tensor(order)] = torch.cat(chunks)
        return result

    # ---------------------------------------------------------------------------------------------- vectors
    def encode(
        self,
        texts: str | list[str],
        batch_size: int = 128,
        normalize: bool = True,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        device: str | torch.device | None = None,
        truncate: bool = True,
    ) -> np.ndarray | torch.Tensor:
        """One vector per text, ``(n, d_model)`` (``(d_model,)`` for one string): the mean of the encoder states
        over the text's tokens and ``<eos>`` ("Ours Emb"). Sorted-length batching; over-long texts are truncated
        (``truncate=False`` raises); empty lists, empty strings and non-strings raise ``ValueError``."""
        single = isinstance(texts, str)
        out = self._run([texts] if single else texts, lambda o: o.embeddings, batch_size, show_progress_bar, device,
                        truncate)  # fmt: skip
        if normalize:
            out = F.normalize(out, dim=-1)
        if single:
            out = out[0]
        return out.numpy() if convert_to_numpy else out

    def facets(
        self,
        texts: str | list[str],
        normalize: bool = True,
        batch_size: int = 128,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
        device: str | torch.device | None = None,
        truncate: bool = True,
    ) -> np.ndarray | torch.Tensor:
        """The K codebook embeddings per text in the word-vector space, ``(n, K, word_dim)`` (``(K, word_dim)``
        for one string); unit-norm rows with ``normalize=True`` (the paper's F_u, used by every scorer)."""
        single = isinstance(texts, str)
        out = self._run([texts] if single else texts, lambda o: o.facets, batch_size, show_progress_bar, device,
                        truncate, "Facets")  # fmt: skip
        if normalize:
            out = F.normalize(out, dim=-1)
        if single:
            out = out[0]
        return out.numpy() if convert_to_numpy else out

    def facet_words(self, texts: str | list[str], top_n: int = 3, batch_size: int = 128) -> list:
        """Per text, per facet, the ``top_n`` nearest vocabulary words by cosine: ``[[(word, cos), ...], ...]``
        (a single string gives the list for that text). The paper's Table 1."""
        if not isinstance(top_n, int) or top_n < 1:
            raise ValueError(f"top_n must be a positive integer, got {top_n!r}.")
        single = isinstance(texts, str)
        facets = self.facets([texts] if single else texts, batch_size=batch_size, convert_to_numpy=False)
        matrix, words = self._unit_targets(), self.vocabulary()
        result = []
        for start in range(0, len(facets), 32):  # bounded memory: 32 texts x K x vocabulary scores at a time
            scores = facets[start : start + 32] @ matrix.T  # (n, K, V); specials have zero rows
            scores[..., :3] = -float("inf")
            top = scores.topk(min(top_n, matrix.shape[0] - 3), dim=-1)
            result.extend(
                [[(words[i], float(s)) for i, s in zip(idx.tolist(), val.tolist())] for idx, val in zip(ti, tv)]
                for ti, tv in zip(top.indices, top.values)
            )
        return result[0] if single else result

    def _unit_targets(self) -> torch.Tensor:
        return F.normalize(self.target_vectors.detach().float().cpu(), dim=-1)

    def _words_with_offsets(self, text: str) -> list[tuple[str, int, int, int]]:
        """(word, start, end, id) for each word of ``text`` (no truncation, no <eos>)."""
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [(text[s:e], s, e, i) for i, (s, e) in zip(enc["input_ids"], enc["offset_mapping"])]

    def word_importance(self, texts: str | list[str], batch_size: int = 128) -> list:
        """Eq. 6 per word: ``a_q = sum_k max(0, cos(w_q, f_k))`` with the text's unit facets. Returns, per text,
        a list of dicts ``{"word", "start", "end", "weight"}`` (character offsets into the text); words without a
        vector (``<unk>``) get weight 0 and ``"known": False``. Words beyond ``max_seq_length`` still get weights
        (the facets come from the truncated text)."""
        single = isinstance(texts, str)
        texts = check_texts([texts] if single else texts)
        facets = self.facets(texts, batch_size=batch_size, convert_to_numpy=False)
        matrix = self._unit_targets()
        result = []
        for text, facet in zip(texts, facets):
            words = self._words_with_offsets(text)
            ids = torch.tensor([w[3] for w in words], dtype=torch.long)
            weights = (matrix[ids] @ facet.T).clamp(min=0).sum(-1) if len(words) else torch.zeros(0)
            result.append([
                {"word": w, "start": s, "end": e, "weight": float(a) if i >= 3 else 0.0, "known": i >= 3}
                for (w, s, e, i), a in zip(words, weights.tolist())
            ])  # fmt: skip
        return result[0] if single else result

    # ------------------------------------------------------------------------------------------- similarity
    def nnsc(
        self,
        facets: torch.Tensor,
        targets: torch.Tensor,
        target_mask: torch.Tensor | None = None,
        solver: str | None = None,
        **options,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Solve eq. 1 for a batch: ``(coefficients (B, N, K), Er per problem (B,))`` with the config's lam and
        solver settings (test-time RMSprop steps) unless overridden in ``options``."""
        settings = {**self.nnsc_options(training=False, solver=solver), **options}
        coefficients = solve(facets, targets, target_mask, **settings)
        return coefficients, reconstruction_error(facets, targets, target_mask, coefficients)

    def sc_distance(self, facets_a: torch.Tensor, facets_b: torch.Tensor, **options) -> torch.Tensor:
        """Symmetric reconstruction distance of eq. 5 between paired unit codebooks ``(B, K, d)``: the mean of
        Er(F_a reconstructs F_b) and Er(F_b reconstructs F_a), each averaged over the K target facets."""
        _, ab = self.nnsc(facets_a, facets_b, **options)
        _, ba = self.nnsc(facets_b, facets_a, **options)
        return 0.5 * (ab + ba)

    def similarity(
        self,
        a: str | list[str],
        b: str | list[str],
        method: str = "emb",
        pairwise: bool = False,
        batch_size: int = 128,
    ) -> float | np.ndarray:
        """Similarity of texts: ``method="emb"`` is the cosine of :meth:`encode`; ``"sc"`` is the negated SC
        distance of eq. 5, in [-1, 0]; the L1 penalty keeps a text against itself near -(lam/2)^2 = -0.04, not 0.
        Two strings give a float; lists give the ``(len(a), len(b))``
        matrix, or with ``pairwise=True`` (equal lengths) the ``(n,)`` scores of the pairs ``(a[i], b[i])``."""
        if method not in ("emb", "sc"):
            raise ValueError(f"method must be 'emb' or 'sc', got {method!r}.")
        scalar = isinstance(a, str) and isinstance(b, str)
        a_list, b_list = check_texts([a] if isinstance(a, str) else a), check_texts([b] if isinstance(b, str) else b)
        if pairwise and len(a_list) != len(b_list):
            raise ValueError(f"pairwise=True needs lists of equal length, got {len(a_list)} and {len(b_list)}.")
        if method == "emb":
            ea = self.encode(a_list, batch_size=batch_size, convert_to_numpy=False)
            eb = self.encode(b_list, batch_size=batch_size, convert_to_numpy=False)
            scores = (ea * eb).sum(-1) if pairwise or scalar else ea @ eb.T
        else:
            fa = self.facets(a_list, batch_size=batch_size, convert_to_numpy=False)
            fb = self.facets(b_list, batch_size=batch_size, convert_to_numpy=False)
            if pairwise or scalar:
                scores = -self.sc_distance(fa, fb)
            else:
                ia, ib = torch.meshgrid(torch.arange(len(a_list)), torch.arange(len(b_list)), indexing="ij")
                ia, ib = ia.reshape(-1), ib.reshape(-1)
                chunks = [  # bounded memory: 4,096 pairs of codebooks at a time
                    self.sc_distance(fa[ia[i : i + 4096]], fb[ib[i : i + 4096]]) for i in range(0, len(ia), 4096)
                ]
                scores = -torch.cat(chunks).view(len(a_list), len(b_list))
        return float(scores.reshape(-1)[0]) if scalar else scores.numpy()

    def coefficient_matrix(self, a: str, b: str) -> np.ndarray:
        """NNSC coefficients ``(K_b, K_a)``: how much each facet of ``a`` is used to rebuild each facet of ``b``."""
        fa, fb = self.facets([a, b], convert_to_numpy=False)
        coefficients, _ = self.nnsc(fa[None], fb[None])
        return coefficients[0].numpy()

    # ---------------------------------------------------------------------------------- sentence embeddings
    def _word_probs(self, word_probs) -> torch.Tensor:
        """p(w) per vocabulary id: the model's (Zipf proxy unless built with counts), or a dict/array override."""
        probs = self.word_probs.detach().float().cpu().clone()
        if word_probs is None:
            return probs
        if isinstance(word_probs, dict):
            index = self.target_word_index()
            for word, p in word_probs.items():
                if word in index:
                    probs[index[word]] = float(p)
            return probs
        override = torch.as_tensor(np.asarray(word_probs, dtype=np.float32))
        if override.shape != probs.shape:
            raise ValueError(f"word_probs must map words to probabilities or be a ({probs.shape[0]},) array.")
        return override

    def word_weights(
        self,
        texts: str | list[str],
        weighting: str = "avg",
        learned: bool | str = True,
        word_probs=None,
        alpha: float | None = None,
        batch_size: int = 128,
    ) -> list:
        """The per-word weights :meth:`sentence_embedding` uses: (word, weight) for the words with a vector.

        Base weight 1 (``avg``) or ``alpha / (alpha + p(w))`` (``prob_avg``, ``sif``); multiplied by eq. 6's
        ``a_q`` when ``learned=True``, or by the non-learned control ``max(0, cos(w_q, mean of the text's unit
        word vectors))`` when ``learned="centroid"``.
        """
        single = isinstance(texts, str)
        rows = self._weight_rows([texts] if single else texts, weighting, learned, word_probs, alpha, batch_size)
        result = [[(w, float(x)) for w, x in zip(words, weights.tolist())] for words, _, weights in rows]
        return result[0] if single else result

    def _weight_rows(self, texts, weighting, learned, word_probs, alpha, batch_size) -> list:
        """Per text ``(words, ids, weights)`` over its words that have a vector (see :meth:`word_weights`)."""
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}.")
        if learned not in (True, False, "centroid"):
            raise ValueError(f"learned must be True, False or 'centroid', got {learned!r}.")
        alpha = self.config.sif_alpha if alpha is None else alpha
        if not alpha > 0:
            raise ValueError(f"alpha must be positive, got {alpha!r}.")
        texts = check_texts(texts)
        probs = self._word_probs(word_probs)
        matrix = self._unit_targets()
        importance = self.word_importance(texts, batch_size=batch_size) if learned is True else None
        rows = []
        for t, text in enumerate(texts):
            words = [w for w in self._words_with_offsets(text) if w[3] >= 3]
            ids = torch.tensor([w[3] for w in words], dtype=torch.long)
            weights = torch.ones(len(words))
            if weighting != "avg":
                weights = alpha / (alpha + probs[ids])
            if learned is True:
                weights = weights * torch.tensor([d["weight"] for d in importance[t] if d["known"]])
            elif learned == "centroid" and len(words):
                centroid = F.normalize(matrix[ids].mean(0), dim=0)
                weights = weights * (matrix[ids] @ centroid).clamp(min=0)
            rows.append(([w[0] for w in words], ids, weights))
        return rows

    def sentence_embedding(
        self,
        texts: str | list[str],
        weighting: str = "avg",
        learned: bool | str = True,
        word_probs=None,
        alpha: float | None = None,
        pc: np.ndarray | str | None = None,
        batch_size: int = 128,
    ) -> np.ndarray:
        """Weighted averages of the texts' word vectors (the frozen target space), ``(n, word_dim)``.

        ``weighting``: ``avg`` (Avg), ``prob_avg`` (weights ``alpha / (alpha + p(w))``) or ``sif`` (Prob_avg minus
        the projection on a first principal component ``pc``). ``learned``: multiply eq. 6's weights in ("Our a"),
        ``False`` for the plain baseline, ``"centroid"`` for the non-learned control. ``word_probs`` overrides p(w)
        (dict word -> p, or an array over the vocabulary). SIF needs ``pc``: from :meth:`fit_sif_pc` on reference
        texts, or ``pc="transductive"`` to take it from ``texts`` themselves (as Arora et al.'s reference code).
        Texts without any known word give a zero row.
        """
        single = isinstance(texts, str)
        texts = check_texts([texts] if single else texts)
        if weighting == "sif" and pc is None:
            raise ValueError(
                "SIF needs the first principal component: pass pc=model.fit_sif_pc(reference_texts, ...) or "
                "pc='transductive' to estimate it from these texts."
            )
        rows = self._weight_rows(texts, weighting, learned, word_probs, alpha, batch_size)
        vectors = self.target_vectors.detach().float().cpu()
        out = torch.zeros(len(texts), vectors.shape[1])
        for t, (_, ids, weights) in enumerate(rows):
            if len(ids):
                out[t] = (weights[:, None] * vectors[ids]).sum(0) / len(ids)
        out = out.numpy()
        if weighting == "sif":
            if isinstance(pc, str):
                if pc != "transductive":
                    raise ValueError(f"pc must be an array or 'transductive', got {pc!r}.")
                pc = first_principal_component(out)
            pc = np.asarray(pc, dtype=np.float32).reshape(-1)
            if pc.shape[0] != out.shape[1]:
                raise ValueError(f"pc must have {out.shape[1]} dims, got {pc.shape[0]}.")
            out = out - np.outer(out @ pc, pc)
        return out[0] if single else out

    def fit_sif_pc(
        self, texts: list[str], learned: bool | str = True, word_probs=None, alpha: float | None = None
    ) -> np.ndarray:
        """First principal component (unit vector, ``(word_dim,)``) of the Prob_avg embeddings of ``texts`` with
        the same weights, for ``sentence_embedding(weighting="sif", pc=...)``."""
        embeddings = self.sentence_embedding(texts, "prob_avg", learned, word_probs, alpha)
        return first_principal_component(embeddings)

    # --------------------------------------------------------------------------------------------- summaries
    def summarize(
        self,
        document: str | Sequence[str],
        n: int = 3,
        alpha: float | None = None,
        word_probs=None,
        method: str = "codebook",
        batch_size: int = 128,
    ) -> dict:
        """Greedy extractive summary maximising eq. 7: ``sum_w alpha / (alpha + p(w)) * max_{s in R(S)} w.s`` over
        the document's word tokens with a vector, R(S) = the unit facets of the chosen sentences.

        ``document``: a string (split into sentences at ., ! or ? followed by a capital or digit) or a list of
        sentences. ``method="sent_emb"`` replaces each sentence's facets by its single normalised average word
        vector (the paper's "Sent Emb" baseline). The coverage of the empty summary counts as 0 (negative cosines
        never help). Returns ``{"indices", "sentences", "gains", "facet_coverage", "all_sentences"}``:
        ``facet_coverage[i][k]`` is the weighted document mass whose best match is facet k of chosen sentence i.
        """
        if method not in ("codebook", "sent_emb"):
            raise ValueError(f"method must be 'codebook' or 'sent_emb', got {method!r}.")
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}.")
        if isinstance(document, str):
            sentences = split_sentences(document)
        elif isinstance(document, (list, tuple)):
            sentences = list(document)
        else:  # bytes, numbers, None: iterating them would give sentences that are not strings
            raise ValueError(f"The document must be a string or a list of sentences, got {type(document).__name__}.")
        if not sentences:
            raise ValueError("The document has no sentences.")
        try:
            sentences = check_texts(sentences)
        except ValueError as error:
            raise ValueError(f"Bad document sentences: {error}") from None
        text = " ".join(sentences)
        ids = torch.tensor([w[3] for w in self._words_with_offsets(text) if w[3] >= 3], dtype=torch.long)
        if len(ids) == 0:
            raise ValueError("No word of the document is in the model's vocabulary; nothing to summarise.")
        alpha = self.config.sif_alpha if alpha is None else alpha
        weights = alpha / (alpha + self._word_probs(word_probs)[ids])
        words = self._unit_targets()[ids]
        if method == "codebook":
            reps = self.facets(sentences, batch_size=batch_size, convert_to_numpy=False)  # (S, K, d)
        else:
            avg = self.sentence_embedding(sentences, "avg", learned=False)
            reps = F.normalize(torch.as_tensor(avg), dim=-1)[:, None]
        sims = torch.einsum("wd,skd->swk", words, reps)  # (S, W, K)
        best_per_sentence = sims.amax(-1).clamp(min=0)  # (S, W)
        covered = torch.zeros(len(ids))
        chosen, gains = [], []
        for _ in range(min(n, len(sentences))):
            totals = (weights * torch.maximum(best_per_sentence, covered)).sum(-1) - (weights * covered).sum()
            if chosen:
                totals[torch.tensor(chosen)] = -float("inf")
            pick = int(totals.argmax())
            chosen.append(pick)
            gains.append(float(totals[pick]))
            covered = torch.maximum(covered, best_per_sentence[pick])
        # facet coverage: each document word goes to the chosen facet that matches it best
        chosen_sims = sims[torch.tensor(chosen)].clamp(min=0)  # (n, W, K)
        flat = chosen_sims.permute(1, 0, 2).reshape(len(ids), -1)  # (W, n*K)
        owner = flat.argmax(-1)
        mass = torch.zeros(flat.shape[1]).index_add_(0, owner, weights * flat.max(-1).values)
        coverage = mass.view(len(chosen), -1)
        return {
            "indices": chosen,
            "sentences": [sentences[i] for i in chosen],
            "gains": gains,
            "facet_coverage": coverage.tolist(),
            "all_sentences": sentences,
        }


# ----------------------------------------------------------------------------------------------------- helpers
# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._check_texts with _check_texts->check_texts
def check_texts(texts) -> list[str]:
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


def split_sentences(document: str) -> list[str]:
    """Sentences of a plain-text document: line breaks, then ., ! or ? followed by a capital letter or digit."""
    if not isinstance(document, str) or not document.strip():
        raise ValueError("The document must be a non-empty string (or a list of sentences).")
    sentences = []
    for line in document.splitlines():
        sentences.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return sentences


def first_principal_component(embeddings: np.ndarray) -> np.ndarray:
    """The first right singular vector of ``embeddings`` (uncentred, as SIF), unit norm."""
    embeddings = np.asarray(embeddings, dtype=np.float64)
    if embeddings.ndim != 2 or embeddings.shape[0] < 2:
        raise ValueError("The first principal component needs at least two embeddings.")
    _, _, vt = np.linalg.svd(embeddings, full_matrices=False)
    return vt[0].astype(np.float32)


# Copied from phrasezoo.models.phrase_bert.modeling_phrase_bert._progress
def _progress(iterable, show: bool, desc: str):
    if show and tqdm is not None and not os.environ.get("PHRASEZOO_NO_PROGRESS"):
        return tqdm(iterable, desc=desc)
    return iterable
