"""nomic-embed-text-v1.5's GGUF file converted into a transformers ``nomic_bert`` folder (see :mod:`.nomic`): fp16
safetensors on disk, loaded in fp32, with a BERT WordPiece tokenizer rebuilt from the GGUF vocabulary. Imported
only to convert (once per cache): it needs torch, transformers and the optional ``gguf`` package.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import torch
from gguf import GGUFReader
from transformers import BertTokenizerFast
from transformers.models.nomic_bert import NomicBertConfig, NomicBertModel


def wordpiece_vocabulary(tokens: list[str]) -> list[str]:
    """BERT's WordPiece vocabulary from llama.cpp's spelling: a word-initial piece carries "▁" (BERT writes it
    bare), a continuation is bare (BERT writes "##"); bracketed special tokens stay as they are."""
    out = []
    for token in tokens:
        if token.startswith("\u2581"):
            out.append(token[1:])
        elif re.fullmatch(r"\[[^\]]+\]", token):
            out.append(token)
        else:
            out.append("##" + token)
    return out


def convert_gguf(path: Path, folder: Path) -> Path:
    """A transformers ``nomic_bert`` folder (config, fp16 safetensors, tokenizer) from a nomic-bert GGUF file."""
    reader = GGUFReader(str(path))
    field = lambda key: reader.fields[key].contents()  # noqa: E731
    if field("general.architecture") != "nomic-bert":
        raise ValueError(f"{path} holds a {field('general.architecture')} model, not nomic-bert.")
    tensors = {t.name: np.asarray(t.data) for t in reader.tensors}
    state = {"embeddings.word_embeddings.weight": tensors["token_embd.weight"],
             "embeddings.token_type_embeddings.weight": tensors["token_types.weight"],
             "embeddings.LayerNorm.weight": tensors["token_embd_norm.weight"],
             "embeddings.LayerNorm.bias": tensors["token_embd_norm.bias"]}  # fmt: skip
    layers = int(field("nomic-bert.block_count"))
    names = {"attn_output.weight": "self_attn.o_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
             "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
             "attn_output_norm.weight": "post_attention_layernorm.weight",
             "attn_output_norm.bias": "post_attention_layernorm.bias",
             "layer_output_norm.weight": "post_mlp_layernorm.weight",
             "layer_output_norm.bias": "post_mlp_layernorm.bias"}  # fmt: skip
    for i in range(layers):
        q, k, v = np.split(tensors[f"blk.{i}.attn_qkv.weight"], 3, axis=0)
        state.update({f"layers.{i}.self_attn.q_proj.weight": q, f"layers.{i}.self_attn.k_proj.weight": k,
                      f"layers.{i}.self_attn.v_proj.weight": v})  # fmt: skip
        state.update({f"layers.{i}.{ours}": tensors[f"blk.{i}.{theirs}"] for theirs, ours in names.items()})
    config = NomicBertConfig(
        vocab_size=tensors["token_embd.weight"].shape[0],
        hidden_size=int(field("nomic-bert.embedding_length")),
        num_hidden_layers=layers,
        num_attention_heads=int(field("nomic-bert.attention.head_count")),
        intermediate_size=int(field("nomic-bert.feed_forward_length")),
        max_position_embeddings=int(field("nomic-bert.context_length")),
        layer_norm_eps=float(field("nomic-bert.attention.layer_norm_epsilon")),
        type_vocab_size=tensors["token_types.weight"].shape[0],
        pad_token_id=int(field("tokenizer.ggml.padding_token_id")),
        rope_parameters={"rope_theta": float(field("nomic-bert.rope.freq_base")), "rope_type": "default"},
    )
    model = NomicBertModel(config)
    model.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()}, strict=True)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.to(torch.float16).save_pretrained(tmp, safe_serialization=True)
    vocabulary = wordpiece_vocabulary(list(field("tokenizer.ggml.tokens")))
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocabulary)}, do_lower_case=True,
                                  model_max_length=config.max_position_embeddings)  # fmt: skip
    tokenizer.save_pretrained(tmp)
    saved = json.loads((tmp / "config.json").read_text())
    saved["dtype"] = "float32"  # compute in fp32 (weights stay fp16 on disk)
    (tmp / "config.json").write_text(json.dumps(saved, indent=2) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.replace(folder)
    return folder
