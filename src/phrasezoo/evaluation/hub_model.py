"""``phrasezoo evaluate --model <org/name>``: a Hub repo id of a zoo export, or of a published checkpoint that
``phrasezoo convert`` knows (``Method.releases``), resolved to a local model folder.

A zoo export is downloaded (``huggingface_hub.snapshot_download``: ``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_OFFLINE``
and the Hub cache apply) and read in place. An authors' checkpoint is downloaded into the Hub cache and converted in
memory by its release's converter (what ``phrasezoo convert`` writes out; the evaluation workflow does not import the
hub workflow), then evaluated like any export; its results go to
``results/<method>/authors-<name>.json`` (:func:`authors_results_path`), the file the zoo table's "authors'
checkpoint" column and ``phrasezoo report --authors`` read. Without a network (and nothing cached) it fails with one
line saying what to do.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from phrasezoo.core.errors import InputError
from phrasezoo.core.recipes import RESULTS_DIR, results_file_name
from phrasezoo.zoo.registry import get_method, list_methods
from phrasezoo.zoo.releases import Release

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def is_repo_id(spec: str) -> bool:
    """Whether a model spec names a Hub repo (``org/name``) rather than a local folder, recipe or baseline."""
    return bool(REPO_ID.match(spec)) and not Path(spec).expanduser().exists()


def release_of(repo_id: str) -> tuple[str, Release] | None:
    """``(method, release)`` of a published checkpoint that ``phrasezoo convert`` knows, else ``None``."""
    for method in list_methods():
        for release in get_method(method).releases:
            if release.repo_id == repo_id:
                return method, release
    return None


def authors_results_path(repo_id: str) -> Path:
    """Where the results of an authors' checkpoint go: ``results/<method>/authors-<name>.json``."""
    found = release_of(repo_id)
    if found is None:
        raise ValueError(f"{repo_id} is not a published checkpoint that `phrasezoo convert` knows.")
    return RESULTS_DIR / found[0].replace("_", "-") / f"authors-{results_file_name(repo_id)}.json"


def _download(repo_id: str, revision: str | None) -> Path:
    """The repo's snapshot folder; a repo that cannot be reached or found is one :class:`InputError` line."""
    from huggingface_hub import snapshot_download  # lazy: keeps huggingface_hub off 'phrasezoo --help'

    try:
        return Path(snapshot_download(repo_id, revision=revision))
    except Exception as err:  # huggingface_hub raises many kinds here (offline, not found, connection, HTTP)
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        why = "not in the Hub cache (HF_HUB_OFFLINE is set)" if offline else f"{type(err).__name__}"
        raise InputError(
            f"cannot download {repo_id} from the Hub ({why}): with a network, run again; without one, set "
            f"HF_HUB_OFFLINE=1 once it is in the Hub cache, or pass a local folder (`phrasezoo convert <method> "
            f"<folder> <out>` for an authors' checkpoint, then `--model <out>`)."
        ) from None


def resolve_hub_model(repo_id: str, revision: str | None = None) -> Any:
    """What to evaluate for ``repo_id``: its snapshot folder (a zoo export), or, for an authors' checkpoint, the zoo
    model its release converts the snapshot into (in memory, ``config.converted_from`` naming the source)."""
    found = release_of(repo_id)
    snapshot = _download(repo_id, revision)
    if found is None:
        return snapshot
    model, _ = found[1].convert(snapshot)
    model.config.converted_from = {"repo_id": repo_id, "revision": snapshot.name}
    return model.eval()
