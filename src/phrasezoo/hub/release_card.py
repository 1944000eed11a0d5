"""The model card of a converted release: the authors credited, the source and its revision, their licence kept.

The text is a Jinja template for ``huggingface_hub.ModelCard.from_template`` (as the trained models' cards in
``model_cards/``); every fact comes from the method's :class:`~phrasezoo.zoo.releases.Release` declaration, the
conversion and the method's ``paper_rows`` (the published numbers, shown until ``phrasezoo evaluate`` measures the
conversion).
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from phrasezoo.core.files import atomic_write_text
from phrasezoo.zoo.registry import get_method
from phrasezoo.zoo.releases import Release

CARD_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}: {{ source }} in phrasezoo

The checkpoint that the authors of {{ citation }} published as
[`{{ source }}`](https://huggingface.co/{{ source }}) (revision `{{ revision }}`), converted into phrasezoo's
`{{ model_class }}`: it loads with `transformers` alone, runs the zoo's `encode` and compares with the zoo's models
in one harness. The weights are the authors'; only their container changed (safetensors, the model's code next to
them).

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

Published numbers for this checkpoint, not measurements of this conversion; measure it with
`phrasezoo evaluate --model <this folder>`.
{% if paper_table %}
{{ paper_table }}
{% endif %}{% if reported %}
Note: {{ reported }}.
{% endif %}
## Credits and licence

Weights by the authors of {{ citation }}; official code: {{ code }}. Source: `{{ source }}` at revision
`{{ revision }}`. The licence of the release is kept: **{{ license }}**. phrasezoo only converted it.

```bibtex
{{ bibtex }}
```
"""


def paper_table(method: str, release: Release) -> str:
    """The published numbers for ``release`` (its row of the method's ``paper_rows``) as a markdown table, or ``""``."""
    row = get_method(method).paper_rows.get(release.paper_row or "")
    if not row:
        return ""
    header = "| model | " + " | ".join(row) + " |"
    rule = "|---|" + "---:|" * len(row)
    return "\n".join([header, rule, f"| {release.paper_row} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |"])


def write_release_card(
    output_dir: Path, method: str, release: Release, revision: str, repo_id: str, model_class: str, facts: dict
) -> Path:
    """The card of a converted release in ``output_dir/README.md``; ``repo_id`` is where it will be published."""
    name = repo_id.rsplit("/", 1)[-1]
    card_data = ModelCardData(
        language="en",
        license=release.license,
        library_name="transformers",
        pipeline_tag="feature-extraction",
        tags=["phrasezoo", method, "phrase-embeddings", "custom_code", "converted"],
        base_model=release.repo_id,
        model_name=name,
    )
    card = ModelCard.from_template(
        card_data,
        template_str=CARD_TEMPLATE,
        name=name,
        source=release.repo_id,
        revision=revision,
        repo_id=repo_id,
        model_class=model_class,
        usage=release.usage,
        what=release.what,
        official_use=release.official_use,
        facts=facts,
        missing=release.missing or ("nothing the converted model uses",),
        paper_table=paper_table(method, release),
        reported=release.reported,
        citation=release.paper.citation,
        code=release.paper.code,
        license=release.license,
        bibtex=release.paper.bibtex,
    )
    path = Path(output_dir) / "README.md"
    atomic_write_text(path, str(card) + "\n")
    return path
