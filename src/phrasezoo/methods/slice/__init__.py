"""SLICE (Orbach, Haikin, David & Faizakof, 2024) in the zoo: the registry entry. Training task in ``task.py`` (the
paper's best-span loss, and the whole-passage control), triplet data in ``data.py``, the paper's Table 1 report on
STS-B-Context in ``report.py``; the model is :mod:`phrasezoo.models.slice`."""

from __future__ import annotations

from phrasezoo.models.slice.configuration_slice import SliceConfig
from phrasezoo.models.slice.modeling_slice import SliceModel
from phrasezoo.zoo.registry import Arg, Method, OutputKind, signature_args

from .assembly import build_task
from .data import SOURCES, build_slice_data
from .task import METHOD_ARGS_DOCS

TINY_BERT = {
    "model_type": "bert", "vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
    "intermediate_size": 64,
}  # fmt: skip

METHOD = Method(
    name="slice",
    description="SLICE: span-aggregatable contextual token embeddings trained with a best-span loss "
    "(Orbach et al., 2024)",
    config_class=SliceConfig,
    model_class=SliceModel,
    model_files=(
        "phrasezoo.models.slice.configuration_slice",
        "phrasezoo.models.slice.modeling_slice",
        "phrasezoo.models.slice.span_pooling",
    ),
    output_kind=OutputKind.TOKENS,
    from_backbone=SliceModel.from_backbone,
    build_task=build_task,
    args={
        "model": signature_args(SliceConfig.__init__, exclude=("backbone_config", "special_token_ids")),
        "data": {
            **signature_args(build_slice_data, exclude=("progress",)),
            "source": Arg("synthetic", "synthetic offline triplets or MS MARCO (the paper)", choices=SOURCES),
            "paraphrasers": Arg(("lexical", "pivot"), "query paraphrase sources", choices=("lexical", "pivot")),
        },
        "task": {name: Arg(default, METHOD_ARGS_DOCS[name]) for name, default in METHOD_ARGS_DOCS.defaults.items()},
    },
    tiny_config={"backbone_config": TINY_BERT, "max_seq_length": 64},
    sample_inputs=[
        "a man riding a horse",
        "complete control",
        "The local authorities have complete control over the allocation of building materials.",
        "a",
    ],
    bad_inputs=[([], "empty list"), ([""], "empty"), (["ok", 3], "not a string"), ("   ", "empty")],
    span_context="tokens",
    paper_rows={
        "SLICE (paper)": {
            "stsb_context:pearson_passage": 0.547,
            "stsb_context:spearman_passage": 0.535,
            "stsb_context:pearson_spans_single_pass": 0.677,
            "stsb_context:spearman_spans_single_pass": 0.669,
        }
    },
)
