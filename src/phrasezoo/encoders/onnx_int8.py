"""A faster CPU path for mean-pooling encoders (issue 47): the model exported to ONNX, its weights quantised to int8.

``baseline:minilm-l6@onnx-int8`` (any ``baseline:<model>`` spec takes the suffix; ``@torch`` is the plain path) loads
the same tokenizer and pooling as :class:`~phrasezoo.encoders.torch_encoders.MeanPoolingEncoder` but runs the transformer in
ONNX Runtime with every weight MatMul in int8: weights per output channel, activations per token
(:func:`quantise_per_token`), so a string's vector is the same in any batch. On one CPU thread it encodes about 2.4x
as many strings per second as the torch fp32 model; its vectors keep a cosine of about 0.997 with the fp32 ones (the
quality cost on the matching benchmarks: ``docs/experiments/matching.md``, rules 14, 29 and 30).

The exported and quantised model is built once (a few seconds) and cached under
``<cache>/onnx/<model>-<revision>-<versions>/model-int8.onnx``, keyed by the model's weights and the versions of
torch, transformers, onnx and onnxruntime that made it; it is written to a temporary file and renamed, so a reader
never sees half a file. The encoder's name carries the suffix (``baseline:minilm-l6@onnx-int8``) and its revision the
backend, so caches keyed on the encoder (``benchmarks/matching_vectors.py``) keep int8 vectors apart.

Token vectors (``encode_tokens``, mentions in context) still come from the torch model: only ``encode`` is int8.

It is the default matcher's encoder (``phrasezoo.match.model.learned.DEFAULT_ENCODER``, rule 30), so onnxruntime and onnx
are core dependencies (CPU wheels; no torch, no CUDA).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from transformers import AutoModel, AutoTokenizer

from phrasezoo.resources import cache_dir

from .backends import require_runtime
from .torch_encoders import MeanPoolingEncoder

RECIPE_VERSION = 2  # bump when the export or quantisation settings change: old cache entries are then ignored
ENCODE_VERSION = 3  # 1: batches, dynamic int8 (vectors depended on batch-mates); 2: one string per run; 3: per token
ENCODINGS = {1: "batches of strings (ENCODE_VERSION 1)", 2: "one string per run",
             3: "batches, activations scaled per token"}  # fmt: skip
SCHEMES = ("per-token", "dynamic")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def encoding_of(revision: str) -> str:
    """How an int8 encoder with this revision encoded: its ``-e<N>`` suffix (none before ENCODE_VERSION 2)."""
    version = re.search(r"-e(\d+)$", revision)
    return ENCODINGS[int(version.group(1)) if version else 1]


def cpu_session(path: Path, threads: int):
    """An ONNX Runtime CPU session on ``threads`` intra-op threads (one inter-op thread). Where this CPU's integer
    GEMM is not exact (:func:`integer_gemm_is_exact`), the model's integer MatMuls run as exact float MatMuls."""
    ort = require_runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    model = str(path) if integer_gemm_is_exact() else float_integer_matmuls(path)
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


@functools.cache
def integer_gemm_is_exact() -> bool:
    """Whether ONNX Runtime's u8 x s8 ``MatMulInteger`` gives exact products on this CPU.

    Without VNNI (AVX2 only: e.g. AMD Zen 2/3, older Intel), its kernel adds pairs of u8 x s8 products in 16 bits,
    which saturate past 32,767: a token's codes near 255 against weights near 127 (our full-range per-token codes)
    come out wrong by up to 80% (seen on an AVX2-only AMD EPYC). Tried once per process on such a worst case."""
    ort = require_runtime()
    codes = np.full((1, 4), 255, dtype=np.uint8)
    weights = np.full((4, 1), 127, dtype=np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w", "zero"], ["y"])], "probe",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return int(session.run(None, {"x": codes})[0][0, 0]) == 4 * 127 * 127


def float_integer_matmuls(path: Path) -> bytes:
    """The model at ``path`` with every ``MatMulInteger`` (u8 codes around a zero point, s8 weights) computed as a
    float MatMul of the same integers: exact while the sums stay below 2**24 (a 1,536-long dot product of codes and
    weights of at most 127 stays below it unless nearly every product is near its maximum), so the vectors are those
    of the integer kernel on a CPU where it is exact. Returned as serialised bytes for ONNX Runtime."""
    model = onnx.load(str(path))
    graph = model.graph
    initializers = {w.name: w for w in graph.initializer}
    nodes, as_float, added = [], {}, []
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            nodes.append(node)
            continue
        codes, weights, zero = node.input[0], node.input[1], node.input[2]
        if codes not in as_float:
            as_float[codes] = f"{codes}_exact"
            zero_value = numpy_helper.to_array(initializers[zero]).astype(np.float32)
            added.append(numpy_helper.from_array(zero_value, f"{codes}_exact_zero"))
            nodes += [helper.make_node("Cast", [codes], [f"{codes}_exact_cast"], to=TensorProto.FLOAT),
                      helper.make_node("Sub", [f"{codes}_exact_cast", f"{codes}_exact_zero"], [as_float[codes]])]  # fmt: skip
        float_weights = f"{weights}_exact"
        added.append(numpy_helper.from_array(numpy_helper.to_array(initializers[weights]).astype(np.float32),
                                             float_weights))  # fmt: skip
        # the product keeps its name; the Cast to float that followed it becomes a float-to-float no-op
        nodes.append(helper.make_node("MatMul", [as_float[codes], float_weights], [node.output[0]]))
    outputs = {n.output[0] for n in nodes if n.op_type == "MatMul"}
    kept_info = [v for v in graph.value_info if v.name not in outputs]
    used = {name for n in nodes for name in n.input}
    kept = [w for w in graph.initializer if w.name in used]  # the int8 weights now live on as floats
    del graph.node[:], graph.value_info[:], graph.initializer[:]
    graph.node.extend(nodes)
    graph.value_info.extend(kept_info)
    graph.initializer.extend(kept + added)
    return model.SerializeToString()


def cache_key(name: str, revision: str | None) -> str:
    """The cache folder name of an exported model: the model, its weights and every version that shapes the file."""
    versions = "-".join(f"{p}{_version(p)}" for p in ("torch", "transformers", "onnx", "onnxruntime"))
    raw = f"{name}-{revision or 'norev'}-{versions}-r{RECIPE_VERSION}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


def quantise_per_token(fp32: Path, target: Path) -> int:
    """Rewrite every MatMul of ``fp32`` whose second input is a 2-D weight into int8 with a scale per token.

    Weights: symmetric int8 per output channel. Activations: each row (one token) is scaled by ``127 / max|x|`` of
    that row alone and stored as uint8 around 128 (ONNX Runtime's fast CPU integer GEMM is u8 x s8); the int32
    product is scaled back per row and per channel. ONNX Runtime's own dynamic quantisation scales a whole input
    tensor by one range, which makes a string's vector depend on its batch-mates (round 7); per-token scales do not.
    Rows that feed several MatMuls (an attention layer's query, key and value) are quantised once. Returns the number
    of MatMuls rewritten.
    """
    model = onnx.load(str(fp32))
    graph = model.graph
    weights = {w.name: w for w in graph.initializer if len(w.dims) == 2}
    constants = {"pt_eps": np.float32(1e-8), "pt_127": np.float32(127.0), "pt_128": np.float32(128.0),
                 "pt_zero": np.uint8(128)}  # fmt: skip
    added = [numpy_helper.from_array(np.array(v), k) for k, v in constants.items()]
    nodes, quantised, replaced, count = [], {}, set(), 0
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)
        replaced.add(node.input[1])
        w_scale = (np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0).astype(np.float32)
        name, x, count = f"pt{count}", node.input[0], count + 1
        added += [numpy_helper.from_array(np.round(w / w_scale).astype(np.int8), f"{name}_w"),
                  numpy_helper.from_array(w_scale, f"{name}_w_scale")]  # fmt: skip
        if x not in quantised:
            q = quantised[x] = f"pt_x{len(quantised)}"
            nodes += [helper.make_node("Abs", [x], [f"{q}_abs"]),
                      helper.make_node("ReduceMax", [f"{q}_abs"], [f"{q}_max"], axes=[-1], keepdims=1),
                      helper.make_node("Max", [f"{q}_max", "pt_eps"], [f"{q}_range"]),
                      helper.make_node("Div", ["pt_127", f"{q}_range"], [f"{q}_inverse"]),
                      helper.make_node("Div", [f"{q}_range", "pt_127"], [f"{q}_scale"]),
                      helper.make_node("Mul", [x, f"{q}_inverse"], [f"{q}_scaled"]),
                      helper.make_node("Round", [f"{q}_scaled"], [f"{q}_rounded"]),
                      helper.make_node("Add", [f"{q}_rounded", "pt_128"], [f"{q}_shifted"]),
                      helper.make_node("Cast", [f"{q}_shifted"], [f"{q}_codes"], to=TensorProto.UINT8)]  # fmt: skip
        q = quantised[x]
        nodes += [helper.make_node("MatMulInteger", [f"{q}_codes", f"{name}_w", "pt_zero"], [f"{name}_int"]),
                  helper.make_node("Cast", [f"{name}_int"], [f"{name}_float"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [f"{name}_float", f"{name}_w_scale"], [f"{name}_channels"]),
                  helper.make_node("Mul", [f"{name}_channels", f"{q}_scale"], [node.output[0]])]  # fmt: skip
    used = {name for node in nodes for name in node.input}
    kept = [w for w in graph.initializer if w.name not in replaced or w.name in used]
    del graph.node[:], graph.initializer[:]
    graph.node.extend(nodes)
    graph.initializer.extend(kept + added)
    onnx.save(model, str(target))
    return count


def export_int8(model_path: str, target: Path, fp32_target: Path | None = None, scheme: str = "per-token") -> None:
    """Export the transformer with masked mean pooling to ONNX and quantise it to int8 (``scheme``: "per-token", see
    :func:`quantise_per_token`, or "dynamic", ONNX Runtime's dynamic quantisation), written atomically; with
    ``fp32_target`` the unquantised export is kept there too (for studies of other quantisation schemes)."""
    if scheme not in SCHEMES:
        raise ValueError(f"Unknown int8 scheme {scheme!r}; use one of {', '.join(SCHEMES)}.")
    require_runtime(export=True)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModel.from_pretrained(model_path, attn_implementation="eager").eval()  # sdpa does not trace
    example = tokenizer(["an example", "a longer example name"], padding=True, return_tensors="pt")
    inputs = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in example]

    class Pooled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            kwargs = dict(zip(inputs, args))
            hidden = self.inner(**kwargs).last_hidden_state
            mask = kwargs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        fp32, int8 = Path(tmp) / "model.onnx", Path(tmp) / "model-int8.onnx"
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and opset notes
            torch.onnx.export(Pooled(model), tuple(example[k] for k in inputs), str(fp32), input_names=inputs,
                              output_names=["pooled"], opset_version=17, dynamo=False,
                              dynamic_axes={**{k: {0: "batch", 1: "tokens"} for k in inputs},
                                            "pooled": {0: "batch"}})  # fmt: skip
        if scheme == "dynamic":  # only the screens use it: its quantiser is imported only for them
            from onnxruntime.quantization import QuantType, quantize_dynamic  # lazy: its quantiser, for the screens

            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
        else:
            quantise_per_token(fp32, int8)
        if fp32_target is not None:
            os.replace(fp32, fp32_target)
        os.replace(int8, target)


class OnnxInt8Encoder(MeanPoolingEncoder):
    """:class:`MeanPoolingEncoder` whose ``encode`` runs an int8 ONNX Runtime copy of the model (see the module)."""

    def __init__(self, model_name_or_path: str, threads: int | None = None, **options: Any) -> None:
        """``options``: :class:`MeanPoolingEncoder`'s (``name``, ``batch_size``, ``max_length``, ``progress``); the
        model runs on the CPU, on ``threads`` intra-op threads (default: torch's count)."""
        require_runtime()  # stop with the install hint before the torch model is loaded
        super().__init__(model_name_or_path, device="cpu", **options)
        self.name = f"{self.name}@onnx-int8"
        self.path = self.model_file(model_name_or_path)
        self.revision = f"{self.revision}+onnx-int8-ort{_version('onnxruntime')}-r{RECIPE_VERSION}-e{ENCODE_VERSION}"
        self.session = cpu_session(self.path, threads or torch.get_num_threads())  # as torch would (OMP_NUM_THREADS)
        self.input_names = [i.name for i in self.session.get_inputs()]

    def model_file(self, model_name_or_path: str) -> Path:
        """The cached int8 model, built on first use."""
        path = cache_dir() / "onnx" / cache_key(self.name, self.revision) / "model-int8.onnx"
        if not path.is_file():
            export_int8(model_name_or_path, path)
        return path

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Length-ordered batches, as the torch path. Each token's activations are quantised by their own range
        (:func:`quantise_per_token`), so a string's vector does not depend on its batch-mates, and a join gives the
        same answers however its queries are chunked, streamed or spread over Spark partitions (rule 30 in
        docs/experiments/matching.md)."""
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        for idx, batch in self._batches(texts, f"encode {self.name}"):
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="np")
            out[idx] = self.session.run(None, {k: np.asarray(enc[k], dtype=np.int64) for k in self.input_names})[0]
        return out
