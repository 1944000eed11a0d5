"""The encoder backends (``baseline:<model>@onnx-int8``; ``@torch`` is the plain path) and what the int8 one needs:
read here without importing torch, onnx or ONNX Runtime, so ``import phrasezoo.encoders`` stays light.
"""

from __future__ import annotations

BACKENDS = ("torch", "onnx-int8")
INSTALL_HINT = "pip install onnxruntime==1.32.0 onnx==1.23.2  (core dependencies of phrasezoo: reinstall it)"


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


def require_runtime(export: bool = False):
    """Import onnxruntime (and onnx when the model has to be built), or say how to install them."""
    try:
        import onnxruntime  # lazy: ONNX Runtime, for the int8 backend only (the error says how to install it)

        if export:
            import onnx  # lazy: the quantiser reads and writes onnx protos (export only)  # noqa: F401
    except ImportError as error:
        raise MissingRuntimeError(
            f"The onnx-int8 encoder backend needs ONNX Runtime ({error.name} is not installed). Install it with:\n"
            f"  {INSTALL_HINT}\nor use the torch backend: drop the '@onnx-int8' suffix, or for the default matcher "
            "model='hybrid:baseline:minilm-l6'."
        ) from error
    return onnxruntime
