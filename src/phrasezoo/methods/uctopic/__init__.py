"""UCTopic (Li et al., 2022) in the zoo: the registry entry. Pretraining task in ``task.py``, mention data in
``data.py``; the model is :mod:`phrasezoo.models.uctopic`. CCL finetuning in ``ccl.py``, used by the CCL evaluation
tasks (``tasks/``) and by topic mining (``topic_mining/``, the ``phrasezoo topics mine|show`` commands)."""

from __future__ import annotations

from phrasezoo.models.uctopic.configuration_uctopic import UCTopicConfig
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.zoo.registry import Arg, Method, OutputKind, benchmark_filter_arg, lexicon_args, signature_args

from .assembly import build_task
from .data import SOURCES, build_uctopic_dataset
from .release import RELEASES
from .task import UCTopicTask


def _mention(sentence: str, phrase: str) -> tuple[str, tuple[int, int]]:
    start = sentence.index(phrase)
    return sentence, (start, start + len(phrase))


def check_recipe(recipe) -> None:
    """An MLM loss needs the MLM head."""
    if recipe.training.method_args.get("mlm_weight") and not recipe.model.get("use_mlm_head"):
        raise ValueError(f"{recipe.name}: training.method_args.mlm_weight > 0 needs model.use_mlm_head: true.")


TINY_BACKBONE = {"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}

METHOD = Method(
    name="uctopic",
    description="UCTopic: context-aware phrase mentions, contrastive pretraining, CCL topic mining (Li et al., 2022)",
    config_class=UCTopicConfig,
    model_class=UCTopicModel,
    model_files=("phrasezoo.models.uctopic.configuration_uctopic", "phrasezoo.models.uctopic.modeling_uctopic"),
    output_kind=OutputKind.VECTOR,
    from_backbone=UCTopicModel.from_backbone,
    build_task=build_task,
    check_recipe=check_recipe,
    # the paper's protocol: entity mentions clustered in their sentences, before and after CCL finetuning
    # the paper's own protocol (all splits pooled, best score seen during CCL, selected on gold labels): marked †
    span_context="mentions",
    paper_rows={
        "UCTopic CCL (paper)†": {
            "conll2003_context_ccl:nmi": 0.495,
            "conll2003_context_ccl:acc": 0.743,
            "bc5cdr_context_ccl:nmi": 0.865,
        },
    },  # fmt: skip
    task_groups={"uctopic": ("conll2003_context", "bc5cdr_context", "conll2003_context_ccl", "bc5cdr_context_ccl")},
    topic_commands=("topic_mining.commands:add_mining_commands",),
    releases=RELEASES,  # the authors' published checkpoints, for `phrasezoo convert`
    args={
        "model": {
            **signature_args(UCTopicConfig.__init__, exclude=("backbone_config",)),
            **signature_args(UCTopicModel.from_backbone, exclude=("backbone",)),
        },
        "data": {
            **signature_args(build_uctopic_dataset, exclude=("cache", "progress")),
            "sources": Arg(("entities", "noun_phrases"), "where mentions come from", choices=SOURCES),
            "benchmark_filter": benchmark_filter_arg(
                "mention instances whose mention or sentence touches a test-benchmark item"
            ),
        },
        "task": {
            **signature_args(UCTopicTask.__init__, exclude=("model", "dataset", "facts", "terms")),
            **lexicon_args(),
            "teacher": Arg("mpnet-base", "teacher encoder of the lexicon term (a backbone name, folder or Hub id)"),
        },
    },
    tiny_config={
        "backbone_config": {"model_type": "bert", **TINY_BACKBONE, "intermediate_size": 64},
        "max_seq_length": 64,
    },
    # LUKE (the paper's entity path), offline: LUKE's own tokenizer (RoBERTa BPE + 500k entities) cannot be
    # downloaded here and UCTopic does not need it (span positions come from the fast tokenizer's offsets, the entity
    # input is always [MASK]): the tiny LUKE reads MiniLM's word pieces (vocabulary size matched, padding id 0) and
    # has a 3-entity vocabulary whose id 2 plays [MASK], as in studio-ousia/luke-base.
    tiny_variants={
        "luke": {
            "backbone_config": {
                "model_type": "luke",
                **TINY_BACKBONE,
                "intermediate_size": 64,
                "entity_vocab_size": 3,
                "entity_emb_size": 16,
                "max_position_embeddings": 80,
                "pad_token_id": 0,
            },
            "mask_entity_id": 2,
            "max_seq_length": 64,
        }
    },  # fmt: skip
    sample_inputs=[
        _mention("He lived on the east coast of the United States.", "United States"),
        _mention("How much does it cost to fly to the United States?", "United States"),
        _mention("Apple released a new phone in September.", "Apple"),
        _mention("She ate an apple after the long match.", "apple"),
        "New York Post",
    ],
    bad_inputs=[
        ([], "empty list"),
        ([""], "empty"),
        ("   ", "empty"),
        ([("Apple released a phone.", (0, 99))], "outside the sentence"),
        ([("Apple released a phone.", (-1, 3))], "outside the sentence"),
        ([("Apple released a phone.", (3, 3))], "empty span"),
        ([("Apple released a phone.", (5, 6))], "only whitespace"),
        ([(3, (0, 1))], "not a string"),
        ([("Apple released a phone.", "0:5")], "span must be"),
    ],
)
