"""Phrase-BERT (Wang et al., 2021) in the zoo: the registry entry. Training task in ``task.py``, data in ``data.py``;
the model is :mod:`phrasezoo.models.phrase_bert`. PNTM, the paper's phrase-based topic model, is in ``pntm/`` (the
``phrasezoo topics pntm`` command)."""

from __future__ import annotations

from phrasezoo.models.phrase_bert.configuration_phrase_bert import PhraseBertConfig
from phrasezoo.models.phrase_bert.modeling_phrase_bert import PhraseBertModel
from phrasezoo.zoo.registry import Arg, Method, OutputKind, benchmark_filter_arg, lexicon_args, signature_args

from .assembly import build_task
from .data import OBJECTIVES, build_phrase_bert_data
from .release import RELEASES

METHOD = Method(
    name="phrase_bert",
    description="Phrase-BERT: BERT + mean pooling fine-tuned with paraphrase and phrase-in-context triplets "
    "(Wang et al., 2021)",
    config_class=PhraseBertConfig,
    model_class=PhraseBertModel,
    model_files=(
        "phrasezoo.models.phrase_bert.configuration_phrase_bert",
        "phrasezoo.models.phrase_bert.modeling_phrase_bert",
    ),
    output_kind=OutputKind.VECTOR,
    from_backbone=PhraseBertModel.from_backbone,
    build_task=build_task,
    args={
        "model": signature_args(PhraseBertConfig.__init__, exclude=("backbone_config",)),
        "data": {
            **signature_args(build_phrase_bert_data, exclude=("progress",)),
            "objectives": Arg(OBJECTIVES, "training sets: paraphrase triples, context triples", choices=OBJECTIVES),
            "benchmark_filter": benchmark_filter_arg("training triples that touch a test-benchmark item"),
        },
        "task": {
            "margin": Arg(1.0, "the paper's triplet margin"),
            "normalize": Arg(False, "compare L2-normalised embeddings instead of raw mean-pooled ones (paper: raw)"),
            "distill_weight": Arg(0.0, "weight of the teacher-similarity distillation term (0: off, as in the paper)"),
            "teacher": Arg(
                "mpnet-base",
                "teacher encoder for distillation: a backbone name, folder or Hub id, or a blend {name: weight} "
                "whose cosines are the weighted mean of the encoders' (phrasezoo.objectives.teacher)",
            ),
            **lexicon_args(),
        },
    },
    tiny_config={
        "backbone_config": {
            "model_type": "bert",
            "vocab_size": 30522,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
        },
        "max_seq_length": 64,
    },  # fmt: skip
    # published numbers (PEARL's table and SLICE's single-pass STS-B-Context), as fractions
    topic_commands=("pntm.commands:add_pntm_command",),
    sentence_transformers="mean_pooling",
    releases=RELEASES,  # the authors' published checkpoints, for `phrasezoo convert`
    paper_rows={
        "Phrase-BERT (paper)": {
            "turney": 0.572,
            "bird": 0.688,
            "ppdb": 0.968,
            "ppdb_filtered": 0.687,
            "conll2003": 0.354,
            "bc5cdr": 0.595,
            "autofj": 0.669,
            "stsb_context:pearson_spans_single_pass": 0.643,
        },
    },  # fmt: skip
    sample_inputs=[
        "complete control",
        "full power of the system",
        "pulls the trigger",
        "The local authorities have complete control over the allocation of building materials.",
        "a",
    ],
    bad_inputs=[([], "empty list"), ([""], "empty"), (["ok", 3], "not a string"), ("   ", "empty")],
)
