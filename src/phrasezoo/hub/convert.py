"""Convert the papers' published checkpoints into zoo exports: ``phrasezoo convert <method> <repo id or folder> <out>``.

The releases are declared by the methods (``Method.releases``, :class:`~phrasezoo.zoo.releases.Release`, each with
its ``convert`` function); this module fetches one and writes the export. A repo id is downloaded with
``huggingface_hub.snapshot_download`` (``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_OFFLINE`` and the Hub cache apply; the
revision recorded is the snapshot's commit); a folder is read in place. The export is what ``phrasezoo export``
writes for a trained model: safetensors weights, the config (with ``auto_map`` and the source in
``converted_from``), the model's own code, the tokenizer, and a card (:mod:`phrasezoo.hub.release_card`) that
credits the authors, names the source and its revision and keeps their licence.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import snapshot_download

from phrasezoo.hub.export import write_model_files
from phrasezoo.hub.release_card import write_release_card
from phrasezoo.zoo.registry import get_method, list_methods
from phrasezoo.zoo.releases import Release


@dataclass
class Source:
    """Where a release was read: its folder, the release it is (or copies) and the revision."""

    folder: Path
    release: Release
    revision: str


def releases_of(method: str) -> dict[str, Release]:
    """The published checkpoints of ``method`` by repo id; a ``ValueError`` for a method that declares none."""
    if method not in list_methods():
        raise ValueError(f"Unknown method '{method}'. Known methods: {', '.join(list_methods())}.")
    releases = {release.repo_id: release for release in get_method(method).releases}
    if not releases:
        with_weights = [name for name in list_methods() if get_method(name).releases]
        raise ValueError(
            f"'{method}' has no published checkpoint to convert: the authors of its paper published no weights "
            f"(its docs page says so). Methods with published checkpoints: {', '.join(with_weights)}."
        )
    return releases


def fetch_source(method: str, source: str, revision: str | None = None, source_repo: str | None = None) -> Source:
    """The release of ``method`` at ``source``: a folder read in place, else a Hub repo id downloaded (the snapshot's
    commit is the revision). ``source_repo`` names the release that a folder or a mirror copies; it is needed only
    when the method has several (then the folder alone does not say which)."""
    releases = releases_of(method)
    named = source_repo or (source if source in releases else None)
    if named is None and len(releases) == 1:
        named = next(iter(releases))
    if named not in releases:
        raise ValueError(
            f"Say which published checkpoint {source} is with --source-repo: one of {', '.join(releases)} "
            f"({named!r} is not one of '{method}')."
        )
    folder = Path(source).expanduser()
    if folder.is_dir():
        return Source(folder, releases[named], revision or "unknown (converted from a local folder)")
    if source.startswith((".", "/", "~")) or source.count("/") != 1:
        raise FileNotFoundError(f"{source} is neither a folder nor a Hub repo id (org/name).")
    snapshot = Path(snapshot_download(source, revision=revision))
    return Source(snapshot, releases[named], snapshot.name)


def convert_release(
    method: str,
    source: str,
    output: str | Path,
    revision: str | None = None,
    source_repo: str | None = None,
    repo_id: str | None = None,
    overwrite: bool = False,
) -> Path:
    """Convert the published checkpoint of ``method`` at ``source`` (a repo id or folder) into an export in
    ``output``; ``repo_id`` (default ``your-org/<output name>``) is where the card says it will be published."""
    output = Path(output)
    if output.exists() and any(output.iterdir()) and not overwrite:
        raise FileExistsError(f"{output} exists and is not empty; choose another folder or pass --overwrite.")
    found = fetch_source(method, source, revision, source_repo)
    model, facts = found.release.convert(found.folder)
    model.eval()
    model.config.converted_from = {"repo_id": found.release.repo_id, "revision": found.revision}
    model.config._name_or_path = repo_id or found.release.repo_id
    if getattr(model.config, "backbone_config", None) is not None:
        model.config.backbone_config._name_or_path = found.release.repo_id  # not the local snapshot's path
    if overwrite and output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True, exist_ok=True)
    write_model_files(model, output)
    write_release_card(output, method, found.release, found.revision, repo_id or f"your-org/{output.name}",
                       type(model).__name__, facts)  # fmt: skip
    return output
