"""Tiny random stand-ins of every Hub repository the paper-scale recipes name, with the real repo ids and file layouts.

Models: the real architecture class with a tiny config (hidden 32, 2 layers), random weights in
``model.safetensors``, and a tokenizer built from :data:`WORDS` (WordPiece for the BERT family, a word-level
``tokenizer.json`` for T5). GloVe: a gensim ``KeyedVectors`` file with its ``.vectors.npy`` beside it, as in
``fse/glove-wiki-gigaword-300``. Datasets: parquet files in the real repositories' folders with a ``README.md`` that
declares the configs (``wikimedia/wikipedia`` ``20231101.en/train-*``, ``Salesforce/wikitext``
``wikitext-103-raw-v1/{train,validation,test}-*``, ``sentence-transformers/msmarco-bm25`` ``triplet/train-*``).
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import numpy as np

from tests.training.golden import SENTENCES

DOCUMENTS = [" ".join(SENTENCES[i : i + 3]) for i in range(0, len(SENTENCES), 3)] * 4
WORDS = sorted({w.strip(".,?!'\"").lower() for s in SENTENCES for w in s.split()} - {""})
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
BERT_REPOS = ("intfloat/e5-small-v2", "intfloat/e5-base-v2", "bert-base-uncased")


def _folder_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _wordpiece_tokenizer(folder: Path):
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *".,?!'\"-:;()", *"abcdefghijklmnopqrstuvwxyz0123456789"]
    vocab += [w for w in WORDS if w not in vocab] + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True, model_max_length=512)
    return tokenizer


def bert_repo(seed: int, **sizes) -> dict[str, bytes]:
    """A tiny random ``BertModel`` (its pooler included) with a WordPiece tokenizer over :data:`WORDS`; ``sizes``
    override :data:`TINY`."""
    import torch
    from transformers import BertConfig, BertModel

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = _wordpiece_tokenizer(folder)
        torch.manual_seed(seed)
        config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **{**TINY, **sizes})
        BertModel(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        return _folder_files(folder)


def t5_repo() -> dict[str, bytes]:
    """``prithivida/parrot_paraphraser_on_T5``: a tiny T5 with a word-level tokenizer over :data:`WORDS`."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    words = ["<pad>", "</s>", "<unk>", "paraphrase", ":", *WORDS]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(1)
    config = T5Config(vocab_size=len(words), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                      num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        T5ForConditionalGeneration(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        return _folder_files(Path(tmp))


def glove_repo(dim: int = 300) -> dict[str, bytes]:
    """``fse/glove-wiki-gigaword-300``: ``<name>.model`` and ``<name>.model.vectors.npy`` (gensim KeyedVectors)."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(dim)
    keyed.add_vectors(WORDS, np.random.default_rng(0).standard_normal((len(WORDS), dim)).astype(np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        keyed.save(str(Path(tmp) / "glove-wiki-gigaword-300.model"), sep_limit=0)
        return _folder_files(Path(tmp))


def glove_zip(path: Path, name: str, dim: int = 300) -> None:
    """Stanford's ``glove.*.300d.zip``: one ``<name>.txt`` of ``word v1 ... v300`` lines (cased and lowercase)."""
    import zipfile

    rng = np.random.default_rng(1)
    words = sorted(set(WORDS) | {w.strip(".,?!") for s in SENTENCES for w in s.split()})
    lines = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.standard_normal(dim)) for w in words if w]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}.txt", "\n".join(lines) + "\n")


def _parquet(columns: dict[str, list]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()


def _card(configs: dict[str, dict[str, str]]) -> bytes:
    lines = ["---", "configs:"]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [f"  - split: {split}\n    path: {pattern}" for split, pattern in splits.items()]
    return ("\n".join(lines) + "\n---\n").encode()


def dataset_repos() -> dict[str, dict[str, bytes]]:
    wiki = {"id": [str(i) for i in range(len(DOCUMENTS))], "url": ["https://en.wikipedia.org/wiki/x"] * len(DOCUMENTS),
            "title": [f"T{i}" for i in range(len(DOCUMENTS))], "text": DOCUMENTS}  # fmt: skip
    wikitext = {"text": ["", " = Title = \n", *[f" {s} \n" for s in SENTENCES * 3]]}
    triplets = {"query": [f"what is {w}" for w in WORDS[:24]], "positive": (SENTENCES * 3)[:24],
                "negative": list(reversed(SENTENCES * 3))[:24]}  # fmt: skip
    splits = ("train", "validation", "test")
    return {
        "wikimedia/wikipedia": {"README.md": _card({"20231101.en": {"train": "20231101.en/train-*"}}),
                                "20231101.en/train-00000-of-00041.parquet": _parquet(wiki)},
        "Salesforce/wikitext": {"README.md": _card({"wikitext-103-raw-v1": {s: f"wikitext-103-raw-v1/{s}-*" for s in splits}}),
                                **{f"wikitext-103-raw-v1/{s}-00000-of-00001.parquet": _parquet(wikitext) for s in splits}},
        "sentence-transformers/msmarco-bm25": {"README.md": _card({"triplet": {"train": "triplet/train-*"}}),
                                               "triplet/train-00000-of-00001.parquet": _parquet(triplets)},
    }  # fmt: skip


def model_repos() -> dict[str, dict[str, bytes]]:
    repos = {repo: bert_repo(seed) for seed, repo in enumerate(BERT_REPOS)}
    repos["prithivida/parrot_paraphraser_on_T5"] = t5_repo()
    repos["fse/glove-wiki-gigaword-300"] = glove_repo()
    repos["studio-ousia/luke-base"] = luke_repo()
    return repos


if __name__ == "__main__":
    print(json.dumps({k: sorted(v) for k, v in {**model_repos(), **dataset_repos()}.items()}, indent=1))


def byte_level_bpe(words: list[str]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """RoBERTa-style byte-level BPE vocabulary and merges: ``<s> <pad> </s> <unk>`` (ids 0-3, as RoBERTa), the 256
    byte symbols, each of ``words`` after a space (``Ġword``, merged one character at a time), then ``<mask>``."""
    from tokenizers.pre_tokenizers import ByteLevel

    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"])}
    for char in sorted(ByteLevel.alphabet()):
        vocab.setdefault(char, len(vocab))
    merges: list[tuple[str, str]] = []
    for word in words:
        piece = "\u0120"
        for char in word:
            merges.append((piece, char))
            piece += char
            vocab.setdefault(piece, len(vocab))
    vocab.setdefault("<mask>", len(vocab))
    return vocab, list(dict.fromkeys(merges))


def luke_repo() -> dict[str, bytes]:
    """``studio-ousia/luke-base``: a tiny ``LukeForMaskedLM`` (its MLM head, as the real checkpoint) and a real
    ``LukeTokenizer`` (byte-level BPE over single bytes plus :data:`WORDS` with their merges, and an entity
    vocabulary of LUKE's special entities, ``[MASK]`` at id 2 as in luke-base)."""
    import torch
    from transformers import LukeConfig, LukeForMaskedLM, LukeTokenizer

    vocab, merges = byte_level_bpe(WORDS)
    entities = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}
    tokenizer = LukeTokenizer(vocab=vocab, merges=merges, entity_vocab=entities)
    torch.manual_seed(3)
    config = LukeConfig(vocab_size=len(vocab), entity_vocab_size=len(entities), entity_emb_size=16,
                        max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2, **TINY)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        LukeForMaskedLM(config).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        return _folder_files(Path(tmp))
