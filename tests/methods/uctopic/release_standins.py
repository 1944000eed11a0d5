"""A stand-in of the published UCTopic checkpoint, ``JiachengLi/uctopic-base``, and the authors' forward pass (see
:mod:`tests.hub.release_layouts` for what this module provides).

The release: ``pytorch_model.bin`` holding the authors' class's keys, ``luke.*`` (a ``LukeModel`` with its pooler and
an entity table of :data:`N_ENTITIES` rows standing for 500k) and ``mlp.dense.*`` (their dense + tanh head),
``config.json`` with ``model_type: luke``, and the slow LUKE tokenizer's files of 2021: ``vocab.json``,
``merges.txt`` (RoBERTa-style byte-level BPE), ``entity_vocab.json`` (LUKE's special entities first, then titles),
``tokenizer_config.json`` and ``special_tokens_map.json``.

The reference follows the authors' ``UCTopicTool.encode``: ``tokenizer(texts, entity_spans=[[span]],
add_prefix_space=True)`` with their ``LukeTokenizer`` (transformers 4.7), then ``tanh(mlp(entity_last_hidden_state))``
and unit normalisation. That tokenizer call is written out here from its code (:func:`authors_inputs`) and checked
against transformers' own port of it.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import ByteLevel
from transformers import LukeConfig, LukeModel, LukeTokenizer

from tests.recipes_offline.hub_files import WORDS, _folder_files, byte_level_bpe

N_ENTITIES = 40
LUKE_SPECIALS = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}  # at the ids luke-base gives them
MAX_MENTION_LENGTH = 30
TOKENIZER_CONFIG = {
    "errors": "replace", "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
    "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>", "add_prefix_space": False, "task": None,
    "max_entity_length": 32, "max_mention_length": MAX_MENTION_LENGTH, "entity_token_1": "<ent>",
    "entity_token_2": "<ent2>", "model_max_length": 512, "tokenizer_class": "LukeTokenizer",
}  # fmt: skip


def _pickled(state: dict) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def release() -> dict[str, bytes]:
    words = sorted({*WORDS, *(w.capitalize() for w in WORDS)})
    vocab, merges = byte_level_bpe(words)
    titles = {f"{w}_(entity)": len(LUKE_SPECIALS) + i for i, w in enumerate(words[: N_ENTITIES - len(LUKE_SPECIALS)])}
    config = LukeConfig(vocab_size=len(vocab) + 2, entity_vocab_size=N_ENTITIES, entity_emb_size=16, hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=514,
                        type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)  # fmt: skip
    torch.manual_seed(11)
    luke, mlp = LukeModel(config), torch.nn.Linear(32, 32)  # LUKE with its pooler, as the authors' class holds it
    torch.nn.init.normal_(mlp.weight, std=0.3)  # a head whose tanh is not near-linear
    state = {f"luke.{k}": v for k, v in luke.state_dict().items()}
    state["luke.embeddings.position_ids"] = torch.arange(514).unsqueeze(0)
    state.update({"mlp.dense.weight": mlp.weight.detach(), "mlp.dense.bias": mlp.bias.detach()})
    specials = {k: v for k, v in TOKENIZER_CONFIG.items() if k.endswith("_token") and not k.startswith("entity")}
    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        files = _folder_files(Path(tmp))
    return {
        **files,
        "pytorch_model.bin": _pickled(state),
        "vocab.json": json.dumps(vocab, ensure_ascii=False).encode(),
        "merges.txt": ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)).encode(),
        "entity_vocab.json": json.dumps({**LUKE_SPECIALS, **titles}, ensure_ascii=False).encode(),
        "tokenizer_config.json": json.dumps(TOKENIZER_CONFIG, indent=2).encode(),
        "special_tokens_map.json": json.dumps({**specials, "additional_special_tokens": ["<ent>", "<ent2>"]}).encode(),
        "README.md": b"---\nlicense: mit\n---\n# UCTopic (stand-in)\n",
    }


STANDINS = {"JiachengLi/uctopic-base": release}
PUSHED_AS = {"JiachengLi/uctopic-base": "org/uctopic-base"}
#: mentions at the start, the end, inside and next to punctuation ("(Paris)": the authors' call adds spaces there)
INPUTS = [
    ("The New York Times reported on climate change.", (4, 18)),
    ("(Paris) was popular.", (1, 6)),
    ("Machine learning models need large datasets.", (0, 16)),
    ("Researchers in London signed the trade agreement.", (33, 48)),
    ("Researchers in London signed the trade agreement.", (15, 21)),
]


def authors_inputs(folder: Path, sentence: str, span: tuple[int, int]) -> tuple[list[int], list[int]]:
    """Their tokenizer call for one mention, written out from its code: the sentence is cut at the span's ends (a cut
    after a space moves before it), each piece is BPE-encoded with a leading space when it does not start with
    whitespace (``add_prefix_space=True`` reaches every piece), ``<s>``/``</s>`` wrap it; the entity's position ids
    are the span's token positions, at most ``max_mention_length``."""
    vocab = json.loads((folder / "vocab.json").read_text())
    bpe = Tokenizer(BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    bpe.pre_tokenizer = ByteLevel(add_prefix_space=False)

    def encode(piece: str) -> list[int]:
        return bpe.encode(piece if piece[0].isspace() else " " + piece).ids if piece else []

    ids, token_at, cursor = [], {}, 0
    for position in sorted(set(span)):
        cut = position - 1 if position > 0 and sentence[position - 1] == " " else position
        ids += encode(sentence[cursor:cut])
        cursor = max(cursor, cut)
        token_at[position] = len(ids)
    ids += encode(sentence[cursor:])
    positions = list(range(token_at[span[0]] + 1, token_at[span[1]] + 1))[:MAX_MENTION_LENGTH]
    return [vocab["<s>"], *ids, vocab["</s>"]], positions


def reference(folder: Path, mentions) -> np.ndarray:
    """The authors' forward pass: LUKE (the release's ``luke.*``, the whole entity table) with the ``[MASK]`` entity on
    the span, ``tanh(mlp.dense(entity state))``, unit-normalised. Each mention's inputs are also checked against
    transformers' port of their tokenizer (``LukeTokenizer(add_prefix_space=True)`` with ``entity_spans``)."""
    state = torch.load(folder / "pytorch_model.bin", weights_only=True)
    luke = LukeModel(LukeConfig.from_pretrained(folder)).eval()
    missing, unexpected = luke.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("luke.")}, False)
    assert not missing and unexpected == ["embeddings.position_ids"], (missing, unexpected)
    mask_id = json.loads((folder / "entity_vocab.json").read_text())["[MASK]"]
    port = LukeTokenizer.from_pretrained(folder, add_prefix_space=True)
    vectors = []
    for sentence, span in mentions:
        ids, positions = authors_inputs(folder, sentence, span)
        ported = port(sentence, entity_spans=[span])
        assert ported["input_ids"] == ids and [p for p in ported["entity_position_ids"][0] if p >= 0] == positions
        padded = positions + [-1] * (MAX_MENTION_LENGTH - len(positions))
        with torch.no_grad():
            entity = luke(input_ids=torch.tensor([ids]), entity_ids=torch.tensor([[mask_id]]),
                          entity_position_ids=torch.tensor([[padded]]),
                          entity_attention_mask=torch.tensor([[1]])).entity_last_hidden_state[0, 0]  # fmt: skip
        head = torch.tanh(entity @ state["mlp.dense.weight"].T + state["mlp.dense.bias"])
        vectors.append(F.normalize(head, dim=-1).numpy())
    return np.stack(vectors)
