"""PEARL (Chen et al., 2024) in the zoo: the registry entry. Training task in ``task.py``, data in ``data.py`` (with
its augmentation in ``augment.py``, hard negatives in ``hard_negatives.py``, alias pairs in the package ``aliases``:
``aliases/alias_sources.py``, ``aliases/lead_aliases.py`` ...), character-encoder pretraining in ``char_pretrain.py``,
the sentence-transformers input module in ``st_modules.py``; the model is :mod:`phrasezoo.models.pearl`."""

from __future__ import annotations

from phrasezoo.models.pearl.configuration_pearl import PearlConfig
from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.zoo.registry import Arg, Method, OutputKind, benchmark_filter_arg, lexicon_args, signature_args

from .assembly import build_task
from .char_pretrain import CHAR_PRETRAIN_DEFAULTS
from .data import build_pearl_dataset
from .release import RELEASES
from .type_head import DEFAULT_C, DEFAULT_MAX_ROWS, refit_after_training

TINY_BERT = {
    "model_type": "bert", "vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
    "intermediate_size": 64,
}  # fmt: skip

METHOD = Method(
    name="pearl",
    description="PEARL: phrase encoder + LOVE character encoder + phrase-type head (Chen et al., 2024)",
    config_class=PearlConfig,
    model_class=PearlModel,
    model_files=("phrasezoo.models.pearl.configuration_pearl", "phrasezoo.models.pearl.modeling_pearl"),
    output_kind=OutputKind.VECTOR,
    from_backbone=PearlModel.from_backbone,
    build_task=build_task,
    finalize=refit_after_training,
    releases=RELEASES,  # the authors' published checkpoints, for `phrasezoo convert`
    args={
        "model": signature_args(PearlConfig.__init__, exclude=("backbone_config",)),
        "data": {
            **signature_args(build_pearl_dataset, exclude=("progress",)),
            "augmentation_mix": Arg(None, "augmentation probabilities by kind (default: the official mix)"),
            "benchmark_filter": benchmark_filter_arg(
                "table rows (phrase, paraphrases, hard negatives) that touch a test-benchmark item, and replace "
                "training views that would"
            ),
            "alias_pairs": Arg(
                None,
                "real alias positives from `sources`: 'links' (the embedded dump's link anchor <-> title) and "
                "'leads' (aliases stated in the wiki leads' first sentences), 'wordnet' (compound <-> one-word synonyms of "
                "the synsets dev_compound does not use), 'wordnet-names' (the other names of WordNet's named things, "
                "at most `wordnet_names_max` pairs, none touching a dev-suite string); training titles only (never "
                "dev_alias's), each pair a row both ways, repeated `repeat` times, with `hard_negatives` look-alike "
                "names of other entities each and, if `typed`, the phrase type the table holds for another name of the "
                "entity (default: none); 'names' (the name benchmark's training entities: acronym, alias, short and "
                "noisy <-> canonical names, never a scored dev/test string, at most `names_max` pairs, each name with "
                "`names_siblings` look-alike siblings as hard negatives, default 4)",
                keys=(
                    "repeat",
                    "dump",
                    "sources",
                    "hard_negatives",
                    "typed",
                    "wordnet_names_max",
                    "names_max",
                    "names_siblings",
                ),
            ),
        },
        "task": {
            "temperature": Arg(0.07, "NT-Xent temperature"),
            "hard_negatives": Arg(2, "hard negatives per anchor in a batch"),
            "type_loss_weight": Arg(1.0, "weight of the phrase-type cross-entropy"),
            "char_pretrain": Arg(None, "LOVE-style character-encoder pretraining", keys=tuple(CHAR_PRETRAIN_DEFAULTS)),
            "distill_weight": Arg(0.0, "weight of the teacher-similarity distillation term (0: off, as in the paper)"),
            "teacher": Arg(
                "mpnet-base",
                "teacher encoder for distillation: a backbone name, folder or Hub id, or a blend {name: weight} "
                "whose cosines are the weighted mean of the encoders' (phrasezoo.objectives.teacher)",
            ),
            "distill_words": Arg(0, "words of each multiword anchor added to the distillation matrix only (0: off)"),
            "type_head_refit": Arg(
                None,
                "after training and the dev-suite selection, refit the type head on the final encoder: a logistic "
                f"regression over the phrase table's typed phrases (true, or {{max_rows: {DEFAULT_MAX_ROWS}, c: "
                f"{DEFAULT_C}}}; not in the paper; phrasezoo.methods.pearl.type_head)",
                keys=("max_rows", "c"),
                after_training=True,
            ),
            "teacher_guard": Arg(
                False,
                "keep the teacher term off the rows whose positive is another name of the anchor and whose teacher "
                "ranks one of the row's hard negatives at or above it (the alias and those negatives leave the "
                "distillation matrix; not in the paper)",
            ),
            **lexicon_args(),
        },
    },
    tiny_config={
        "backbone_config": TINY_BERT,
        "char_hidden_size": 16,
        "char_num_heads": 2,
        "char_intermediate_size": 32,
    },  # fmt: skip
    # the PEARL paper's table (BERT-base size unless noted; E5-small is its baseline), as fractions; YAGO/UMLS are left
    # out on purpose: the paper searched the full KBs, our suite a gold-name KB
    sentence_transformers="st_modules:PearlEncoder",
    paper_rows={
        "E5-small, 34M (paper)": {
            "turney": 0.559,
            "bird": 0.631,
            "ppdb": 0.960,
            "ppdb_filtered": 0.568,
            "conll2003": 0.276,
            "bc5cdr": 0.537,
            "autofj": 0.748,
        },
        "PEARL-small, 40M (paper)": {
            "turney": 0.561,
            "bird": 0.697,
            "ppdb": 0.972,
            "ppdb_filtered": 0.692,
            "conll2003": 0.487,
            "bc5cdr": 0.610,
            "autofj": 0.746,
        },
        "PEARL-base (paper)": {
            "turney": 0.609,
            "bird": 0.723,
            "ppdb": 0.971,
            "ppdb_filtered": 0.727,
            "conll2003": 0.409,
            "bc5cdr": 0.695,
            "autofj": 0.763,
        },
    },  # fmt: skip
    sample_inputs=["The New York Times", "NYTimes", "New York Post", "New-York Daily Times", "ab"],
    bad_inputs=[([], "empty list"), ([""], "empty"), (["ok", 3], "not a string"), ("   ", "empty")],
)
