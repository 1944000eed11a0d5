"""The checkpoints the papers' authors published, and the model card of a converted one.

Three of the five papers published weights on the Hub (PEARL, Phrase-BERT, UCTopic); SLICE and the multi-facet
codebook paper published none. :mod:`phrasezoo.hub.convert` turns a release into a zoo export; the card written
here credits the authors, names the source repository and its revision, keeps their licence, says what the release
does not contain, and shows the authors' own numbers until ``phrasezoo evaluate`` measures the conversion.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import ModelCard, ModelCardData

from phrasezoo.core.files import atomic_write_text
from phrasezoo.zoo.registry import get_method


@dataclass(frozen=True)
class Paper:
    """The paper behind a release: how its card credits the authors."""

    citation: str  # "Authors, *Title* (venue year)"
    code: str  # the official repository
    bibtex: str


@dataclass(frozen=True)
class Release:
    """A published checkpoint of a method.

    Attributes:
        repo_id: the authors' Hub repository.
        method: the zoo method whose classes hold it.
        what: what the repository holds, in its own terms (architecture, size, file layout).
        license: the licence the card keeps (a Hub licence id).
        official_use: how the authors' code turns inputs into a vector (what the converted model reproduces).
        missing: what the release does not contain, said on the card.
        paper_row: the method's ``paper_rows`` entry with the authors' numbers for this checkpoint, if any.
        reported: other numbers the authors report for this very checkpoint (their README), if any.
    """

    repo_id: str
    method: str
    what: str
    license: str
    official_use: str
    missing: tuple[str, ...] = ()
    paper_row: str | None = None
    reported: str = ""


PAPERS = {
    "pearl": Paper(
        "Chen, Varoquaux & Suchanek, *Learning High-Quality and General-Purpose Phrase Representations* (Findings of "
        "EACL 2024)",
        "https://github.com/tigerchen52/PEARL",
        "@inproceedings{chen2024pearl,\n  title  = {Learning High-Quality and General-Purpose Phrase Representations},"
        '\n  author = {Chen, Lihu and Varoquaux, Ga{\\"e}l and Suchanek, Fabian M.},\n  booktitle = {Findings of the '
        "Association for Computational Linguistics: EACL 2024},\n  year   = {2024}\n}",
    ),
    "phrase_bert": Paper(
        "Wang, Thompson & Iyyer, *Phrase-BERT: Improved Phrase Embeddings from BERT with an Application to Corpus "
        "Exploration* (EMNLP 2021)",
        "https://github.com/sf-wa-326/phrase-bert-topic-model",
        "@inproceedings{wang2021phrasebert,\n  title  = {Phrase-BERT: Improved Phrase Embeddings from BERT with an "
        "Application to Corpus Exploration},\n  author = {Wang, Shufan and Thompson, Laure and Iyyer, Mohit},\n  "
        "booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing},\n  "
        "year   = {2021}\n}",
    ),
    "uctopic": Paper(
        "Li, Shang & McAuley, *UCTopic: Unsupervised Contrastive Learning for Phrase Representations and Topic "
        "Mining* (ACL 2022)",
        "https://github.com/JiachengLi1995/UCTopic",
        "@inproceedings{li2022uctopic,\n  title  = {UCTopic: Unsupervised Contrastive Learning for Phrase "
        "Representations and Topic Mining},\n  author = {Li, Jiacheng and Shang, Jingbo and McAuley, Julian},\n  "
        "booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics},\n  "
        "year   = {2022}\n}",
    ),
}

_PEARL_USE = (
    "`AutoModel` + `AutoTokenizer` of the repository, attention-masked mean pooling of the last hidden states, L2 "
    "normalisation, no prefix"
)
_PEARL_MISSING = (
    "the phrase-type head of training (`type_fc`, 95 types): `predict_type` is not available",
    "a character encoder: the released code has none (the paper describes one), so the embedding is the phrase "
    "encoder's alone",
)
RELEASES = {
    release.repo_id: release
    for release in (
        Release("Lihuchen/pearl_small", "pearl", "E5-small-v2-size BERT (384-d) as a sentence-transformers folder "
                "(`modules.json`, mean `1_Pooling`, `model.safetensors`)", "apache-2.0", _PEARL_USE, _PEARL_MISSING,
                "PEARL-small, 40M (paper)", "AutoFJ 75.2 (official README)"),
        Release("Lihuchen/pearl_base", "pearl", "E5-base-v2-size BERT (768-d) as a sentence-transformers folder "
                "(`modules.json`, mean `1_Pooling`, `model.safetensors`)", "apache-2.0", _PEARL_USE, _PEARL_MISSING,
                "PEARL-base (paper)", "AutoFJ 77.1 (official README)"),
        Release("whaleloops/phrase-bert", "phrase_bert", "sentence-transformers BERT-base (768-d, vocabulary 30522, "
                "mean `1_Pooling`, `pytorch_model.bin`), fine-tuned from `bert-base-nli-stsb-mean-tokens`", "mit",
                "`SentenceTransformer(repo).encode(phrases)`: BERT, attention-masked mean pooling (special tokens "
                "included), no normalisation (this model's `encode(..., normalize=False)`)",
                ("the phrase-based topic model (PNTM) of the paper: train one with `phrasezoo topics pntm`",),
                "Phrase-BERT (paper)"),
        Release("JiachengLi/uctopic-base", "uctopic", "LUKE-base (RoBERTa vocabulary plus entity tokens, "
                "`entity_vocab.json`, a 500k x 256 entity table) and one dense + tanh layer (`mlp`), "
                "`pytorch_model.bin`", "mit",
                "`LukeTokenizer(sentence, entity_spans=[span], add_prefix_space=True)`, LUKE with the `[MASK]` "
                "entity on the span, `tanh(mlp(entity state))`, unit-normalised",
                ("LUKE's 500k Wikipedia entity embeddings: UCTopic only ever feeds the `[MASK]` entity, so the "
                 "conversion keeps the rows of LUKE's special entities (`[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]`), "
                 "which gives the same vectors",
                 "the MLM head of pretraining and the cluster heads of CCL finetuning (`phrasezoo topics mine` "
                 "finetunes its own)"),
                "UCTopic CCL (paper)†", "the row above is this checkpoint after CCL finetuning on each dataset, "
                "in the authors' protocol (all splits pooled, the best score seen during finetuning)"),
    )
}  # fmt: skip
#: methods whose papers published no weights, and what their pages say
NO_WEIGHTS = {
    "slice": "The SLICE paper published neither code nor weights; train one with `phrasezoo train slice-mini`.",
    "codebook": "The multi-facet codebook paper published no weights; train one with `phrasezoo train "
    "codebook-phrase-mini`.",
}


def releases_of(method: str) -> list[Release]:
    """The published checkpoints of ``method`` (none for SLICE and the codebook model: ``ValueError`` saying so)."""
    if method in NO_WEIGHTS:
        raise ValueError(f"No published checkpoint to convert for '{method}': {NO_WEIGHTS[method]}")
    found = [r for r in RELEASES.values() if r.method == method]
    if not found:
        known = ", ".join(sorted({r.method for r in RELEASES.values()}))
        raise ValueError(f"Unknown method '{method}' for convert; methods with published checkpoints: {known}.")
    return found


CARD_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}: {{ source }} in phrasezoo

The checkpoint that the authors of {{ citation }} published as
[`{{ source }}`](https://huggingface.co/{{ source }}) (revision `{{ revision }}`), converted into phrasezoo's
`{{ model_class }}` so that it loads with `transformers` alone, runs the zoo's `encode` and compares with the zoo's
models in one harness. The weights are the authors'; only their container changed (safetensors, the model's code
next to them).

## Usage

```python
from transformers import AutoModel

model = AutoModel.from_pretrained("{{ repo_id }}", trust_remote_code=True)
{{ usage }}
```

## What was converted

- The release: {{ what }}.
- The authors' forward pass, which `encode` reproduces: {{ official_use }}.
{% for key, value in facts.items() %}- {{ key }}: {{ value }}
{% endfor %}
## Not in the release
{% for item in missing %}
- {{ item }}{% endfor %}

## Results

These are the authors' numbers for this checkpoint, not measurements of this conversion; measure it with
`phrasezoo evaluate --model <this folder>`.
{% if paper_table %}
{{ paper_table }}
{% endif %}{% if reported %}
Also reported by the authors: {{ reported }}.
{% endif %}
## Credits and licence

Weights by the authors of {{ citation }}; official code: {{ code }}. Source: `{{ source }}` at revision
`{{ revision }}`. The licence of the release is kept: **{{ license }}**. phrasezoo only converted it.

```bibtex
{{ bibtex }}
```
"""

USAGE = {
    "pearl": 'embeddings = model.encode(["The New York Times", "NYTimes", "New York Post"])  # numpy, L2-normalised\n'
    "print(embeddings @ embeddings.T)",
    "phrase_bert": 'embeddings = model.encode(["play an active role", "participate actively", "active lifestyle"])\n'
    "print(embeddings @ embeddings.T)  # cosine; normalize=False gives the authors' unnormalised vectors",
    "uctopic": 'mentions = [("Beyoncé lives in Los Angeles.", (17, 28)), ("He moved to L.A. in 2001.", (12, 16))]\n'
    "embeddings = model.encode(mentions)  # (sentence, (char_start, char_end)) pairs, unit-normalised",
}


def paper_table(release: Release) -> str:
    """The authors' numbers for ``release`` from its method's ``paper_rows``, as a markdown table (or empty)."""
    row = get_method(release.method).paper_rows.get(release.paper_row or "")
    if not row:
        return ""
    header = "| model | " + " | ".join(row) + " |"
    rule = "|---|" + "---:|" * len(row)
    return "\n".join([header, rule, f"| {release.paper_row} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |"])


def write_release_card(
    output_dir: Path, release: Release, revision: str, repo_id: str, model_class: str, facts: dict[str, Any]
) -> Path:
    """The card of a converted release in ``output_dir/README.md``; ``repo_id`` is where it will be published."""
    paper = PAPERS[release.method]
    card_data = ModelCardData(
        language="en",
        license=release.license,
        library_name="transformers",
        pipeline_tag="feature-extraction",
        tags=["phrasezoo", release.method, "phrase-embeddings", "custom_code", "converted"],
        base_model=release.repo_id,
        model_name=Path(repo_id).name,
    )
    card = ModelCard.from_template(
        card_data,
        template_str=CARD_TEMPLATE,
        name=Path(repo_id).name,
        source=release.repo_id,
        revision=revision,
        repo_id=repo_id,
        model_class=model_class,
        usage=USAGE[release.method],
        what=release.what,
        official_use=release.official_use,
        facts=facts,
        missing=release.missing or ("nothing the zoo's model uses",),
        paper_table=paper_table(release),
        reported=release.reported,
        citation=paper.citation,
        code=paper.code,
        license=release.license,
        bibtex=paper.bibtex,
    )
    path = Path(output_dir) / "README.md"
    atomic_write_text(path, str(card))
    return path
