"""A faster CPU path for mean-pooling encoders (issue 47): the model exported to ONNX, its weights quantised to int8.

``baseline:minilm-l6@onnx-int8`` (any ``baseline:<model>`` spec takes the suffix; ``@torch`` is the plain path) loads
the same tokenizer and pooling as :class:`~phrasezoo.encoders.base.MeanPoolingEncoder` but runs the transformer in
ONNX Runtime with dynamic int8 quantisation of every MatMul (per-channel weights; activations quantised per run, and
one string per run: see ``_encode``). On one CPU thread it encodes about 2x as many strings per second as the torch
fp32 model; its vectors keep a cosine of about 0.99 with the fp32 ones (the quality cost on the matching benchmarks:
``docs/experiments/matching.md``, rules 14 and 29).

The exported and quantised model is built once (a few seconds) and cached under
``<cache>/onnx/<model>-<revision>-<versions>/model-int8.onnx``, keyed by the model's weights and the versions of
torch, transformers, onnx and onnxruntime that made it; it is written to a temporary file and renamed, so a reader
never sees half a file. The encoder's name carries the suffix (``baseline:minilm-l6@onnx-int8``) and its revision the
backend, so caches keyed on the encoder (``benchmarks/matching_vectors.py``) keep int8 vectors apart.

Token vectors (``encode_tokens``, mentions in context) still come from the torch model: only ``encode`` is int8.

The runtime is optional: ``pip install 'phrasezoo[fast]'`` (onnxruntime and onnx, CPU wheels; no torch, no CUDA).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np

from .base import DEFAULT_BATCH_SIZE, MeanPoolingEncoder, show_progress

BACKENDS = ("torch", "onnx-int8")
RECIPE_VERSION = 1  # bump when the export or quantisation settings change: old cache entries are then ignored
ENCODE_VERSION = 2  # 1: batches of strings (vectors depended on batch-mates); 2: one string per run
ENCODINGS = {1: "batches of strings (ENCODE_VERSION 1)", 2: "one string per run"}
INSTALL_HINT = "pip install 'phrasezoo[fast]'  (or: pip install onnxruntime==1.32.0 onnx==1.23.2)"


class MissingRuntimeError(ImportError):
    """The ``onnx-int8`` backend was asked for but ONNX Runtime (or onnx, to build the model) is not installed."""


def split_backend(spec: str) -> tuple[str, str]:
    """``"baseline:minilm-l6@onnx-int8"`` -> ``("baseline:minilm-l6", "onnx-int8")``; no suffix -> ``"torch"``."""
    base, at, backend = spec.rpartition("@")
    if not at or not base or "/" in backend:
        return spec, "torch"
    if backend not in BACKENDS:
        raise ValueError(f"Unknown encoder backend {backend!r} in {spec!r}; use one of {', '.join(BACKENDS)}.")
    return base, backend


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def require_runtime(export: bool = False):
    """Import onnxruntime (and onnx when the model has to be built), or say how to install them."""
    try:
        import onnxruntime

        if export:
            import onnx  # noqa: F401  (the quantiser reads and writes onnx protos)
    except ImportError as error:
        raise MissingRuntimeError(
            f"The onnx-int8 encoder backend needs ONNX Runtime ({error.name} is not installed). Install it with:\n"
            f"  {INSTALL_HINT}\nor use the torch backend (drop the '@onnx-int8' suffix)."
        ) from error
    return onnxruntime


def encoding_of(revision: str) -> str:
    """How an int8 encoder with this revision encoded: its ``-e<N>`` suffix (none before ENCODE_VERSION 2)."""
    version = re.search(r"-e(\d+)$", revision)
    return ENCODINGS[int(version.group(1)) if version else 1]


def cpu_session(path: Path, threads: int):
    """An ONNX Runtime CPU session on ``threads`` intra-op threads (one inter-op thread)."""
    ort = require_runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def cache_key(name: str, revision: str | None) -> str:
    """The cache folder name of an exported model: the model, its weights and every version that shapes the file."""
    versions = "-".join(f"{p}{_version(p)}" for p in ("torch", "transformers", "onnx", "onnxruntime"))
    raw = f"{name}-{revision or 'norev'}-{versions}-r{RECIPE_VERSION}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)


def export_int8(model_path: str, target: Path, fp32_target: Path | None = None) -> None:
    """Export the transformer with masked mean pooling to ONNX and quantise it to int8, written atomically; with
    ``fp32_target`` the unquantised export is kept there too (for studies of other quantisation schemes)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

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
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
        if fp32_target is not None:
            os.replace(fp32, fp32_target)
        os.replace(int8, target)


class OnnxInt8Encoder(MeanPoolingEncoder):
    """:class:`MeanPoolingEncoder` whose ``encode`` runs an int8 ONNX Runtime copy of the model (see the module)."""

    def __init__(
        self,
        model_name_or_path: str,
        name: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int | None = None,
        progress: bool = True,
        threads: int | None = None,
    ) -> None:
        import torch

        require_runtime()  # stop with the install hint before the torch model is loaded
        super().__init__(model_name_or_path, name=name, batch_size=batch_size, max_length=max_length, device="cpu",
                         progress=progress)  # fmt: skip
        self.name = f"{self.name}@onnx-int8"
        self.path = self.model_file(model_name_or_path)
        self.revision = f"{self.revision}+onnx-int8-ort{_version('onnxruntime')}-r{RECIPE_VERSION}-e{ENCODE_VERSION}"
        self.session = cpu_session(self.path, threads or torch.get_num_threads())  # as torch would (OMP_NUM_THREADS)
        self.input_names = [i.name for i in self.session.get_inputs()]

    def model_file(self, model_name_or_path: str) -> Path:
        """The cached int8 model, built on first use."""
        from phrasezoo.resources import cache_dir

        path = cache_dir() / "onnx" / cache_key(self.name, self.revision) / "model-int8.onnx"
        if not path.is_file():
            export_int8(model_name_or_path, path)
        return path

    def _encode(self, texts: list[str]) -> np.ndarray:
        """One run per string. Dynamic quantisation scales a run's activations by their own range, so in a batch a
        string's vector would depend on its batch-mates (cosine about 0.99 between two batchings of the same string,
        as far from each other as from the fp32 vector). One string per run makes each vector a function of its
        string alone, and closer to the fp32 one, at about 1.4x the time of batches: a join gives the same answers
        however its queries are chunked, streamed or spread over Spark partitions (rule 29 in
        docs/experiments/matching.md)."""
        from tqdm.auto import tqdm

        out = np.zeros((len(texts), self.model.config.hidden_size), dtype=np.float32)
        tokens = self.tokenizer(texts, truncation=True, max_length=self.max_length)  # no padding: one row each
        bar = tqdm(total=len(texts), desc=f"encode {self.name}", unit="text", disable=not show_progress(self.progress),
                   leave=False)  # fmt: skip
        for i in range(len(texts)):
            feed = {k: np.asarray(tokens[k][i], dtype=np.int64)[None] for k in self.input_names}
            out[i] = self.session.run(None, feed)[0][0]
            bar.update(1)
        bar.close()
        return out
