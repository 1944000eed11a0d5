"""``phrasezoo convert uctopic``: the export tokenizes mentions as the authors' call does, keeps only LUKE's special
entities, and a release that differs in what the conversion may leave out (an MLM head, no ``[MASK2]``) still
converts, while a weight missing from it is an error naming the weight. (Equivalence with the authors' forward pass,
the card and loading by repo id: ``tests/hub/test_convert.py``.)"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch
from transformers import AutoModel

from phrasezoo.hub.convert import convert_release
from tests.hub.release_layouts import write_files

from .release_standins import INPUTS, STANDINS, authors_inputs

REPO = "JiachengLi/uctopic-base"


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("uctopic-release")
    folder = write_files(root / "release", STANDINS[REPO]())
    export = convert_release("uctopic", str(folder), root / "export")
    return folder, AutoModel.from_pretrained(export, trust_remote_code=True).eval()


def test_mentions_are_tokenized_as_the_authors_call_does(converted):
    folder, model = converted
    assert model.config.span_tokenization == "segments" and model.config.span_representation == "entity"
    for prepared, (sentence, span) in zip(model.prepare_mentions(INPUTS), INPUTS):
        ids, positions = authors_inputs(folder, sentence, span)
        assert prepared.input_ids == ids and list(range(prepared.span_start, prepared.span_end)) == positions


def test_only_lukes_special_entities_are_kept(converted):
    folder, model = converted
    table = model.backbone.entity_embeddings.entity_embeddings.weight
    release = torch.load(folder / "pytorch_model.bin", weights_only=True)
    torch.testing.assert_close(table, release["luke.entity_embeddings.entity_embeddings.weight"][:4])
    assert model.config.mask_entity_id == 2 and model.config.backbone_config.entity_vocab_size == 4
    assert model.tokenizer.entity_vocab == {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}


def _altered(tmp_path, change) -> tuple:
    files = STANDINS[REPO]()
    state = torch.load(io.BytesIO(files["pytorch_model.bin"]), weights_only=True)
    entity_vocab = json.loads(files["entity_vocab.json"])
    change(state, entity_vocab)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    files.update({"pytorch_model.bin": buffer.getvalue(), "entity_vocab.json": json.dumps(entity_vocab).encode()})
    return write_files(tmp_path / "release", files)


def test_an_mlm_head_and_a_missing_mask2_are_left_out_and_said(converted, tmp_path):
    def change(state, entity_vocab):
        state["lm_head.dense.weight"] = torch.zeros(32, 32)
        del entity_vocab["[MASK2]"]

    folder = _altered(tmp_path, change)
    export = convert_release("uctopic", str(folder), tmp_path / "export")
    card = (export / "README.md").read_text()
    assert "3 of 40 rows kept ([PAD], [UNK], [MASK])" in card and "`lm_head.*`" in card
    model = AutoModel.from_pretrained(export, trust_remote_code=True)
    np.testing.assert_allclose(model.encode(INPUTS), converted[1].encode(INPUTS), rtol=0, atol=1e-5)


def test_a_missing_weight_is_named(tmp_path):
    folder = _altered(tmp_path, lambda state, _: state.pop("mlp.dense.bias"))
    with pytest.raises(ValueError, match="lacks 1 weights of the model, e.g. mlp.dense.bias"):
        convert_release("uctopic", str(folder), tmp_path / "export")
