"""``phrasezoo convert pearl``: the published checkpoints lack the type head and a character encoder; the export
says so and refuses ``predict_type`` clearly, and a local copy must say which of the two releases it is.
(Equivalence with the authors' use, the card and loading by repo id: ``tests/hub/test_convert.py``.)"""

from __future__ import annotations

import json

import pytest
from transformers import AutoModel

from phrasezoo.hub.convert import convert_release
from tests.hub.release_layouts import write_files

from .release_standins import INPUTS, STANDINS, reference


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("pearl-release")
    folder = write_files(root / "release", STANDINS["Lihuchen/pearl_small"]())
    export = convert_release("pearl", str(folder), root / "export", source_repo="Lihuchen/pearl_small")
    return folder, export


def test_a_local_copy_must_name_its_release(small, tmp_path):
    folder, _ = small
    with pytest.raises(ValueError, match="--source-repo: one of Lihuchen/pearl_small, Lihuchen/pearl_base"):
        convert_release("pearl", str(folder), tmp_path / "out")


def test_the_export_lacks_what_the_release_lacks_and_says_so(small):
    folder, export = small
    model = AutoModel.from_pretrained(export, trust_remote_code=True)
    assert model.char_encoder is None and model.type_head is None
    config = json.loads((export / "config.json").read_text())
    assert config["use_char_encoder"] is False and config["type_labels"] == [] and config["max_seq_length"] == 512
    with pytest.raises(ValueError, match="no phrase-type head"):
        model.predict_type(["The New York Times"])
    card = (export / "README.md").read_text()
    assert "phrase-type head" in card and "character encoder" in card and "PEARL-small, 40M (paper)" in card
    assert abs(model.encode(INPUTS) - reference(folder, INPUTS)).max() < 1e-5
