"""sentence-transformers export: a fresh process (phrasezoo blocked, no network) gets the zoo model's embeddings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from phrasezoo.integrations.sentence_transformers import export_sentence_transformers, main
from phrasezoo.zoo.registry import get_method

PHRASES = ["The New York Times", "NYTimes", "New-York Daily Times", "very difficult", "ab", "Famotidine 20 mg tablets"]


def encode_in_fresh_process(folder, phrases, tmp_path, trust_remote_code: bool) -> np.ndarray:
    """``SentenceTransformer(folder).encode(phrases)`` in a new interpreter where phrasezoo cannot be imported."""
    out = tmp_path / "st.npy"
    script = textwrap.dedent(
        f"""
        import importlib.abc, socket, sys
        class BlockPhrasezoo(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "phrasezoo" or name.startswith("phrasezoo."):
                    raise ImportError("phrasezoo is blocked in this test")
        sys.meta_path.insert(0, BlockPhrasezoo())
        def no_network(*args, **kwargs):
            raise OSError("network access attempted")
        socket.socket.connect = no_network
        socket.create_connection = no_network
        import numpy as np
        from sentence_transformers import SentenceTransformer
        model = SentenceTransformer({str(folder)!r}, device="cpu", trust_remote_code={trust_remote_code})
        np.save({str(out)!r}, model.encode({phrases!r}, batch_size=4, convert_to_numpy=True))
        assert not any(m == "phrasezoo" or m.startswith("phrasezoo.") for m in sys.modules)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return np.load(out)


@pytest.mark.parametrize("method", ["pearl", "phrase_bert"])
def test_tiny_model_export_matches_in_a_fresh_process(method, tmp_path):
    model = get_method(method).tiny_model().eval()
    folder = export_sentence_transformers(model, tmp_path / "st")
    expected = model.encode(PHRASES, batch_size=2)
    # Phrase-BERT is a stock Transformer + Pooling + Normalize pipeline: no custom code needed to load it
    got = encode_in_fresh_process(folder, PHRASES, tmp_path, trust_remote_code=method == "pearl")
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=1e-5)
    modules = json.loads((folder / "modules.json").read_text())
    if method == "pearl":
        assert modules[0]["type"] == "phrasezoo_st_modules.PearlEncoder"
        assert got.shape[1] == model.config.phrase_dim + model.config.char_proj_dim  # character part included
    else:
        assert [m["type"].rsplit(".", 1)[1] for m in modules] == ["Transformer", "Pooling", "Normalize"]


def test_pearl_export_is_still_an_automodel_folder(tmp_path):
    from transformers import AutoModel

    model = get_method("pearl").tiny_model().eval()
    folder = export_sentence_transformers(model, tmp_path / "st")
    loaded = AutoModel.from_pretrained(folder, trust_remote_code=True)
    np.testing.assert_allclose(loaded.encode(PHRASES), model.encode(PHRASES), atol=1e-6)


def test_real_minilm_pearl_matches_on_autofj_titles(tmp_path):
    """A PEARL model on the real all-MiniLM-L6-v2 weights (character encoder untrained), 200 real titles."""
    from phrasezoo.evaluation.tasks.autofj import read_autofj
    from phrasezoo.models.pearl.modeling_pearl import PearlModel
    from phrasezoo.resources import resolve_backbone

    model = PearlModel.from_backbone(resolve_backbone("minilm-l6"), char_weight=0.25).eval()
    titles = read_autofj(["ShoppingMall"])[0].left[:200]
    folder = export_sentence_transformers(model, tmp_path / "pearl-minilm-st")
    got = encode_in_fresh_process(folder, titles, tmp_path, trust_remote_code=True)
    np.testing.assert_allclose(got, model.encode(titles), atol=1e-5)


def test_uctopic_is_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match="UCTopic embeds a phrase inside its sentence"):
        export_sentence_transformers(get_method("uctopic").tiny_model(), tmp_path / "st")


def test_existing_folder_needs_overwrite(tmp_path):
    model = get_method("phrase_bert").tiny_model()
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="overwrite"):
        export_sentence_transformers(model, tmp_path / "st")
    export_sentence_transformers(model, tmp_path / "st", overwrite=True)
    assert not (tmp_path / "st" / "keep.txt").exists() and (tmp_path / "st" / "modules.json").exists()


def test_command_line_exports_a_zoo_folder(tmp_path, capsys):
    model = get_method("pearl").tiny_model()
    model.save_pretrained(tmp_path / "zoo")
    model.tokenizer.save_pretrained(tmp_path / "zoo")
    (tmp_path / "zoo" / "README.md").write_text("# card")
    assert main([str(tmp_path / "zoo"), "--output", str(tmp_path / "st")]) == 0
    assert "trust_remote_code=True" in capsys.readouterr().out
    assert (tmp_path / "st" / "README.md").read_text() == "# card"
    assert main([str(tmp_path / "missing"), "--output", str(tmp_path / "x")]) == 2


def test_phrasezoo_export_format_sentence_transformers(tmp_path, monkeypatch, capsys):
    """`phrasezoo export <recipe> --format sentence-transformers` (the format comes from an entry point)."""
    from phrasezoo.cli import main as cli_main

    recipe = Path(__file__).resolve().parents[2] / "hub_configs" / "phrase-bert-mini.yaml"
    monkeypatch.chdir(tmp_path)
    assert cli_main(["export", str(recipe), "--format", "sentence-transformers"]) == 2  # nothing exported yet
    assert "holds no exported model" in capsys.readouterr().err
    model = get_method("phrase_bert").tiny_model().eval()
    model.save_pretrained(tmp_path / "outputs" / "phrase-bert-mini")
    model.tokenizer.save_pretrained(tmp_path / "outputs" / "phrase-bert-mini")
    assert cli_main(["export", str(recipe), "--format", "sentence-transformers"]) == 0
    folder = tmp_path / "outputs" / "phrase-bert-mini-sentence-transformers"
    assert (folder / "modules.json").exists()
    from sentence_transformers import SentenceTransformer

    got = SentenceTransformer(str(folder), device="cpu").encode(PHRASES)
    np.testing.assert_allclose(got, model.encode(PHRASES), atol=1e-5)
    assert cli_main(["export", str(recipe), "--format", "sentence-transformers"]) == 2  # exists: needs --overwrite
    assert cli_main(["export", str(recipe), "--format", "sentence-transformers", "--overwrite"]) == 0
