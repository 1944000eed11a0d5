"""The Phrase-BERT checkpoint the authors published (``whaleloops/phrase-bert``), for ``phrasezoo convert
phrase_bert``.

A sentence-transformers BERT-base (vocabulary 30522, 768-d, mean ``1_Pooling``, weights in ``pytorch_model.bin``),
fine-tuned from ``bert-base-nli-stsb-mean-tokens``; the authors' call is ``SentenceTransformer(repo).encode``, which
is :class:`~phrasezoo.models.phrase_bert.modeling_phrase_bert.PhraseBertModel`'s ``encode(..., normalize=False)``.
"""

from __future__ import annotations

from pathlib import Path

from phrasezoo.models.phrase_bert.configuration_phrase_bert import PhraseBertConfig
from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.zoo.releases import Paper, Release, mean_pooled_model

PAPER = Paper(
    "Wang, Thompson & Iyyer, *Phrase-BERT: Improved Phrase Embeddings from BERT with an Application to Corpus "
    "Exploration* (EMNLP 2021)",
    "https://github.com/sf-wa-326/phrase-bert-topic-model",
    "@inproceedings{wang2021phrasebert,\n  title  = {Phrase-BERT: Improved Phrase Embeddings from BERT with an "
    "Application to Corpus Exploration},\n  author = {Wang, Shufan and Thompson, Laure and Iyyer, Mohit},\n  "
    "booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing},\n  "
    "year   = {2021}\n}",
)


def convert(folder: Path) -> tuple[PhraseBertModel, dict[str, str]]:
    """The Phrase-BERT release as a :class:`PhraseBertModel` (the same BERT, mean pooling, its token limit)."""
    return mean_pooled_model(folder, PhraseBertModel, PhraseBertConfig)


RELEASES = (
    Release(
        "whaleloops/phrase-bert",
        PAPER,
        "sentence-transformers BERT-base (768-d, vocabulary 30522, mean `1_Pooling`, `pytorch_model.bin`), fine-tuned "
        "from `bert-base-nli-stsb-mean-tokens`",
        "mit",
        "`SentenceTransformer(repo).encode(phrases)`: BERT, attention-masked mean pooling (special tokens included), "
        "no normalisation (`encode(..., normalize=False)` here; `encode` normalises by default)",
        convert,
        'embeddings = model.encode(["play an active role", "participate actively", "active lifestyle"])\n'
        "print(embeddings @ embeddings.T)  # cosine; normalize=False gives the authors' unnormalised vectors",
        ("the phrase-based topic model (PNTM) of the paper: train one with `phrasezoo topics pntm`",),
        "Phrase-BERT (paper)",
        "in the row above Turney, BiRD, PPDB and PPDB-filtered are the Phrase-BERT paper's; CoNLL-2003, BC5CDR and "
        "AutoFJ are the PEARL paper's measurements of Phrase-BERT, STS-B-Context the SLICE paper's",
    ),
)
