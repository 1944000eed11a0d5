"""A sentence-transformers input module that runs a phrasezoo PEARL model: phrase encoder + character encoder.

The sentence-transformers export (``phrasezoo.integrations.sentence_transformers``; PEARL declares this module as its
``Method.sentence_transformers``) copies this file into
the exported folder as ``phrasezoo_st_modules.py`` and names ``phrasezoo_st_modules.PearlEncoder`` in
``modules.json``, so ``SentenceTransformer(folder, trust_remote_code=True)`` loads it without phrasezoo installed.
The same folder is a regular PEARL export as well: ``AutoModel.from_pretrained(folder, trust_remote_code=True)``.

The module's forward is PEARL's own: masked mean pooling of the backbone, L2-normalised, concatenated with the
L2-normalised character-encoder vector weighted by ``config.char_weight``, and normalised again. So the embeddings
are the ones ``PearlModel.encode`` gives, not an approximation; a pure Transformer + Pooling pipeline cannot express
the character encoder, which needs each word's characters and word pieces (computed in ``preprocess``).

Self-contained: imports only the standard library, torch, transformers and sentence_transformers.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import torch
from transformers import AutoModel

try:  # sentence-transformers >= 6
    from sentence_transformers.base.modules import InputModule
except ImportError:  # pragma: no cover - sentence-transformers 5.x
    from sentence_transformers.models import InputModule

FILE_NAME = "phrasezoo_st_modules.py"
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "char_ids", "piece_ids", "word_phrase")


class PearlEncoder(InputModule):
    """PEARL as one sentence-transformers module: ``preprocess`` builds token and character inputs, ``forward``
    returns ``sentence_embedding`` (the PEARL embedding) and ``token_embeddings`` (the backbone's token states)."""

    config_file_name = "phrasezoo_sentence_transformers.json"  # config.json is the PEARL model's own config
    config_keys = ["max_seq_length"]
    save_in_root = True

    def __init__(self, model: Any = None, max_seq_length: int | None = None, trust_remote_code: bool = True) -> None:
        super().__init__()
        if model is None or isinstance(model, (str, os.PathLike)):
            if model is None:
                raise ValueError("PearlEncoder needs a PEARL model or the folder of one.")
            model = AutoModel.from_pretrained(os.fspath(model), trust_remote_code=trust_remote_code)
        if getattr(model.config, "model_type", None) != "phrasezoo-pearl":
            raise ValueError(f"PearlEncoder wraps a PEARL model, got model_type {model.config.model_type!r}.")
        self.auto_model = model.eval()
        self.tokenizer = model.tokenizer
        self.max_seq_length = int(max_seq_length or model.config.max_seq_length)
        model.config.max_seq_length = self.max_seq_length

    def get_sentence_embedding_dimension(self) -> int:
        return int(self.auto_model.config.embedding_dim)

    def get_embedding_dimension(self) -> int:
        return self.get_sentence_embedding_dimension()

    def preprocess(self, inputs, prompt: str | None = None, **kwargs) -> dict[str, torch.Tensor]:
        texts = [(prompt or "") + text for text in inputs]
        self.auto_model.config.max_seq_length = self.max_seq_length
        return self.auto_model.tokenize(texts)

    def tokenize(self, texts, **kwargs) -> dict[str, torch.Tensor]:  # sentence-transformers < 6
        return self.preprocess(texts, **kwargs)

    def forward(self, features: dict[str, torch.Tensor], **kwargs) -> dict[str, torch.Tensor]:
        output = self.auto_model(**{key: features[key] for key in MODEL_INPUTS if key in features})
        features["token_embeddings"] = output.last_hidden_state
        features["sentence_embedding"] = output.embeddings
        return features

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        self.auto_model.save_pretrained(output_path, safe_serialization=True)
        self.tokenizer.save_pretrained(output_path)
        self.save_config(output_path)
        target = os.path.join(output_path, FILE_NAME)
        if os.path.abspath(__file__) != os.path.abspath(target):
            shutil.copyfile(__file__, target)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        trust_remote_code: bool = False,
        **kwargs,
    ) -> PearlEncoder:
        hub = {"token": token, "cache_folder": cache_folder, "revision": revision, "local_files_only": local_files_only}
        folder = cls.load_dir_path(model_name_or_path, subfolder=subfolder, **hub)
        config = cls.load_config(model_name_or_path, subfolder=subfolder, **hub)
        model = AutoModel.from_pretrained(folder, trust_remote_code=trust_remote_code)
        return cls(model=model, max_seq_length=config.get("max_seq_length"), trust_remote_code=trust_remote_code)
