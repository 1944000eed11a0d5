"""Pair features: the numbers a combination scores a (query, candidate) pair by, computed for whole candidate lists.

:data:`FEATURES` names every feature a combination may use; :class:`PairFeatures` computes any of them for each query
against its candidate rows of a fitted reference table (cosines of the embedding, static-embedding and TF-IDF
channels, the margin of each over the query's best other candidate, number and acronym clues from
:mod:`~phrasezoo.match.features.lexical`, the name-shortening clues of :mod:`~phrasezoo.match.features.name_features`
and the reference rows' neighbourhood statistics).
"""

from __future__ import annotations

import numpy as np

from .lexical import (
    TfidfChannel,
    acronym_expansions,
    acronym_form,
    acronym_match,
    core_name,
    normal_form,
    number_agreement,
    numbers_of,
)
from .name_features import name_feature_columns

#: every feature a combination may use; a combination names the ones it uses, in its own order
FEATURES = (
    "emb",  # embedding cosine
    "char",  # character 2-4 gram TF-IDF cosine
    "word",  # word TF-IDF cosine
    "emb_margin",  # emb minus the best emb of the query's other candidates (> 0: this candidate is the emb top-1)
    "char_margin",
    "word_margin",
    "num_agree",  # 1 when both names have numbers and they agree (years in 2- or 4-digit form)
    "num_conflict",  # share of numbers not found in the other name, when both have numbers
    "num_one_side",  # 1 when exactly one of the two names has a number
    "acronym",  # 1 (0.5) when one name is the (prefix of the) initials of the other
    "acronym_tokens",  # share of acronym tokens spelling the initials of consecutive words of the other name
    "same_core",  # 1 when both names are equal once their trailing qualifiers are dropped ("X (song)" / "X")
    "same_normal",  # 1 when both names are equal in normal form (case, punctuation and spaces ignored)
    "emb_hub",  # the candidate's best embedding cosine to another reference row (a crowded neighbourhood)
    "char_hub",  # the same for the character TF-IDF cosine
    "static",  # static-embedding cosine (potion-base-8M, the third channel)
    "static_margin",
    "cover_query",  # share of the query's content words found in the candidate (match/name_features.py)
    "cover_candidate",  # share of the candidate's content words found in the query (a qualifier lowers it)
    "short_form",  # 1 when one name is a short form of the other ("C. Dickens" / "Charles Dickens")
    "head_match",  # 1 when both names end in the same content word
    "acronym_soft",  # 1 when an acronym's letters spell the other name's words ("XML" / "eXtensible Markup ...")
    "fuzzy_cover_query",  # cover_query where a word with one typo or abbreviated ("Intl") counts as found
    "fuzzy_cover_candidate",  # the same for the candidate's words
    "token_sort",  # edit similarity of the two names with their words sorted (rapidfuzz token_sort_ratio / 100)
    "token_sort_margin",
)
NEEDS_EMBEDDING = frozenset({"emb", "emb_margin"})
NEEDS_STATIC = frozenset({"static", "static_margin"})
NEEDS_WORD = frozenset({"word", "word_margin"})
NEEDS_HUB = frozenset({"emb_hub", "char_hub"})


def margins(scores: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """Per row of a ``(queries, candidates)`` score matrix: each score minus the best score of the row's other
    valid candidates (0 when it has no other candidate)."""
    valid = np.ones(scores.shape, dtype=bool) if valid is None else valid
    masked = np.where(valid, scores, -np.inf)
    if masked.shape[1] < 2:
        return np.zeros_like(scores)
    order = np.argsort(-masked, axis=1, kind="stable")
    top1 = np.take_along_axis(masked, order[:, :1], axis=1)
    top2 = np.take_along_axis(masked, order[:, 1:2], axis=1)
    other = np.where(np.arange(masked.shape[1])[None, :] == order[:, :1], top2, top1)
    out = np.where(np.isfinite(other), scores - other, 0.0)
    return np.where(valid, out, 0.0).astype(np.float32)


class PairFeatures:
    """Feature computation for candidate pairs between queries and a fitted reference table (see :data:`FEATURES`)."""

    def __init__(self, reference: list[str], char: TfidfChannel | None, word: TfidfChannel | None,
                 hub: dict[str, np.ndarray] | None = None) -> None:  # fmt: skip
        self.reference = reference
        self.hub = hub or {}
        self.char, self.word = char, word
        self.ref_char = char.transform(reference) if char is not None else None
        self.ref_word = word.transform(reference) if word is not None else None
        self.ref_numbers = [numbers_of(t) for t in reference]
        self.ref_acronym = [acronym_form(t) is not None for t in reference]
        self.ref_core = [core_name(t) for t in reference]
        self.ref_normal = [normal_form(t) for t in reference]

    def compute(
        self,
        names: list[str],
        queries: list[str],
        candidates: np.ndarray,
        query_vectors: np.ndarray | None,
        ref_vectors: np.ndarray | None,
        static: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """``(n_queries, n_candidates, len(names))`` features; padded candidates (id -1) get zeros. ``static``:
        the queries' and the reference's static-embedding vectors, for the ``static`` features."""
        n, p = candidates.shape
        valid = candidates >= 0
        q_rows = np.repeat(np.arange(n), p)[valid.ravel()]
        c_rows = candidates[valid]
        columns: dict[str, np.ndarray] = {}

        def full(values: np.ndarray) -> np.ndarray:
            out = np.zeros((n, p), dtype=np.float32)
            out[valid] = values
            return out

        wanted = set(names)
        if wanted & {"emb", "emb_margin"}:
            if query_vectors is None or ref_vectors is None:
                raise ValueError("This combination uses the embedding cosine: the matcher needs an encoder.")
            columns["emb"] = full(np.einsum("ij,ij->i", query_vectors[q_rows], ref_vectors[c_rows]))
        if wanted & NEEDS_STATIC:
            if static is None:
                raise ValueError("This combination uses the static-embedding cosine: the matcher needs its channel.")
            columns["static"] = full(np.einsum("ij,ij->i", static[0][q_rows], static[1][c_rows]))
        for kind, channel, ref in (("char", self.char, self.ref_char), ("word", self.word, self.ref_word)):
            if wanted & {kind, f"{kind}_margin"}:
                q = channel.transform(queries)
                columns[kind] = full(np.asarray(q[q_rows].multiply(ref[c_rows]).sum(axis=1)).ravel())
        for kind in ("emb", "char", "word", "static"):
            if f"{kind}_margin" in wanted:
                columns[f"{kind}_margin"] = margins(columns[kind], valid)
        if wanted & {"num_agree", "num_conflict", "num_one_side"}:
            columns.update(
                {name: full(values) for name, values in self.number_columns(queries, q_rows, c_rows).items()}
            )
        if "acronym" in wanted:
            q_acronym = [acronym_form(t) is not None for t in queries]
            values = np.zeros(len(q_rows), dtype=np.float32)
            for i, (qi, ci) in enumerate(zip(q_rows.tolist(), c_rows.tolist())):
                if q_acronym[qi] != self.ref_acronym[ci]:  # only an acronym against a longer name can match
                    values[i] = acronym_match(queries[qi], self.reference[ci])
            columns["acronym"] = full(values)
        if "acronym_tokens" in wanted:
            values = np.array([acronym_expansions(queries[qi], self.reference[ci])
                               for qi, ci in zip(q_rows.tolist(), c_rows.tolist())], dtype=np.float32)  # fmt: skip
            columns["acronym_tokens"] = full(values)
        if "same_core" in wanted:
            cores = [core_name(t) for t in queries]
            values = np.array([cores[qi] == self.ref_core[ci] for qi, ci in zip(q_rows.tolist(), c_rows.tolist())],
                              dtype=np.float32)  # fmt: skip
            columns["same_core"] = full(values)
        for name in NEEDS_HUB & wanted:
            if name not in self.hub:
                raise ValueError(f"Feature {name} needs the reference's neighbourhood statistics (fit the matcher).")
            columns[name] = full(self.hub[name][c_rows])
        if "same_normal" in wanted:
            normals = [normal_form(t) for t in queries]
            values = np.array([normals[qi] == self.ref_normal[ci] for qi, ci in zip(q_rows.tolist(), c_rows.tolist())],
                              dtype=np.float32)  # fmt: skip
            columns["same_normal"] = full(values)
        name_columns = wanted | ({"token_sort"} if "token_sort_margin" in wanted else set())
        for name, values in name_feature_columns(name_columns, queries, self.reference, q_rows, c_rows).items():
            columns[name] = full(values)
        if "token_sort_margin" in wanted:
            columns["token_sort_margin"] = margins(columns["token_sort"], valid)
        return np.stack([columns[name] for name in names], axis=-1)

    def number_columns(self, queries: list[str], q_rows: np.ndarray, c_rows: np.ndarray) -> dict[str, np.ndarray]:
        """``num_agree``, ``num_conflict`` and ``num_one_side`` of the pairs ``(queries[q_rows[i]], reference[c_rows[i]])``."""
        q_numbers = [numbers_of(t) for t in queries]
        agree = np.zeros(len(q_rows), dtype=np.float32)
        conflict = np.zeros(len(q_rows), dtype=np.float32)
        one_side = np.zeros(len(q_rows), dtype=np.float32)
        for i, (qi, ci) in enumerate(zip(q_rows.tolist(), c_rows.tolist())):
            a, b = q_numbers[qi], self.ref_numbers[ci]
            if a and b:
                agree[i], conflict[i] = number_agreement(a, b)
            elif a or b:
                one_side[i] = 1.0
        return {"num_agree": agree, "num_conflict": conflict, "num_one_side": one_side}
