"""The UCTopic checkpoint the authors published (``JiachengLi/uctopic-base``), for ``phrasezoo convert uctopic``.

The release is ``pytorch_model.bin`` with the authors' class's keys, ``luke.*`` (a LUKE-base ``LukeModel``, its
500k x 256 entity table included) and ``mlp.dense.*`` (one dense + tanh layer), LUKE's tokenizer files
(``vocab.json``, ``merges.txt``, ``entity_vocab.json``) and ``config.json`` with ``model_type: luke``. The authors'
phrase vector is ``tanh(mlp(entity state))``, unit-normalised, of one ``[MASK]`` entity on the mention's tokens, with
the sentence tokenized by ``LukeTokenizer(text, entity_spans=[span], add_prefix_space=True)``. The converted
:class:`~phrasezoo.models.uctopic.modeling_uctopic.UCTopicModel` reads the span as that entity
(``span_representation="entity"``), tokenizes the same way (``span_tokenization="segments"``) and keeps only the
rows of LUKE's special entities: UCTopic never feeds another entity, so the vectors are the same.
"""

from __future__ import annotations

import json
from pathlib import Path

from transformers import AutoConfig, LukeTokenizer

from phrasezoo.models.uctopic.configuration_uctopic import UCTopicConfig
from phrasezoo.models.uctopic.modeling_uctopic import UCTopicModel
from phrasezoo.zoo.releases import Paper, Release, load_weights, read_weights

#: LUKE's special entities: the only rows of the entity table the conversion keeps
SPECIAL_ENTITIES = ("[PAD]", "[UNK]", "[MASK]", "[MASK2]")
ENTITY_TABLE = "luke.entity_embeddings.entity_embeddings.weight"
PAPER = Paper(
    "Li, Shang & McAuley, *UCTopic: Unsupervised Contrastive Learning for Phrase Representations and Topic Mining* "
    "(ACL 2022)",
    "https://github.com/JiachengLi1995/UCTopic",
    "@inproceedings{li2022uctopic,\n  title  = {UCTopic: Unsupervised Contrastive Learning for Phrase "
    "Representations and Topic Mining},\n  author = {Li, Jiacheng and Shang, Jingbo and McAuley, Julian},\n  "
    "booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics},\n  "
    "year   = {2022}\n}",
)


def convert(folder: Path) -> tuple[UCTopicModel, dict[str, str]]:
    """The UCTopic release as a :class:`UCTopicModel` with its LUKE backbone, the authors' head and tokenization."""
    luke_config = AutoConfig.from_pretrained(folder)
    if luke_config.model_type != "luke":
        raise ValueError(f"{folder}: config.json says model_type {luke_config.model_type!r}; UCTopic's is 'luke'.")
    entity_vocab = json.loads((folder / "entity_vocab.json").read_text())
    if not isinstance(entity_vocab, dict) or "[MASK]" not in entity_vocab:
        raise ValueError(f"{folder}/entity_vocab.json has no [MASK] entity (a {{name: id}} mapping is expected).")
    kept = sorted((entity_vocab[name], name) for name in SPECIAL_ENTITIES if name in entity_vocab)
    state = read_weights(folder)
    rows = state[ENTITY_TABLE].shape[0]
    state[ENTITY_TABLE] = state[ENTITY_TABLE][[i for i, _ in kept]].clone()
    luke_config.entity_vocab_size = len(kept)
    new_ids = {name: j for j, (_, name) in enumerate(kept)}
    tokenizer = _tokenizer(folder, new_ids)
    limit = luke_config.max_position_embeddings - luke_config.pad_token_id - 1  # RoBERTa-style position ids
    config = UCTopicConfig(
        backbone_config=luke_config,
        span_representation="entity",
        mask_entity_id=new_ids["[MASK]"],
        max_mention_length=tokenizer.max_mention_length,
        max_seq_length=min(tokenizer.model_max_length, limit),
        span_tokenization="segments",
    )
    model = UCTopicModel(config)
    left_out = load_weights(model.backbone, state, "luke.") + load_weights(model.mlp, state, "mlp.")
    others = sorted(k for k in state if not k.startswith(("luke.", "mlp.", "lm_head.")))
    if others:
        raise ValueError(f"{folder}: weights outside luke.*, mlp.* and lm_head.*: {others[:3]}.")
    left_out += ["lm_head.*"] if any(k.startswith("lm_head.") for k in state) else []
    model.set_tokenizer(tokenizer)
    return model, {
        "entity table": f"{len(kept)} of {rows} rows kept ({', '.join(name for _, name in kept)})",
        "tokenization": "the authors' (`span_tokenization='segments'`)",
        "max_seq_length": f"{config.max_seq_length} tokens, max_mention_length {config.max_mention_length}",
        "left out": ", ".join(f"`{k}`" for k in left_out) or "nothing",
    }


def _tokenizer(folder: Path, entity_vocab: dict[str, int]) -> LukeTokenizer:
    """LUKE's tokenizer of the release (``vocab.json``, ``merges.txt``) with its entity vocabulary cut to the kept
    rows. Read by class, not through ``AutoTokenizer``: the release's ``tokenizer_config.json`` may name the authors'
    own subclass. A special entity the release lacks points at ``[UNK]`` (else ``[MASK]``): LUKE's tokenizer needs
    all four, and UCTopic never feeds them."""
    fallback = entity_vocab.get("[UNK]", entity_vocab["[MASK]"])
    tokenizer = LukeTokenizer.from_pretrained(
        folder, entity_vocab={name: entity_vocab.get(name, fallback) for name in SPECIAL_ENTITIES}
    )
    if not tokenizer.is_fast:  # pragma: no cover - transformers 4.x
        raise ValueError("UCTopic needs a fast LUKE tokenizer (transformers >= 5).")
    return tokenizer


RELEASES = (
    Release(
        "JiachengLi/uctopic-base",
        PAPER,
        "LUKE-base (RoBERTa vocabulary plus entity tokens, `entity_vocab.json`, a 500k x 256 entity table) and one "
        "dense + tanh layer (`mlp`), `pytorch_model.bin`",
        "mit",
        "`LukeTokenizer(sentence, entity_spans=[span], add_prefix_space=True)`, LUKE with the `[MASK]` entity on the "
        "span, `tanh(mlp(entity state))`, unit-normalised",
        convert,
        'mentions = [("Beyoncé lives in Los Angeles.", (17, 28)), ("He moved to L.A. in 2001.", (12, 16))]\n'
        "embeddings = model.encode(mentions)  # (sentence, (char_start, char_end)) pairs, unit-normalised",
        (
            "LUKE's 500k Wikipedia entity embeddings: UCTopic only ever feeds the `[MASK]` entity, so the conversion "
            "keeps the rows of LUKE's special entities (`[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]`), which gives the same "
            "vectors",
            "the MLM head of pretraining and the cluster heads of CCL finetuning (`phrasezoo topics mine` finetunes "
            "its own)",
        ),
        "UCTopic CCL (paper)†",
        "the row above is this checkpoint after CCL finetuning on each dataset, in the authors' protocol (all splits "
        "pooled, the best score seen during finetuning)",
    ),
)
