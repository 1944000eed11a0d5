"""Tiny random stand-ins of the papers' published checkpoints, laid out file for file as the releases are.

No machine here reaches the Hub, so the converters are tested on these, served under the real repo ids by the local
Hub of the tests (:class:`tests.recipes_offline.served_hub.ServedHub`):

- ``Lihuchen/pearl_small`` and ``Lihuchen/pearl_base``: a sentence-transformers folder whose transformer sits at the
  root (``config.json`` of a ``BertModel``, ``model.safetensors`` with the pooler, the WordPiece tokenizer),
  ``modules.json`` (Transformer, Pooling), ``sentence_bert_config.json``, ``config_sentence_transformers.json`` and
  ``1_Pooling/config.json`` (mean pooling). Two sizes, as the releases (E5-small-v2 and E5-base-v2 size).
- ``whaleloops/phrase-bert``: the same layout with the weights in ``pytorch_model.bin`` (a pickled state dict with
  the ``embeddings.position_ids`` buffer that transformers 4.x saved), as the release has them.
- ``JiachengLi/uctopic-base``: ``pytorch_model.bin`` holding ``luke.*`` (a ``LukeModel`` with its pooler and an
  entity table of :data:`N_ENTITIES` rows standing for 500k) and ``mlp.dense.*`` (the authors' dense + tanh head),
  ``config.json`` with ``model_type: luke``, and the slow tokenizer's files of 2021: ``vocab.json``, ``merges.txt``
  (RoBERTa-style byte-level BPE), ``entity_vocab.json`` (LUKE's special entities first, then titles),
  ``tokenizer_config.json`` and ``special_tokens_map.json``.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

from tests.recipes_offline.hub_files import WORDS, _folder_files, bert_repo, byte_level_bpe

PEARL_SMALL, PEARL_BASE = "Lihuchen/pearl_small", "Lihuchen/pearl_base"
PHRASE_BERT, UCTOPIC = "whaleloops/phrase-bert", "JiachengLi/uctopic-base"
#: rows of the stand-in's entity table (the release has 500k)
N_ENTITIES = 40
#: LUKE's special entities, at the ids luke-base gives them
LUKE_SPECIALS = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}
#: what the stand-in LUKE tokenizer knows as whole words (each also capitalised)
LUKE_WORDS = sorted({*WORDS, *(w.capitalize() for w in WORDS)})


def _json(data) -> bytes:
    return json.dumps(data, indent=2).encode()


def sentence_transformers_files(max_seq_length: int, dim: int, card: str) -> dict[str, bytes]:
    """The files a sentence-transformers 2.x save adds to a transformer at the folder's root (mean pooling)."""
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    pooling = {"word_embedding_dimension": dim, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}  # fmt: skip
    return {
        "modules.json": _json(modules),
        "sentence_bert_config.json": _json({"max_seq_length": max_seq_length, "do_lower_case": False}),
        "config_sentence_transformers.json": _json({"__version__": {"sentence_transformers": "2.2.2"}}),
        "1_Pooling/config.json": _json(pooling),
        "README.md": card.encode(),
    }


def pearl_release(seed: int, hidden: int) -> dict[str, bytes]:
    files = bert_repo(seed, hidden_size=hidden, intermediate_size=2 * hidden)
    card = "---\nlicense: apache-2.0\ntags:\n- sentence-transformers\n---\n# PEARL (stand-in)\n"
    return {**files, **sentence_transformers_files(512, hidden, card)}


def phrase_bert_release() -> dict[str, bytes]:
    """Phrase-BERT's layout: the BERT weights pickled in ``pytorch_model.bin`` instead of ``model.safetensors``."""
    import torch
    from safetensors.torch import load

    files = bert_repo(7)
    state = dict(load(files.pop("model.safetensors")))
    state["embeddings.position_ids"] = torch.arange(512).unsqueeze(0)  # a buffer transformers 4.x saved
    buffer = io.BytesIO()
    torch.save(state, buffer)
    files["pytorch_model.bin"] = buffer.getvalue()
    card = "---\ntags:\n- sentence-transformers\n---\n# whaleloops/phrase-bert (stand-in)\n"
    return {**files, **sentence_transformers_files(128, 32, card)}


def uctopic_release() -> dict[str, bytes]:
    """UCTopic's layout: a LUKE with the authors' head, pickled under their key names, and LUKE's slow tokenizer."""
    import torch
    from transformers import LukeConfig, LukeModel

    vocab, merges = byte_level_bpe(LUKE_WORDS)
    titles = [f"{w}_(entity)" for w in LUKE_WORDS[: N_ENTITIES - len(LUKE_SPECIALS)]]
    entity_vocab = {**LUKE_SPECIALS, **{t: len(LUKE_SPECIALS) + i for i, t in enumerate(titles)}}
    config = LukeConfig(vocab_size=len(vocab) + 2, entity_vocab_size=N_ENTITIES, entity_emb_size=16, hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=514,
                        type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)  # fmt: skip
    torch.manual_seed(11)
    luke = LukeModel(config)  # with its pooler, as the authors' class holds it
    mlp = torch.nn.Linear(32, 32)
    torch.nn.init.normal_(mlp.weight, std=0.3)  # a head whose tanh is not near-linear
    state = {f"luke.{k}": v for k, v in luke.state_dict().items()}
    state["luke.embeddings.position_ids"] = torch.arange(514).unsqueeze(0)
    state.update({"mlp.dense.weight": mlp.weight.detach(), "mlp.dense.bias": mlp.bias.detach()})
    buffer = io.BytesIO()
    torch.save(state, buffer)
    tokenizer_config = {"errors": "replace", "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
                        "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>",
                        "add_prefix_space": False, "task": None, "max_entity_length": 32, "max_mention_length": 30,
                        "entity_token_1": "<ent>", "entity_token_2": "<ent2>", "model_max_length": 512,
                        "tokenizer_class": "LukeTokenizer"}  # fmt: skip
    specials = {k: tokenizer_config[k] for k in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                                                 "cls_token", "mask_token")}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        files = _folder_files(Path(tmp))
    return {
        **files,
        "pytorch_model.bin": buffer.getvalue(),
        "vocab.json": json.dumps(vocab, ensure_ascii=False).encode(),
        "merges.txt": ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)).encode(),
        "entity_vocab.json": json.dumps(entity_vocab, ensure_ascii=False).encode(),
        "tokenizer_config.json": _json(tokenizer_config),
        "special_tokens_map.json": _json({**specials, "additional_special_tokens": ["<ent>", "<ent2>"]}),
        "README.md": b"---\nlicense: mit\n---\n# UCTopic (stand-in)\n",
    }


def release_repos() -> dict[str, dict[str, bytes]]:
    """Every stand-in by the repo id of the release it stands for."""
    return {
        PEARL_SMALL: pearl_release(5, 32),
        PEARL_BASE: pearl_release(6, 48),
        PHRASE_BERT: phrase_bert_release(),
        UCTOPIC: uctopic_release(),
    }
