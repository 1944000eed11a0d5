"""``phrasezoo convert phrase_bert``: the converted model's unnormalised ``encode`` is the authors' call,
``SentenceTransformer(repo).encode``, and their model without sentence-transformers (mean pooling), with the
release's token limit. (Loading by repo id and the card: ``tests/hub/test_convert.py``.)"""

from __future__ import annotations

import numpy as np
from transformers import AutoModel

from phrasezoo.hub.convert import convert_release
from tests.hub.release_layouts import masked_mean, write_files

from .release_standins import INPUTS, STANDINS


def test_unnormalised_encode_is_sentence_transformers_encode(tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = write_files(tmp_path / "release", STANDINS["whaleloops/phrase-bert"]())
    model = AutoModel.from_pretrained(convert_release("phrase_bert", str(folder), tmp_path / "export"),
                                      trust_remote_code=True)  # fmt: skip
    assert model.config.max_seq_length == 128  # the release's sentence_bert_config.json
    raw = model.encode(INPUTS, normalize=False)
    np.testing.assert_allclose(raw, SentenceTransformer(str(folder), device="cpu").encode(INPUTS), rtol=0, atol=1e-5)
    np.testing.assert_allclose(raw, masked_mean(folder, INPUTS, max_length=128), rtol=0, atol=1e-5)
