"""Rounds 7 and 8's screens (docs/experiments/matching.md, rules 29 and 30): which int8 scheme keeps a string's vector
independent of its batch-mates, how close it stays to the fp32 vector, and how fast it encodes, on one CPU thread.

The strings are the first 4,000 left names of the AutoFJ dev-10 tables (dev only; no test split is read). Every
scheme runs the same all-MiniLM-L6-v2 export with masked mean pooling (``phrasezoo.encoders.onnx_int8``):

* ``dynamic int8, batches``: ONNX Runtime's dynamic quantisation, batches of 128 strings in length order (the int8
  option until round 7): the activations of each MatMul are scaled by the range of the whole batch;
* ``dynamic int8, one string per run``: the same model, one string per run (the int8 option in round 7);
* ``per-token int8, batches``: int8 weights per output channel and each token's activations scaled by their own range
  (``onnx_int8.quantise_per_token``, round 8), batches of 128 as above;
* ``static int8 (<method>)``: fixed activation ranges calibrated on the last 1,000 dev-10 left names;
* ``MatMulNBits 8-bit``: 8-bit block-quantised weights with int8 activations per block of each row
  (``accuracy_level`` 4); needs the ``onnx_ir`` package, and is left out without it.

For each: seconds to encode the 4,000 names, the cosine with the torch fp32 vectors (mean, 1st percentile, min) and
the largest difference between a string's vector in its batch and alone (0 means batch-independent).

    OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/int8_screens.py
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path("results/matching/experiments/int8-screens.json")
STRINGS, CALIBRATION, BATCH = 4000, 1000, 128


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def encode(run, tokenizer, texts: list[str], per_string: bool) -> tuple[np.ndarray, float]:
    """Vectors of ``texts`` by ``run(token_rows) -> pooled``, one string per run (tokenized once, as the int8 option
    does) or length-ordered batches of 128 (tokenized per batch, padded)."""
    start, out = time.perf_counter(), np.zeros((len(texts), 384), dtype=np.float32)
    if per_string:
        tokens = tokenizer(texts)
        for i in range(len(texts)):
            out[i] = run({k: [v[i]] for k, v in tokens.items()})[0]
    else:
        order = np.argsort([-len(ids) for ids in tokenizer(texts)["input_ids"]], kind="stable")
        for s in range(0, len(texts), BATCH):
            idx = order[s : s + BATCH]
            out[idx] = run(tokenizer([texts[i] for i in idx], padding=True))
    return out, time.perf_counter() - start


def screen(path: Path, tokenizer, texts: list[str], reference: np.ndarray, per_string: bool) -> dict:
    from phrasezoo.encoders.onnx_int8 import cpu_session

    model = cpu_session(path, threads=1)
    names = [i.name for i in model.get_inputs()]

    def run(rows) -> np.ndarray:
        return model.run(None, {k: np.asarray(rows[k], dtype=np.int64) for k in names})[0]

    vectors, seconds = encode(run, tokenizer, texts, per_string)
    alone = np.stack([run(tokenizer([t]))[0] for t in texts[:300]])
    cos, apart = cosine(vectors, reference), cosine(alone, vectors[:300])
    return {"seconds": round(seconds, 2), "cosine_fp32": {"mean": round(float(cos.mean()), 4),
            "p01": round(float(np.quantile(cos, 0.01)), 4), "min": round(float(cos.min()), 4)},
            "batch_dependence": float(np.abs(alone - vectors[:300]).max()),
            "alone_vs_batch_cosine": {"mean": round(float(apart.mean()), 4), "min": round(float(apart.min()), 4)}}  # fmt: skip


def static_models(fp32: Path, tokenizer, calibration: list[str], folder: Path) -> dict[str, Path]:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([tokenizer(calibration[i : i + 50], padding="max_length", truncation=True,
                                           max_length=24, return_tensors="np")
                                 for i in range(0, len(calibration), 50)])  # fmt: skip

        def get_next(self):
            batch = next(self.batches, None)
            return None if batch is None else {k: np.asarray(v, dtype=np.int64) for k, v in batch.items()}

    out = {}
    for method in (CalibrationMethod.MinMax, CalibrationMethod.Percentile, CalibrationMethod.Entropy):
        out[method.name] = folder / f"static-{method.name}.onnx"
        quantize_static(str(fp32), str(out[method.name]), Reader(), quant_format=QuantFormat.QOperator,
                        per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        op_types_to_quantize=["MatMul"], calibrate_method=method,
                        extra_options={"CalibPercentile": 99.999})  # fmt: skip
    return out


def nbits_model(fp32: Path, folder: Path) -> Path | None:
    try:
        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    except ImportError:
        return None
    quantizer = MatMulNBitsQuantizer(onnx.load(str(fp32)), bits=8, block_size=32, is_symmetric=True, accuracy_level=4)
    quantizer.process()
    quantizer.model.save_model_to_file(str(folder / "nbits8.onnx"), False)
    return folder / "nbits8.onnx"


def main() -> None:
    import torch

    from phrasezoo.encoders import load_encoder
    from phrasezoo.encoders.onnx_int8 import export_int8, quantise_per_token
    from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj

    torch.set_num_threads(1)
    names = [str(t) for table in read_autofj(autofj_names("dev")) for t in table.left]
    texts, calibration = names[:STRINGS], names[-CALIBRATION:]
    baseline = load_encoder("baseline:minilm-l6", progress=False)
    start = time.perf_counter()
    reference = baseline._encode(texts)
    rows = {"torch fp32, batches": {"seconds": round(time.perf_counter() - start, 2)}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export_int8(baseline.model.name_or_path, folder / "int8.onnx", fp32_target=folder / "fp32.onnx",
                    scheme="dynamic")  # fmt: skip
        tokenizer = baseline.tokenizer
        for label, per_string in (("dynamic int8, batches", False), ("dynamic int8, one string per run", True)):
            rows[label] = screen(folder / "int8.onnx", tokenizer, texts, reference, per_string)
        quantise_per_token(folder / "fp32.onnx", folder / "per-token.onnx")
        rows["per-token int8, batches"] = screen(folder / "per-token.onnx", tokenizer, texts, reference, False)
        for method, path in static_models(folder / "fp32.onnx", tokenizer, calibration, folder).items():
            rows[f"static int8 ({method}), batches"] = screen(path, tokenizer, texts, reference, False)
        nbits = nbits_model(folder / "fp32.onnx", folder)
        if nbits is not None:
            rows["MatMulNBits 8-bit, batches"] = screen(nbits, tokenizer, texts, reference, False)
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "strings": len(texts),
              "calibration": f"the last {len(calibration)} AutoFJ dev-10 left names", "rows": rows,
              "command": "OMP_NUM_THREADS=1 .venv/bin/python experiments/matching/int8_screens.py"}  # fmt: skip
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(render(report))
    print(f"wrote {RESULTS}", file=sys.stderr)


def render(report: dict) -> str:
    """The screens' table of docs/experiments/matching.md (round 7)."""
    torch_seconds = report["rows"]["torch fp32, batches"]["seconds"]
    lines = ["| scheme | seconds | speed vs torch | cosine with fp32: mean / 1st pct. / min | batch dependence "
             "(largest difference) | cosine, alone vs in its batch: mean / min |", "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, row in report["rows"].items():
        if "cosine_fp32" not in row:
            lines.append(f"| {name} | {row['seconds']:.2f} | 1.00x | 1 | – | – |")
            continue
        c, a = row["cosine_fp32"], row["alone_vs_batch_cosine"]
        lines.append(f"| {name} | {row['seconds']:.2f} | {torch_seconds / row['seconds']:.2f}x | "
                     f"{c['mean']:.4f} / {c['p01']:.4f} / {c['min']:.4f} | {row['batch_dependence']:.1e} | "
                     f"{a['mean']:.4f} / {a['min']:.4f} |")  # fmt: skip
    return "\n".join(lines) + (
        f"\n\nEncoding {report['strings']:,} AutoFJ dev-10 left names on one thread; batch dependence: the largest "
        "difference between a string's vector in its batch and alone, and their cosine (first 300 names). Static "
        "calibration on "
        f"{report['calibration']}. From `{RESULTS}` (`{report['command']}`, {report['created'][:10]})."
    )


if __name__ == "__main__":
    main()
