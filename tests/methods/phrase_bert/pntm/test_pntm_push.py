"""A saved PNTM (no config.json: ``pntm.json`` + ``pntm.safetensors``) is a publishable kind: ``push_folder`` sends
exactly its two files to the local Hub (:mod:`tests.hub.hub_server`), and what comes back loads with ``PNTM.load``."""

from __future__ import annotations

import numpy as np
import pytest

from phrasezoo.hub.push import plan_push
from phrasezoo.methods.phrase_bert.pntm import PNTM
from tests.hub.hub_server import FakeHub, hub_python

DOWNLOAD = """
from huggingface_hub import HfApi, snapshot_download
from phrasezoo.methods.phrase_bert.pntm import PNTM
from phrasezoo.hub.push import push_folder
result = push_folder(folder, repo_id)
local = snapshot_download(repo_id)
model = PNTM.load(local)
out = {"committed": result.committed, "files": sorted(HfApi().list_repo_files(repo_id)),
       "topics": model.network.topics.detach().numpy().tolist(), "terms": model.vocabulary.terms}
"""


@pytest.mark.slow  # the child process imports the topic model (torch): about 10 s
def test_a_saved_pntm_pushes_its_two_files_and_loads_back(tmp_path, toy_encoder, toy_corpus, toy_vocabulary):
    documents, _ = toy_corpus
    folder = tmp_path / "pntm-toy"
    model = PNTM(encoder=toy_encoder, n_topics=3, epochs=2, seed=0, progress=False).fit(documents[:30], toy_vocabulary)
    model.save(folder)
    (folder / ".pntm-scratch").mkdir()  # an interrupted save leaves its scratch folder behind
    (folder / ".pntm-scratch" / "pntm.json").write_text("{}")
    plan = plan_push(folder)
    assert plan.kind.name == "topic model" and plan.files == ["pntm.json", "pntm.safetensors"]

    with FakeHub() as hub:
        out = hub_python(hub, tmp_path / "hf", DOWNLOAD, folder=str(folder), repo_id="phrasezoo-test/pntm-toy")
    assert out["committed"] and out["files"] == [".gitattributes", "pntm.json", "pntm.safetensors"]
    np.testing.assert_array_equal(np.asarray(out["topics"], dtype=np.float32), model.network.topics.detach().numpy())
    assert out["terms"] == model.vocabulary.terms
