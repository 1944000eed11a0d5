"""The PEARL checkpoints the authors published (``Lihuchen/pearl_small``, ``Lihuchen/pearl_base``), for
``phrasezoo convert pearl``.

Each is a sentence-transformers folder (BERT of E5-small-v2 / E5-base-v2 size, mean ``1_Pooling``); the authors use
it as ``AutoModel`` + attention-masked mean pooling + L2 normalisation, without a prefix. The type head of training
(``type_fc``) is not released, and the released code has no character encoder: the converted
:class:`~phrasezoo.models.pearl.modeling_pearl.PearlModel` has neither (``use_char_encoder=False``,
``type_labels=[]``), so its embedding is the phrase encoder's, as theirs.
"""

from __future__ import annotations

from pathlib import Path

from phrasezoo.models.pearl.configuration_pearl import PearlConfig
from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.zoo.releases import Paper, Release, mean_pooled_model

PAPER = Paper(
    "Chen, Varoquaux & Suchanek, *Learning High-Quality and General-Purpose Phrase Representations* (Findings of "
    "EACL 2024)",
    "https://github.com/tigerchen52/PEARL",
    "@inproceedings{chen2024pearl,\n  title  = {Learning High-Quality and General-Purpose Phrase Representations},\n"
    '  author = {Chen, Lihu and Varoquaux, Ga{\\"e}l and Suchanek, Fabian M.},\n  booktitle = {Findings of the '
    "Association for Computational Linguistics: EACL 2024},\n  year   = {2024}\n}",
)
MISSING = (
    "the phrase-type head of training (`type_fc`, 95 types): `predict_type` raises a `ValueError` saying so",
    "a character encoder: the released code has none (the paper describes one), so the embedding is the phrase "
    "encoder's alone, as in the authors' use",
)
USAGE = (
    'embeddings = model.encode(["The New York Times", "NYTimes", "New York Post"])  # numpy, L2-normalised\n'
    "print(embeddings @ embeddings.T)"
)


def convert(folder: Path) -> tuple[PearlModel, dict[str, str]]:
    """A PEARL release as a :class:`PearlModel` without character encoder and type head."""
    return mean_pooled_model(folder, PearlModel, PearlConfig, use_char_encoder=False, type_labels=[])


def _release(repo_id: str, size: str, paper_row: str, reported: str) -> Release:
    return Release(
        repo_id,
        PAPER,
        f"{size} BERT as a sentence-transformers folder (`modules.json`, mean `1_Pooling`, `model.safetensors`)",
        "apache-2.0",
        "`AutoModel` + `AutoTokenizer` of the repository, attention-masked mean pooling of the last hidden states, "
        "L2 normalisation, no prefix",
        convert,
        USAGE,
        MISSING,
        paper_row,
        reported,
    )


RELEASES = (
    _release("Lihuchen/pearl_small", "E5-small-v2-size (384-d)", "PEARL-small, 40M (paper)",
             "AutoFJ 75.2 in the official README"),
    _release("Lihuchen/pearl_base", "E5-base-v2-size (768-d)", "PEARL-base (paper)",
             "AutoFJ 77.1 in the official README"),
)  # fmt: skip
