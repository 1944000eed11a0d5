"""The int8 ONNX Runtime encoder path (issue 47): spec parsing, cache key, the missing-runtime error, and vectors close
to the torch encoder's on a few names (skipped where onnxruntime is not installed)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from phrasezoo.encoders import MissingRuntimeError, load_encoder
from phrasezoo.encoders.backends import require_runtime, split_backend
from phrasezoo.encoders.onnx_int8 import cache_key, encoding_of

HAS_RUNTIME = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
NAMES = ["International Business Machines", "IBM", "New York City", "NYC", "Interstate 165", "2012 Wisconsin Badgers"]


def test_spec_suffix_selects_the_backend():
    assert split_backend("baseline:minilm-l6@onnx-int8") == ("baseline:minilm-l6", "onnx-int8")
    assert split_backend("baseline:minilm-l6@torch") == ("baseline:minilm-l6", "torch")
    assert split_backend("baseline:minilm-l6") == ("baseline:minilm-l6", "torch")
    assert split_backend("outputs/a@b/model") == ("outputs/a@b/model", "torch")  # an @ inside a path is no suffix
    with pytest.raises(ValueError, match="Unknown encoder backend"):
        split_backend("baseline:minilm-l6@int4")


def test_cache_key_separates_models_revisions_and_backends():
    key = cache_key("baseline:minilm-l6@onnx-int8", "sha256:53aa51172d14")
    assert key != cache_key("baseline:minilm-l6@onnx-int8", "sha256:000000000000")
    assert key != cache_key("baseline:other@onnx-int8", "sha256:53aa51172d14")
    assert "onnxruntime" in key and "torch" in key and "/" not in key and ":" not in key


def test_missing_runtime_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime -> ImportError
    with pytest.raises(MissingRuntimeError, match=r"(?s)pip install onnxruntime==.*hybrid:baseline:minilm-l6"):
        require_runtime()
    with pytest.raises(MissingRuntimeError, match="@onnx-int8"):
        load_encoder("baseline:minilm-l6@onnx-int8", progress=False)


def test_fast_backend_refuses_non_transformer_baselines():
    with pytest.raises(ValueError, match="transformer baselines only"):
        load_encoder("baseline:char-jaccard@onnx-int8", progress=False)


@pytest.mark.skipif(not HAS_RUNTIME, reason="onnxruntime/onnx not installed (core dependencies)")
def test_int8_vectors_match_torch_and_get_their_own_name_and_cache(one_thread):
    from phrasezoo.resources import cache_dir

    fast = load_encoder("baseline:minilm-l6@onnx-int8", progress=False)
    torch_encoder = load_encoder("baseline:minilm-l6", progress=False)
    a, b = fast.encode(NAMES), torch_encoder.encode(NAMES)
    assert a.shape == b.shape == (len(NAMES), 384) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert np.einsum("ij,ij->i", a, b).min() > 0.99  # int8 weights and tokens: close to, not equal to, fp32
    assert (a @ a.T).argmax(1).tolist() == (b @ b.T).argmax(1).tolist()
    assert fast.name == "baseline:minilm-l6@onnx-int8" and "onnx-int8" in fast.revision
    assert fast.revision != torch_encoder.revision  # vector caches keyed on (name, revision) keep them apart
    assert fast.path.is_file() and cache_dir() in fast.path.parents
    assert not [p for p in fast.path.parent.iterdir() if p != fast.path]  # no temporary file left behind
    again = load_encoder("baseline:minilm-l6@onnx-int8", progress=False)  # the cached export is reused
    assert again.path == fast.path
    np.testing.assert_allclose(again.encode(NAMES), a, atol=1e-6)


@pytest.mark.skipif(not HAS_RUNTIME, reason="onnxruntime/onnx not installed")
def test_an_int8_vector_depends_on_its_string_alone(one_thread):
    """Activations are scaled per token, so a batch-mate (here one that pads every other string) changes nothing
    beyond float noise (rule 30: at most 1e-5)."""
    fast = load_encoder("baseline:minilm-l6@onnx-int8", progress=False)
    together = fast._encode(NAMES + ["a much longer name that pads every other string in its batch"])
    for i, name in enumerate(NAMES):
        np.testing.assert_allclose(fast._encode([name])[0], together[i], atol=1e-5)


@pytest.mark.skipif(not HAS_RUNTIME, reason="onnxruntime/onnx not installed")
def test_per_token_quantisation_matches_its_definition(tmp_path):
    """One MatMul rewritten: weights int8 per output channel, each input row scaled by its own range."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from phrasezoo.encoders.onnx_int8 import cpu_session, quantise_per_token

    rng = np.random.default_rng(0)
    w = rng.normal(size=(16, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "one",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, None, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None, 8])],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "fp32.onnx"))
    assert quantise_per_token(tmp_path / "fp32.onnx", tmp_path / "int8.onnx") == 1
    x = rng.normal(size=(2, 3, 16)).astype(np.float32) * np.array([1, 10, 100], dtype=np.float32)[None, :, None]
    got = cpu_session(tmp_path / "int8.onnx", threads=1).run(None, {"x": x})[0]
    w_scale = np.abs(w).max(0) / 127
    x_scale = np.abs(x).max(-1, keepdims=True) / 127
    expected = (np.round(x / x_scale) @ np.round(w / w_scale)) * w_scale * x_scale
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, x @ w, rtol=0.05, atol=0.05 * np.abs(x @ w).max())


@pytest.mark.skipif(not HAS_RUNTIME, reason="onnxruntime/onnx not installed")
def test_integer_matmuls_as_floats_are_exact_on_any_cpu(tmp_path):
    """The fallback for CPUs whose integer GEMM saturates (AVX2 without VNNI): the same integers multiplied as floats
    give the integer product exactly, here on the worst case of the saturation (codes 255 against weights 127)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from phrasezoo.encoders.onnx_int8 import float_integer_matmuls, integer_gemm_is_exact

    rng = np.random.default_rng(1)
    w = rng.integers(-127, 128, size=(384, 5)).astype(np.int8)
    w[:, 0] = 127
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w", "zero"], ["y_int"]),
         helper.make_node("Cast", ["y_int"], ["y"], to=TensorProto.FLOAT)], "one",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [None, 384])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 5])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero")],
    )  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "int8.onnx"))
    x = rng.integers(0, 256, size=(3, 384)).astype(np.uint8)
    x[0] = 255
    session = ort.InferenceSession(float_integer_matmuls(tmp_path / "int8.onnx"), providers=["CPUExecutionProvider"])
    expected = (x.astype(np.int64) - 128) @ w.astype(np.int64)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected.astype(np.float32))
    assert isinstance(integer_gemm_is_exact(), bool)


def test_a_revision_says_how_its_vectors_were_encoded():
    assert encoding_of("sha256:53aa51172d14+onnx-int8-ort1.32.0-r1") == "batches of strings (ENCODE_VERSION 1)"
    assert encoding_of("sha256:53aa51172d14+onnx-int8-ort1.32.0-r1-e2") == "one string per run"
    assert encoding_of("sha256:53aa51172d14+onnx-int8-ort1.32.0-r2-e3") == "batches, activations scaled per token"
